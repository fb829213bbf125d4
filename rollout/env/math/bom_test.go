package math

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Datasets saved by editors that write a UTF-8 byte-order mark load; lines
// and records that are not objects are described in the file's terms (what
// the line holds, what a record looks like), never in Go's.
func TestDatasetLinesInTheFilesTerms(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const bom = "\ufeff"
	for name, text := range map[string]string{
		"bom.jsonl": bom + `{"question": "1 + 1?", "answer": "2"}` + "\n",
		"bom.json":  bom + `[{"question": "1 + 1?", "answer": "2"}]`,
	} {
		src, err := Load(write(name, text), Fields{})
		if err != nil || src.Len() != 1 || src.Task(0).Answer != "2" {
			t.Errorf("%s: %v", name, err)
		}
	}
	good := `{"question": "q", "answer": "1"}` + "\n"
	for _, tc := range []struct{ name, text, want string }{
		{"array.jsonl", good + `["q", "1"]`, `array.jsonl:2: the line is a JSON array, not a JSON object; each line must be one record, an object such as {"question": "What is 2 + 3?", "answer": "5"}`},
		{"string.jsonl", `"q"`, "string.jsonl:1: the line is a JSON string, not a JSON object"},
		{"number.jsonl", good + good + "42", "number.jsonl:3: the line is a number"},
		{"csvline.jsonl", "question,answer\n", `csvline.jsonl:1: the line is not JSON (it starts with "question,ans")`},
		{"bomlater.jsonl", good + bom + good, `bomlater.jsonl:2: the line is not JSON`},
		{"records.json", `[{"question": "q", "answer": "1"}, ["q", "1"]]`, `records.json: record 1: the record is a JSON array, not an object; a record looks like {"question"`},
		{"empty.jsonl", "", "no records (the file is empty or holds only blank lines)"},
		{"bomonly.jsonl", bom + "\n", "no records (the file is empty"},
	} {
		_, err := Load(write(tc.name, tc.text), Fields{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "interface {}") || strings.Contains(err.Error(), "invalid character")) {
			t.Errorf("%s: Go's terms: %v", tc.name, err)
		}
	}
}

package jsonl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/rollout"
)

func TestBOMAndObjectLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "d.jsonl")
	if err := os.WriteFile(p, []byte(BOM+`{"a": 1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var first string
	if _, err := Tasks("toy", p, func(line int, b string) (rollout.Task, error) {
		first = b
		return rollout.Task{}, nil
	}); err != nil || first != `{"a": 1}` {
		t.Fatalf("a leading byte-order mark: line %q, %v", first, err)
	}
	for line, want := range map[string]string{
		`{"a": 1}`: "",
		`[1, 2]`:   "the line is a JSON array, not a JSON object; each line must be one record, an object such as {…}",
		`"text"`:   "a JSON string",
		`-3`:       "a number",
		`true`:     "a JSON boolean",
		`null`:     "null",
		`a,b,c`:    `not JSON (it starts with "a,b,c")`,
	} {
		err := ObjectLine(line, "{…}")
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", line, err, want)
		}
	}
}

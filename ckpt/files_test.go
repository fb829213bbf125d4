package ckpt

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestJSONRoundTripAndStrictness(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "train_state.json")
	type state struct {
		Step    int            `json:"step"`
		Cursors map[string]int `json:"cursors"`
	}
	in := state{Step: 12, Cursors: map[string]int{"math": 40, "search": 7}}
	if err := SaveJSON(p, in); err != nil {
		t.Fatal(err)
	}
	var out state
	if err := LoadJSON(p, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip: %+v, want %+v", out, in)
	}
	raw, _ := os.ReadFile(p)
	if !strings.HasSuffix(string(raw), "}\n") || !strings.Contains(string(raw), "\n  \"step\": 12") {
		t.Errorf("not indented JSON with a final newline: %q", raw)
	}

	for name, content := range map[string]string{
		"unknown field":  `{"step": 1, "epoch": 2}`,
		"trailing value": `{"step": 1} {"step": 2}`,
		"not JSON":       `step: 1`,
	} {
		bad := filepath.Join(dir, "bad.json")
		if err := os.WriteFile(bad, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		err := LoadJSON(bad, &out)
		if err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: LoadJSON = %v, want an error naming the file", name, err)
		}
	}
}

// WriteFile replaces a file whole and leaves no temporary file behind; a
// missing directory is an error naming the path, not a silent MkdirAll.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.yaml")
	for _, content := range []string{"a: 1\nb: 2\n", "a: 3\n"} {
		if err := WriteFile(p, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != content {
			t.Fatalf("read back %q, %v; want %q", got, err, content)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only config.yaml", len(entries))
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	missing := filepath.Join(dir, "nope", "x.json")
	if err := WriteFile(missing, nil); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("WriteFile into a missing directory: %v", err)
	}
}

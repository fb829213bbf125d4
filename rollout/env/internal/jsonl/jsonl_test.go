package jsonl

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/rollout"
)

// Tasks skips blank lines, numbers lines from 1, stops at the first bad
// record with its error, and names the file when it is missing or empty.
func TestTasks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var lines []int
	byLine := func(line int, rec string) (rollout.Task, error) {
		lines = append(lines, line)
		if rec == "bad" {
			return rollout.Task{}, errors.New("bad record")
		}
		return rollout.Task{ID: rec}, nil
	}
	tasks, err := Tasks("toy", write("ok.jsonl", "a\n\n  b  \n"), byLine)
	if err != nil || len(tasks) != 2 || tasks[1].ID != "b" || len(lines) != 2 || lines[1] != 3 {
		t.Fatalf("tasks %v, lines %v, err %v; want a and b from lines 1 and 3", tasks, lines, err)
	}
	if _, err := Tasks("toy", write("bad.jsonl", "a\nbad\nc\n"), byLine); err == nil || err.Error() != "bad record" {
		t.Errorf("a bad record: %v", err)
	}
	empty := write("empty.jsonl", "\n\n")
	if _, err := Tasks("toy", empty, byLine); err == nil || err.Error() != "toy: dataset "+empty+" has no tasks" {
		t.Errorf("an empty file: %v", err)
	}
	if _, err := Tasks("toy", filepath.Join(dir, "absent.jsonl"), byLine); err == nil || !strings.HasPrefix(err.Error(), "toy: dataset: open ") {
		t.Errorf("a missing file: %v", err)
	}
}

package coding

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A dataset task whose reference solution fails its own tests, or whose
// tests never finish, is found once when the split is read and set aside
// with a line naming it; the others are kept in order. Before, both stayed
// in the split, and the looping one cost a full sandbox timeout each time
// it was used.
func TestTasksWhoseSolutionFailsAreSetAside(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil && os.Getenv("TROUPE_SANDBOX_REQUIRED") == "" {
		t.Skip("bwrap not installed (scripts/setup.sh installs bubblewrap)")
	}
	records := []string{
		`{"task_id": "good/0", "prompt": "def add(a, b):\n", "canonical_solution": "    return a + b\n", "entry_point": "add", "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(2, 2) == 4\n"}`,
		`{"task_id": "loops/1", "prompt": "def one():\n", "canonical_solution": "    return 1\n", "entry_point": "one", "test": "def check(candidate):\n    while True:\n        pass\n"}`,
		`{"task_id": "wrong/2", "prompt": "def sub(a, b):\n", "canonical_solution": "    return a + b\n", "entry_point": "sub", "test": "def check(candidate):\n    assert candidate(3, 1) == 2\n"}`,
		`{"task_id": "nosolution/3", "prompt": "def two():\n", "entry_point": "two", "test": "def check(candidate):\n    assert candidate() == 2\n"}`,
		`{"task_id": "good/4", "text": "Return the length.", "code": "def size(x):\n    return len(x)\n", "test_list": ["assert size([1, 2]) == 2"]}`,
	}
	path := filepath.Join(t.TempDir(), "tasks.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(records, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Source, cfg.Train, cfg.TimeoutSeconds = "file", path, 2
	began := time.Now()
	e, err := New(cfg, "train")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := 0; i < e.Len(); i++ {
		ids = append(ids, e.Task(i).ID)
	}
	if got := strings.Join(ids, " "); got != "good/0 nosolution/3 good/4" {
		t.Errorf("kept %q, want good/0 nosolution/3 good/4", got)
	}
	aside := e.SetAside()
	if len(aside) != 2 || !strings.HasPrefix(aside[0], "loops/1 (its reference solution did not finish its tests within env.coding.timeout_s") ||
		!strings.HasPrefix(aside[1], "wrong/2 (its reference solution passes 0 of its 1 tests") {
		t.Errorf("set aside %q", aside)
	}
	t.Logf("read and checked in %v", time.Since(began))
	// a split whose every task fails is refused, naming them
	if err := os.WriteFile(path, []byte(records[2]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(cfg, "train"); err == nil || !strings.Contains(err.Error(), "every task's reference solution fails its own tests") || !strings.Contains(err.Error(), "wrong/2") {
		t.Errorf("a split of failing tasks: %v", err)
	}
}

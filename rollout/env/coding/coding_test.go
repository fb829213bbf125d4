package coding

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"troupe/rollout"
)

// newEnv skips the test when bwrap is not installed, unless
// TROUPE_SANDBOX_REQUIRED is set (make test sets it).
func newEnv(t *testing.T, split string) *Env {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil && os.Getenv("TROUPE_SANDBOX_REQUIRED") == "" {
		t.Skip("bwrap not installed (scripts/setup.sh installs bubblewrap)")
	}
	cfg := DefaultConfig()
	cfg.TimeoutSeconds = 3
	e, err := New(cfg, split)
	if err != nil {
		t.Fatalf("%v (scripts/setup.sh installs python3 and bubblewrap)", err)
	}
	return e
}

// Every procedural task's reference pair passes all its tests in the
// sandbox with the full reward; train and test hold different tasks.
func TestProceduralTasksPassWithTheirReference(t *testing.T) {
	train, test := newEnv(t, "train"), newEnv(t, "test")
	ids := map[string]bool{}
	for i := 0; i < train.Len(); i++ {
		ids[train.Task(i).ID] = true
	}
	for i := 0; i < test.Len(); i++ {
		if ids[test.Task(i).ID] {
			t.Fatalf("%s is in both splits", test.Task(i).ID)
		}
	}
	if train.Len() < 20 || test.Len() < 5 {
		t.Fatalf("%d train and %d test tasks", train.Len(), test.Len())
	}
	for i := 0; i < train.Len(); i += 3 {
		tk := train.Task(i)
		r := train.JointScore(tk, 0, []string{train.Demonstrate("first", tk, "", true), train.Demonstrate("second", tk, "", true)})
		if !r.Success || r.Reward != MaxReward || r.Stats["run/passed"] != 1 {
			t.Fatalf("%s: reference pair: %+v", tk.ID, r)
		}
		if w := train.JointScore(tk, 0, []string{train.Demonstrate("first", tk, "", true), train.Demonstrate("second", tk, "", false)}); w.Success {
			t.Fatalf("%s: the wrong demonstration passes", tk.ID)
		}
	}
}

// Each way a joint program can go wrong is scored by its level and named in
// the feedback, and the environment keeps working after it.
func TestJointProgramsThatGoWrong(t *testing.T) {
	e := newEnv(t, "train")
	tk := rollout.Task{ID: "t", Meta: map[string]string{"entry_point": "double",
		"tests": `["assert double(2) == 4", "assert double(-1) == -2", "assert double(0) == 0", "assert double(5) == 10"]`}}
	helper := "```python\ndef aux(x):\n    return 2 * x\n```"
	for _, c := range []struct {
		name, helper, main string
		reward             float64
		feedback, stat     string
	}{
		{"correct, uses aux", helper, "def double(x):\n    return aux(x)\n", 4.0, "4 of 4 tests passed", "run/passed"},
		{"correct, ignores aux", helper, "def double(x):\n    return x + x\n", 3.5, "4 of 4 tests passed", "run/passed"},
		{"one test fails", helper, "def double(x):\n    return aux(x) if x else 1\n", 1 + 1 + 1.5*3/4 + 0.5, "3 of 4 tests passed", "run/passed"},
		{"no aux", "def helper(x):\n    return x\n", "def double(x):\n    return 2 * x\n", 0, "does not define aux", ""},
		{"wrong entry point", helper, "def twice(x):\n    return 2 * x\n", 0, "does not define double", ""},
		{"syntax error", helper, "def double(x):\n    return (2 * x\n", 1, "does not compile", "run/passed"},
		// bytes that are not UTF-8: Python's own verdict (a comment may hold
		// them, a string may not), not a crash of the harness
		{"not UTF-8 in a comment", helper, "def double(x):\n    return 2 * x  # \xff\xfe\n", 3.5, "4 of 4 tests passed", "run/passed"},
		{"not UTF-8 in a string", helper, "def double(x):\n    s = '\xff\xfe'\n    return 2 * x\n", 1, "does not compile", "run/passed"},
		{"infinite loop", helper, "def double(x):\n    while True:\n        pass\n", 2, "timed out", "run/timed_out"},
		// the allocation fails inside the program (MemoryError under the
		// address-space limit): a failed test, and the harness goes on
		{"memory bomb", helper, "def double(x):\n    return len(bytearray(1 << 31))\n", 2, "0 of 4 tests passed; the first failure: MemoryError", "run/passed"},
		{"memory bomb at import", helper, "blob = bytearray(1 << 31)\ndef double(x):\n    return 2 * x\n", 2, "MemoryError", "run/passed"},
		{"fork bomb", helper, "import os\ndef double(x):\n    while True:\n        os.fork()\n", 2, "", ""},
		{"write outside", helper, "def double(x):\n    open('/etc/troupe-escape', 'w').write('x')\n    return 2 * x\n", 2, "0 of 4 tests passed", "run/passed"},
		{"crash", helper, "import os, signal\ndef double(x):\n    os.kill(os.getpid(), signal.SIGSEGV)\n", 2, "crashed", "run/crashed"},
		// aux defined with two spaces after def: found as aux, and its body read
		{"def  aux", "def  aux(x):\n    return 2 * x\n", "def double(x):\n    return aux(x)\n", 4.0, "4 of 4 tests passed", "run/passed"},
		{"network", helper, "import socket\ndef double(x):\n    socket.create_connection(('93.184.216.34', 80), timeout=2)\n    return 2 * x\n", 1 + 1 + 0, "0 of 4 tests passed", "run/passed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.JointScore(tk, 0, []string{c.helper, c.main})
			if diff := r.Reward - c.reward; diff > 1e-9 || diff < -1e-9 {
				t.Errorf("reward %g, want %g (%s)", r.Reward, c.reward, r.Feedback)
			}
			if !strings.Contains(r.Feedback, c.feedback) {
				t.Errorf("feedback %q, want it to say %q", r.Feedback, c.feedback)
			}
			if c.stat != "" && r.Stats[c.stat] != 1 {
				t.Errorf("stats %v, want %s", r.Stats, c.stat)
			}
		})
	}
}

func TestHumanEvalAndMBPPFiles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "mixed.jsonl")
	os.WriteFile(p, []byte(`{"task_id": "HumanEval/0", "prompt": "def inc(x):\n    \"\"\"Add one.\"\"\"\n", "entry_point": "inc", "test": "def check(candidate):\n    assert candidate(1) == 2\n"}
{"task_id": 11, "text": "Write a function to square a number.", "test_list": ["assert square(3) == 9", "assert square(-2) == 4"]}
{"task_id": 12, "text": "Write a function for the area of a circle.", "test_list": ["assert math.isclose(area(1), PI)"], "test_setup_code": "PI = 3.141592653589793", "test_imports": ["import math"]}
`), 0o644)
	tasks, err := LoadJSONL(p)
	if err != nil {
		t.Fatal(err)
	}
	if tasks[0].Meta["entry_point"] != "inc" || tasks[1].Meta["entry_point"] != "square" || tasks[1].ID != "11" {
		t.Fatalf("tasks %+v", tasks)
	}
	e := newEnv(t, "train")
	if r := e.JointScore(tasks[0], 0, []string{"def aux(x):\n    return x + 1\n", "def inc(x):\n    return aux(x)\n"}); !r.Success {
		t.Errorf("HumanEval check: %+v", r)
	}
	if r := e.JointScore(tasks[1], 0, []string{"def aux(x):\n    return x * x\n", "def square(x):\n    return aux(x)\n"}); !r.Success {
		t.Errorf("MBPP asserts: %+v", r)
	}
	// the tests' own imports and set-up, in the tests' namespace
	if r := e.JointScore(tasks[2], 0, []string{"def aux(x):\n    return x * x\n", "import math\ndef area(r):\n    return math.pi * aux(r)\n"}); !r.Success || tasks[2].Meta["entry_point"] != "area" {
		t.Errorf("MBPP test_imports and test_setup_code: %+v", r)
	}
	for assert, want := range map[string]string{
		"assert square(3) == 9": "square",
		"assert set(similar_elements((3, 4), (5, 4))) == set((4,))": "similar_elements",
		"assert math.isclose(area(1), 3.14, rel_tol=0.01)":          "area",
		"assert (max_sub([1, -2]) == 1)":                            "max_sub",
	} {
		if got := calledIn(assert); got != want {
			t.Errorf("calledIn(%q) = %q, want %q", assert, got, want)
		}
	}
	for _, bad := range []string{`{"prompt": "x", "test": "def check(c): pass"}`, `{"text": "x"}`, `{"text": "x", "test_list": ["assert 1 == 1"]}`, `[1]`} {
		os.WriteFile(p, []byte(bad+"\n"), 0o644)
		if _, err := LoadJSONL(p); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

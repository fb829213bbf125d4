package coding

import (
	"encoding/json"
	"fmt"
	"math"
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
	// the rewards are worked out from the reference's levels (reward.go):
	// 0.4 aux + 0.6 main, 0.5 syntax, 1.0 × tests, then the bonuses
	for _, c := range []struct {
		name, helper, main string
		reward             float64
		feedback, stat     string
	}{
		{"correct, a wrapper of aux", helper, "def double(x):\n    return aux(x)\n", 3.0, "4 of 4 tests passed", "run/passed"},
		{"correct, aux assigned and returned: a wrapper", helper, "def double(x):\n    y = aux(x)\n    return y\n", 3.0, "thin wrapper", "run/passed"},
		{"correct, uses aux and more", helper, "def double(x):\n    \"\"\"Twice x.\"\"\"\n    y = aux(x)\n    return y + 0\n", 4.0, "uses its result", "run/passed"},
		{"correct, ignores aux", helper, "def double(x):\n    return x + x\n", 2.5, "main does NOT call aux", "run/passed"},
		{"correct, throws aux's value away", helper, "def double(x):\n    aux(x)\n    return 2 * x\n", 3.5, "throws its value away", "run/passed"},
		{"one test fails", helper, "def double(x):\n    return aux(x) if x else 1\n", 1.5 + 0.75 + 0.5, "Failed case: assert double(0) == 0 -> AssertionError", "run/passed"},
		// the bonus needs a passing test
		{"every test fails, calls aux", helper, "def double(x):\n    y = aux(x)\n    return y + 1\n", 1.5, "0 of 4 tests passed", "run/passed"},
		{"no aux", "def helper(x):\n    return x\n", "def double(x):\n    return 2 * x\n", 2.1, "Aux definition: MISSING (aux not defined)", "run/passed"},
		{"aux without a return", "def aux(x):\n    print(x)\n", "def double(x):\n    y = aux(x)\n    return 2 * x\n", 0.6 + 0.5 + 1 + 0.5 + 1, "MISSING (aux has no return statement)", "run/passed"},
		{"wrong entry point", helper, "def twice(x):\n    return 2 * x\n", 0.4, "Main definition: MISSING (double not defined)", ""},
		{"main without a return", helper, "def double(x):\n    print(2 * x)\n", 0.4, "MISSING (double has no return statement)", ""},
		{"syntax error", helper, "def double(x):\n    return (2 * x\n", 1, "does not compile", "run/passed"},
		// bytes that are not UTF-8: Python's own verdict (a comment may hold
		// them, a string may not), not a crash of the harness
		{"not UTF-8 in a comment", helper, "def double(x):\n    return 2 * x  # \xff\xfe\n", 2.5, "4 of 4 tests passed", "run/passed"},
		{"not UTF-8 in a string", helper, "def double(x):\n    s = '\xff\xfe'\n    return 2 * x\n", 1, "does not compile", "run/passed"},
		{"infinite loop", helper, "def double(x):\n    while True:\n        pass\n    return x\n", 1.5, "timed out", "run/timed_out"},
		// the allocation fails inside the program (MemoryError under the
		// address-space limit): a failed test, and the harness goes on
		{"memory bomb", helper, "def double(x):\n    return len(bytearray(1 << 31))\n", 1.5, "Failed case: assert double(2) == 4 -> MemoryError", "run/passed"},
		{"memory bomb at import", helper, "blob = bytearray(1 << 31)\ndef double(x):\n    return 2 * x\n", 1.5, "MemoryError", "run/passed"},
		{"fork bomb", helper, "import os\ndef double(x):\n    while True:\n        os.fork()\n    return x\n", 1.5, "", ""},
		{"write outside", helper, "def double(x):\n    open('/etc/troupe-escape', 'w').write('x')\n    return 2 * x\n", 1.5, "0 of 4 tests passed", "run/passed"},
		{"crash", helper, "import os, signal\ndef double(x):\n    os.kill(os.getpid(), signal.SIGSEGV)\n    return x\n", 1.5, "crashed", "run/crashed"},
		// aux defined with two spaces after def: found as aux
		{"def  aux", "def  aux(x):\n    return 2 * x\n", "def double(x):\n    return aux(x)\n", 3.0, "4 of 4 tests passed", "run/passed"},
		{"network", helper, "import socket\ndef double(x):\n    socket.create_connection(('93.184.216.34', 80), timeout=2)\n    return 2 * x\n", 1.5, "0 of 4 tests passed", "run/passed"},
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
	// a check of single-line asserts is split, one test each (partial
	// credit, as the reference's extract_test_cases); one with other
	// statements runs whole
	for _, c := range []struct {
		check string
		want  []string
	}{
		{"METADATA = {}\n\ndef check(candidate):\n    # basic\n    assert candidate(1) == 2\n    assert candidate(-1) == 0\n    assert True, 'debug'\n", []string{"assert inc(1) == 2", "assert inc(-1) == 0"}},
		{"def check(candidate):\n    for i in range(3):\n        assert candidate(i) == i + 1\n", []string{"def check(candidate):\n    for i in range(3):\n        assert candidate(i) == i + 1\n\ncheck(inc)\n"}},
		{"def check(candidate):\n    assert candidate(\n        1) == 2\n", []string{"def check(candidate):\n    assert candidate(\n        1) == 2\n\ncheck(inc)\n"}},
	} {
		rec, _ := json.Marshal(map[string]string{"prompt": "def inc(x):\n", "entry_point": "inc", "test": c.check})
		os.WriteFile(p, append(rec, '\n'), 0o644)
		got, err := LoadJSONL(p)
		var tests []string
		if err == nil {
			json.Unmarshal([]byte(got[0].Meta["tests"]), &tests)
		}
		if fmt.Sprint(tests) != fmt.Sprint(c.want) {
			t.Errorf("check %q: tests %q, want %q (%v)", c.check, tests, c.want, err)
		}
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

// The single-agent baseline, as the reference scores it (train_grpo.py's
// execution_reward_single_agent: the response is the main program, the
// helper empty): a response holding aux and the main function passes every
// test and earns main's 0.6, syntax 0.5 and tests 1.0 = 2.1, nothing for
// aux; with single_aux it scores as the joint action of its two halves.
func TestSingleAgentResponseScoresAsTheJointAction(t *testing.T) {
	e := newEnv(t, "train")
	tk := e.Task(0)
	joint := e.JointScore(tk, 0, []string{e.Demonstrate("first", tk, "", true), e.Demonstrate("second", tk, "", true)})
	response := e.Demonstrate("solo", tk, "one ```python block holding both", true)
	single := e.Score(tk, response)
	if !single.Success || math.Abs(single.Reward-(MainDefinedReward+SyntaxReward+TestsReward)) > 1e-12 || single.Metrics["reward/aux_used"] != 0 || single.Metrics["reward/structure"] != MainDefinedReward {
		t.Errorf("single %+v, want 2.1: main 0.6, syntax 0.5, tests 1.0 and no aux term", single)
	}
	e.singleAux = true
	if both := e.Score(tk, response); !both.Success || both.Reward != joint.Reward || both.Reward != MaxReward {
		t.Errorf("single_aux: single %+v, joint %v (%s)", both, joint.Reward, joint.Feedback)
	}
	e.singleAux = false
	if s := e.Score(tk, "def nothing():\n    return 1\n"); s.Success || s.Reward != 0 {
		t.Errorf("no functions: %+v", s)
	}
}

package coding

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/rollout"
)

// task builds a task from an entry point and test snippets.
func task(entry string, tests ...string) rollout.Task {
	enc, _ := json.Marshal(tests)
	return rollout.Task{ID: entry, Meta: map[string]string{"entry_point": entry, "tests": string(enc)}}
}

// What honest programs and tests do in one Python process keeps working
// when the tests call the program across the pipe; what cannot cross is
// named in the feedback.
func TestHarnessKeepsPythonSemantics(t *testing.T) {
	e := newEnv(t, "train")
	helper := "def aux(x):\n    return x\n"
	for _, c := range []struct {
		name   string
		main   string
		task   rollout.Task
		passed int    // of the task's tests
		says   string // in the feedback, when not all pass
	}{
		{"plain values of every kind", "def kinds(n):\n    return [None, True, n, 2 ** 100, 1.5, float('inf'), 1 + 2j, 'é', b'\\x00\\xff', bytearray(b'ab'), (1, (2,)), {1: 'a', (2, 3): [4]}, {5, 6}, frozenset({7})]\n",
			task("kinds", "assert kinds(3) == [None, True, 3, 2 ** 100, 1.5, float('inf'), 1 + 2j, 'é', b'\\x00\\xff', bytearray(b'ab'), (1, (2,)), {1: 'a', (2, 3): [4]}, {5, 6}, frozenset({7})]",
				"r = kinds(0)\nassert type(r[10]) is tuple and type(r[2]) is int and r[1] is True and r[0] is None"), 2, ""},
		{"a tuple is not a list", "def pair():\n    return [1, 2]\n", task("pair", "assert pair() == (1, 2)", "assert pair() == [1, 2]"), 1, "AssertionError"},
		{"keyword and default arguments", "def scale(xs, k=2, *, offset=0):\n    return [k * x + offset for x in xs]\n",
			task("scale", "assert scale([1, 2]) == [2, 4]", "assert scale([1], k=3, offset=1) == [4]"), 2, ""},
		{"changes in place", "def sort_in_place(xs, d):\n    xs.sort()\n    d['seen'] = len(xs)\n    return None\n",
			task("sort_in_place", "xs = [3, 1, 2]\nd = {}\nassert sort_in_place(xs, d) is None\nassert xs == [1, 2, 3] and d == {'seen': 3}"), 1, ""},
		{"the exception a test expects", "def root(x):\n    if x < 0:\n        raise ValueError('negative')\n    return x ** 0.5\n",
			task("root", "try:\n    root(-1)\nexcept ValueError as e:\n    assert 'negative' in str(e)\nelse:\n    raise AssertionError('no ValueError')", "assert root(4) == 2.0"), 2, ""},
		{"prints at import and in the function", "print('loading')\ndef loud(x):\n    print('called with', x)\n    return x + 1\n", task("loud", "assert loud(1) == 2"), 1, ""},
		{"the program's other functions", "def encode(s):\n    return s[::-1]\ndef decode(s):\n    return s[::-1]\n",
			task("decode", "assert decode(encode('abc')) == 'abc'"), 1, ""},
		{"a generator cannot cross", "def evens(n):\n    return (x for x in range(n) if x % 2 == 0)\n",
			task("evens", "assert list(evens(5)) == [0, 2, 4]"), 0, "value of type generator cannot cross"},
		{"a loop in the second test keeps the first", "def slow(x):\n    while x:\n        pass\n    return 0\n",
			task("slow", "assert slow(0) == 0", "assert slow(1) == 0", "assert slow(0) == 0"), 1, "timed out"},
		{"HumanEval's check", "def inc(x):\n    return x + 1\n", task("inc", "def check(candidate):\n    for i in range(20):\n        assert candidate(i) == i + 1\ncheck(inc)\n"), 1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.JointScore(c.task, 0, []string{helper, c.main})
			var tests []string
			json.Unmarshal([]byte(c.task.Meta["tests"]), &tests)
			want := MainDefinedReward + AuxDefinedReward + SyntaxReward + TestsReward*float64(c.passed)/float64(len(tests))
			if diff := r.Reward - want; diff > 1e-9 || diff < -1e-9 {
				t.Errorf("reward %g, want %g (%d of %d tests): %s", r.Reward, want, c.passed, len(tests), r.Feedback)
			}
			if c.says != "" && !strings.Contains(r.Feedback, c.says) {
				t.Errorf("feedback %q, want it to say %q", r.Feedback, c.says)
			}
		})
	}
}

// The verdict counts each test once, ignores what is not a test of the
// task, and the reward stays in its range whatever the runner printed.
func TestVerdictIsReadStrictly(t *testing.T) {
	out := strings.Join([]string{
		`{"syntax": true}`,
		`{"test": 0, "passed": true}`, `{"test": 0, "passed": true}`, `{"test": 0, "passed": true}`,
		`{"test": 7, "passed": true}`, `{"test": -1, "passed": true}`,
		`not json`, `{"syntax": true, "passed": 1000, "total": 1}`,
		`{"test": 1, "passed": false, "error": "AssertionError()"}`,
		`{"done": true}`,
	}, "\n")
	v := readVerdict([]byte(out), 3)
	if !v.judged || !v.syntax || v.passed != 1 || v.total != 3 || !v.complete || len(v.failures) != 1 || v.failures[0] != (failure{1, "AssertionError()"}) {
		t.Fatalf("%+v", v)
	}
	// a verdict past the task's tests scores no more than every test
	// passing, and a sum past the range is clamped
	res := rollout.JointResult{Terms: map[string]float64{"structure": AuxDefinedReward + MainDefinedReward}, Stats: map[string]float64{}}
	rd := read("def aux():\n    return 1\n", "def f():\n    y = aux()\n    return y + 1\n", "f")
	r := total(scored(res, trial{judged: true, syntax: true, passed: 1000, total: 1, complete: true}, rd, []string{"assert f() == 2"}))
	if r.Terms["tests"] != TestsReward || r.Reward != MaxReward {
		t.Fatalf("1000 of 1 tests: terms %v, reward %g", r.Terms, r.Reward)
	}
	for _, c := range []struct {
		terms map[string]float64
		want  float64
	}{
		{map[string]float64{"tests": 1500}, MaxReward},
		{map[string]float64{"tests": -1.38e19}, 0},
		{map[string]float64{"tests": math.NaN()}, 0},
	} {
		if r := total(rollout.JointResult{Terms: c.terms}); r.Reward != c.want {
			t.Fatalf("terms %v: reward %g, want %g", c.terms, r.Reward, c.want)
		}
	}
}

// Settings that cannot work are refused by key before anything runs:
// memory_mib whose byte count overflows, absurd or negative sizes, an
// interpreter given by name, missing, not executable or not Python.
func TestConfigRefusesBadLimitsAndInterpreters(t *testing.T) {
	cwd, _ := os.Getwd()
	for _, c := range []struct {
		key string
		set func(*Config)
	}{
		{"memory_mib", func(c *Config) { c.MemoryMiB = 1 << 44 }}, // << 20 wraps int64 to 0
		{"memory_mib", func(c *Config) { c.MemoryMiB = 1 << 30 }}, // a pebibyte
		{"memory_mib", func(c *Config) { c.MemoryMiB = -512 }},
		{"scratch_mib", func(c *Config) { c.ScratchMiB = 0 }},
		{"scratch_mib", func(c *Config) { c.ScratchMiB = 1 << 40 }},
		{"timeout_s", func(c *Config) { c.TimeoutSeconds = -1 }},
		{"interpreter", func(c *Config) { c.Interpreter = "python3" }},
		{"interpreter", func(c *Config) { c.Interpreter = "/nonexistent/bin/python3" }},
		{"interpreter", func(c *Config) { c.Interpreter = filepath.Join(cwd, "coding.go") }},
		{"interpreter", func(c *Config) { c.Interpreter = "/bin/true" }},
		{"interpreter", func(c *Config) { c.Interpreter = "/bin/echo" }},
		{"interpreter", func(c *Config) { c.Interpreter = "/bin/sh" }},
	} {
		cfg := DefaultConfig()
		c.set(&cfg)
		if _, err := New(cfg, "train"); err == nil || !strings.Contains(err.Error(), "env.coding."+c.key) {
			t.Errorf("%+v: %v, want an error naming env.coding.%s", cfg, err, c.key)
		}
	}
}

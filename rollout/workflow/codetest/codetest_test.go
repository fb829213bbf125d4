package codetest_test

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"troupe/rollout"
	"troupe/rollout/env/coding"
	"troupe/rollout/scripted"
	"troupe/rollout/workflow/codetest"
)

func needSandbox(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil && os.Getenv("TROUPE_SANDBOX_REQUIRED") == "" {
		t.Skip("bwrap not installed (scripts/setup.sh installs it); set TROUPE_SANDBOX_REQUIRED=1 to fail instead")
	}
}

// One turn on a procedural coding task, K = 2: the coder's candidates are
// the reference solution and a stub, the tester's the task's own asserts
// and the same asserts with wrong expected values. Every program runs in
// the sandbox: the coder earns the share of the task's tests passed (1, 0),
// the tester the share of its asserts the reference solution passes (1, 0);
// the best function passes the best asserts, so the episode ends solved.
func TestCodeTestTurn(t *testing.T) {
	needSandbox(t)
	env, err := coding.New(coding.DefaultConfig(), "train")
	if err != nil {
		t.Fatal(err)
	}
	task := env.Task(0)
	var tests []string
	json.Unmarshal([]byte(task.Meta["tests"]), &tests)
	wrong := make([]string, len(tests))
	for i, a := range tests {
		wrong[i] = a + " + 1"
	}
	coder := []string{
		"```python\n" + task.Meta["helper"] + "\n\n" + task.Meta["main"] + "\n```",
		"```python\ndef " + task.Meta["entry_point"] + "(*args):\n    return None\n```",
	}
	tester := []string{"```python\n" + strings.Join(tests, "\n") + "\n```", "```python\n" + strings.Join(wrong, "\n") + "\n```"}
	out := runTurn(t, env, task, coder, tester)
	if len(out.Samples) != 4 {
		for _, r := range out.Samples {
			t.Logf("%s %d turn %d: %g", r.Agent, r.Candidate, r.Turn, r.TeamReward)
		}
		t.Logf("%+v", out.Episodes[0].Context)
		t.Fatalf("%d rows, want one turn of 2 coder and 2 tester candidates", len(out.Samples))
	}
	want := map[string][]float64{"coder": {1, 0}, "tester": {1, 0}}
	for _, r := range out.Samples {
		if w := want[r.Agent][r.Candidate]; math.Abs(r.TeamReward-w) > 1e-9 {
			t.Errorf("%s candidate %d: team reward %g, want %g", r.Agent, r.Candidate, r.TeamReward, w)
		}
	}
	if ep := out.Episodes[0]; !ep.Done || !ep.Success || ep.Metrics["game_turns"] != 1 {
		t.Errorf("episode: done %v success %v metrics %v; want solved after one turn", ep.Done, ep.Success, ep.Metrics)
	}
}

// A tester's asserts are model-written code: asserts that pass on anything
// or reach for the verdict (a constant, a patched runner, passes written
// to the verdict and an exit 0, a SystemExit) earn the tester nothing,
// and do not end the episode as if the function passed them.
func TestTesterCannotReachTheVerdict(t *testing.T) {
	needSandbox(t)
	env, err := coding.New(coding.DefaultConfig(), "train")
	if err != nil {
		t.Fatal(err)
	}
	task := env.Task(0)
	f := task.Meta["entry_point"]
	coder := []string{
		"```python\n" + task.Meta["helper"] + "\n\n" + task.Meta["main"] + "\n```",
		"```python\ndef " + f + "(*args):\n    return None\n```",
	}
	tester := []string{
		"```python\nassert True\nassert " + f + "([1]) == " + f + "([1])\n```",
		"```python\nassert not setattr(__import__('__main__'), 'report', lambda **k: __import__('__main__').verdict.write('{\"test\": 0, \"passed\": true}\\n'))\n" +
			"assert [__import__('__main__').report(test=i, passed=True) for i in range(10)] and not __import__('__main__').report(done=True) and __import__('os')._exit(0)\n" +
			"assert (_ for _ in ()).throw(SystemExit(0))\n```",
	}
	out := runTurn(t, env, task, coder, tester)
	for _, r := range out.Samples {
		if r.Agent == "tester" && r.TeamReward != 0 {
			t.Errorf("tester candidate %d, turn %d: team reward %g, want 0", r.Candidate, r.Turn, r.TeamReward)
		}
	}
	if ep := out.Episodes[0]; ep.Metrics["game_turns"] < 2 {
		t.Errorf("the exploits ended the episode as if the function passed them: %v", ep.Metrics)
	}
}

// runTurn runs one episode of task with K = 2 and the scripted answers: the
// coder's k-th call answers coder[k%2], the tester's tester[k%2].
func runTurn(t *testing.T, env rollout.Scorer, task rollout.Task, coder, tester []string) *rollout.Rollout {
	t.Helper()
	var mu sync.Mutex
	seen := map[string]int{}
	respond := func(prompt string, _ uint64) string {
		mu.Lock()
		defer mu.Unlock()
		role := "c"
		if strings.Contains(prompt, "You are the Tester") {
			role = "t"
		}
		k := seen[role] % 2
		seen[role]++
		if role == "t" {
			return tester[k]
		}
		return coder[k]
	}
	var agents []*rollout.Agent
	for i, ac := range []rollout.AgentConfig{{Name: "coder", Model: "policy", Preset: "codetest-coder"}, {Name: "tester", Model: "policy", Preset: "codetest-tester"}} {
		a, err := rollout.NewAgent("agents["+string(rune('0'+i))+"]", ac, rollout.AgentDefaults{Sampling: rollout.DefaultSampling, MaxNewTokens: 4096}, scripted.Binding())
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, a)
	}
	o := codetest.DefaultOptions()
	o.Candidates = 2
	wf, err := rollout.NewWorkflow("code-test", o, agents, env)
	if err != nil {
		t.Fatal(err)
	}
	s := rollout.Sampler{Generators: map[string]rollout.Generator{"policy": scripted.New(respond)}}
	out, err := s.Run(wf, []rollout.Task{task}, 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAssertsAndOptions(t *testing.T) {
	got := codetest.Asserts("Tests:\n```python\nassert f(1) == 2\nx = 3\n  assert f(2) == 4\n```\nassert f(9) == 9", 5)
	if len(got) != 2 || got[0] != "assert f(1) == 2" || got[1] != "assert f(2) == 4" {
		t.Errorf("asserts %q: want the two inside the block", got)
	}
	if got := codetest.Asserts("assert a == 1\nassert b == 2\nassert c == 3", 2); len(got) != 2 {
		t.Errorf("max 2: got %q", got)
	}
	o := codetest.DefaultOptions()
	o.Tester = o.Coder
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "two different agents") {
		t.Errorf("one agent twice: %v", err)
	}
}

// HumanEval and MBPP records carry a golden program (prompt +
// canonical_solution; code): the tester's asserts are scored against it,
// as the reference's unit-test agent scores them against golden_code
// (generated_test_vs_golden_code_match_ratio): right asserts earn 1, wrong
// ones 0, and every turn's tester is judged (tester_judged).
func TestCodeTestTesterScoredAgainstGoldenSolution(t *testing.T) {
	needSandbox(t)
	dir := t.TempDir()
	records := []map[string]any{
		{"task_id": "HumanEval/0", "prompt": "def add(a, b):\n    \"\"\"Add two numbers.\"\"\"\n", "entry_point": "add",
			"canonical_solution": "    return a + b\n", "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(0, 0) == 0\n"},
		{"task_id": 2, "text": "Write a function to double a number.", "code": "def double(x):\n    return 2 * x",
			"test_list": []string{"assert double(2) == 4", "assert double(0) == 0"}},
	}
	var lines []string
	for _, r := range records {
		b, _ := json.Marshal(r)
		lines = append(lines, string(b))
	}
	path := dir + "/tasks.jsonl"
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := coding.DefaultConfig()
	cfg.Source, cfg.Train = "file", path
	env, err := coding.New(cfg, "train")
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct{ fn, right, wrong string }{
		{"add", "assert add(2, 2) == 4\nassert add(-1, 1) == 0", "assert add(2, 2) == 5"},
		{"double", "assert double(3) == 6", "assert double(3) == 7\nassert double(1) == 3"},
	} {
		task := env.Task(i)
		if task.Meta["solution"] == "" {
			t.Fatalf("task %s: no golden solution kept", task.ID)
		}
		coder := []string{"```python\ndef " + c.fn + "(*args):\n    return None\n```", "```python\ndef " + c.fn + "(*args):\n    return 0\n```"}
		tester := []string{"```python\n" + c.right + "\n```", "```python\n" + c.wrong + "\n```"}
		out := runTurn(t, env, task, coder, tester)
		for _, r := range out.Samples {
			if r.Agent != "tester" || r.Turn != 0 {
				continue
			}
			if want := []float64{1, 0}[r.Candidate]; math.Abs(r.TeamReward-want) > 1e-9 {
				t.Errorf("%s: tester candidate %d earns %g, want %g (the golden program passes the right asserts only)", task.ID, r.Candidate, r.TeamReward, want)
			}
		}
		if m := out.Episodes[0].Metrics; m["tester_judged"] != m["game_turns"] {
			t.Errorf("%s: tester_judged %g in %g turns, want every turn judged", task.ID, m["tester_judged"], m["game_turns"])
		}
	}
}

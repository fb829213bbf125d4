// Package coding is MAGRPO's cooperative coding environment: a helper agent
// writes a function aux, a main agent writes the task's function (which may
// call aux), and the joint program is run against the task's tests in a
// sandbox (internal/sandbox: a separate, confined python3 process with CPU,
// memory, scratch-space, output and wall-clock limits, no network, none of
// the host's files). The tests run in a second sandboxed process that the
// program cannot reach, calling the program's functions across a pipe
// (harness.go): the program cannot forge its verdict.
//
// Files: coding.go (options, the environment, the scoring of a joint
// action and its feedback), reward.go (the reward's terms and the static
// reading of the programs), harness.go (the test run), tasks.go (JSONL and
// procedural tasks, the roles' presets and demonstrations), solutions.go
// (a dataset's tasks checked against their own reference solutions once,
// when read), register.go (the registration).
//
// The joint reward is CoMLRL's level-gated aux + main reward (reward.go),
// each term reported as reward/<term>: structure, syntax, tests, aux_used,
// not_wrapper, discarded_aux; it lies in [0, 4.0] and a joint action
// succeeds when every test passes. How the program's run ended is reported
// apart from the reward (run/passed, run/failed, run/timed_out,
// run/out_of_memory, run/crashed, run/output_limit, run/sandbox_unavailable,
// run/stopped). The feedback for the next turn is the reference's
// diagnostics: each function found or missing, the syntax check and its
// error, the tests passed, every failing test with its error, and how the
// entry point uses aux; "tests failed", "timed out", "crashed" and "sandbox
// unavailable" are never confused. The environment refuses to start when
// the sandbox cannot run python3.
//
// One agent alone (workflow single) writes the task's function in one
// response, scored by the same reward as the main agent's program with an
// empty helper, as the reference's single-agent baseline scores it (the aux
// terms earn nothing, at most 2.1 of 4); with single_aux its aux and the
// rest are scored as the helper's and the main agent's programs.
//
// Tasks: HumanEval- or MBPP-style JSONL (a prompt, an entry point, and
// either a check(candidate) test or a list of asserts), or a procedural set
// of small list and string functions with tests computed here, so it runs
// offline. Needs python3 and bubblewrap (scripts/setup.sh installs them);
// docs/sandbox.md describes the reward, its protection and the limits.
package coding

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"troupe/internal/sandbox"
	"troupe/rollout"
)

// Config configures the environment.
type Config struct {
	Source         string  `yaml:"source"`      // "procedural" or "file"
	Train          string  `yaml:"train"`       // JSONL of the train split (source: file)
	Test           string  `yaml:"test"`        // JSONL of the test split
	Seed           uint64  `yaml:"seed"`        // procedural: instance seed
	TimeoutSeconds float64 `yaml:"timeout_s"`   // wall clock and CPU time per run
	MemoryMiB      int64   `yaml:"memory_mib"`  // address space per run
	ScratchMiB     int64   `yaml:"scratch_mib"` // files the program may write, all together
	Interpreter    string  `yaml:"interpreter"` // absolute path of the Python 3 to run
	// SingleAux scores a single agent's aux as the helper's program (troupe's
	// earlier baseline); false, the reference's: the whole response is the
	// main program and the helper is empty, so the aux terms earn nothing.
	SingleAux bool `yaml:"single_aux"`
}

// DefaultConfig is the procedural set with short limits.
func DefaultConfig() Config {
	return Config{Source: "procedural", Seed: 1, TimeoutSeconds: 10, MemoryMiB: 512, ScratchMiB: 64, Interpreter: "/usr/bin/python3"}
}

// Files names the dataset files config checks exist (source: file).
func (c Config) Files() map[string]string {
	return rollout.DatasetFiles("env.coding", c.Source, c.Train, c.Test)
}

// Validate checks the settings; errors name the key and the fix.
func (c Config) Validate() error {
	switch c.Source {
	case "procedural":
	case "file":
		if c.Train == "" && c.Test == "" {
			return fmt.Errorf("env.coding.train: source is file but neither train nor test names a JSONL file")
		}
	default:
		return fmt.Errorf("env.coding.source: must be \"procedural\" or \"file\", got %q", c.Source)
	}
	switch {
	case !(c.TimeoutSeconds > 0) || c.TimeoutSeconds > 600:
		return fmt.Errorf("env.coding.timeout_s: must be in (0, 600] seconds, got %g", c.TimeoutSeconds)
	case c.MemoryMiB < 64 || c.MemoryMiB > 65536:
		return fmt.Errorf("env.coding.memory_mib: must be in [64, 65536] MiB of address space per run, got %d", c.MemoryMiB)
	case c.ScratchMiB < 1 || c.ScratchMiB > 4096:
		return fmt.Errorf("env.coding.scratch_mib: must be in [1, 4096] MiB of files per run, got %d", c.ScratchMiB)
	case !filepath.IsAbs(c.Interpreter):
		return fmt.Errorf("env.coding.interpreter: must be the absolute path of a Python 3 interpreter (e.g. /usr/bin/python3), got %q", c.Interpreter)
	}
	return nil
}

// Env is the coding environment for one split.
type Env struct {
	rollout.TaskSource
	box    *sandbox.Sandbox // the program's
	judge  *sandbox.Sandbox // the test runner's
	python string           // the interpreter, symbolic links resolved
	// singleAux: Score splits a single agent's response into aux and main
	singleAux bool
	aside     []string // tasks left out when the data was read (solutions.go)
}

func (*Env) Name() string { return "coding" }

// New builds a split and checks that the sandbox runs the interpreter.
func New(cfg Config, split string) (*Env, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var tasks rollout.SliceSource
	var err error
	switch {
	case split != "train" && split != "test":
		return nil, fmt.Errorf("coding: unknown split %q", split)
	case cfg.Source == "file":
		path := cfg.Train
		if split == "test" {
			path = cfg.Test
		}
		if path == "" {
			return nil, nil
		}
		if tasks, err = LoadJSONL(path); err != nil {
			return nil, err
		}
	default:
		tasks = Procedural(cfg.Seed, split)
	}
	python, dirs, err := interpreter(cfg.Interpreter)
	if err != nil {
		return nil, err
	}
	limits := sandbox.Limits{
		Wall: time.Duration(cfg.TimeoutSeconds * float64(time.Second)), CPU: time.Duration(cfg.TimeoutSeconds * float64(time.Second)),
		Memory: cfg.MemoryMiB << 20, Scratch: cfg.ScratchMiB << 20, Processes: 16, Output: 1 << 20, FileSize: 16 << 20,
	}
	box, err := sandbox.New(limits, dirs...)
	if err != nil {
		return nil, fmt.Errorf("coding: %w", err)
	}
	// the runner outlives the program's deadline, to report the tests the
	// program's end left unanswered
	limits.Wall += 5 * time.Second
	judge, err := sandbox.New(limits, dirs...)
	if err != nil {
		return nil, fmt.Errorf("coding: %w", err)
	}
	e := &Env{TaskSource: tasks, box: box, judge: judge, python: python, singleAux: cfg.SingleAux}
	if err := e.probe(cfg.Interpreter); err != nil {
		return nil, err
	}
	if cfg.Source == "file" { // a dataset's tasks are checked against their own solutions, once (solutions.go)
		kept, aside := e.checkSolutions(tasks)
		if len(kept) == 0 && len(aside) > 0 {
			return nil, fmt.Errorf("coding: dataset %s: every task's reference solution fails its own tests, so none can be scored: %s", datasetOf(cfg, split), strings.Join(aside, "; "))
		}
		e.TaskSource, e.aside = kept, aside
	}
	return e, nil
}

// datasetOf is the file of a split.
func datasetOf(cfg Config, split string) string {
	if split == "test" {
		return cfg.Test
	}
	return cfg.Train
}

// interpreter resolves the configured Python's symbolic links and finds
// the directories it needs besides the system's: its own bin and lib.
func interpreter(path string) (string, []string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", nil, fmt.Errorf("env.coding.interpreter: %w (install python3, or name another Python 3)", err)
	}
	if fi, err := os.Stat(real); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return "", nil, fmt.Errorf("env.coding.interpreter: %s is not an executable file", real)
	}
	dirs := []string{filepath.Dir(real)}
	prefix := filepath.Dir(filepath.Dir(real))
	for _, lib := range []string{"lib", "lib64"} {
		if fi, err := os.Stat(filepath.Join(prefix, lib)); err == nil && fi.IsDir() && prefix != "/" {
			dirs = append(dirs, filepath.Join(prefix, lib))
		}
	}
	return real, dirs, nil
}

// probe checks, in the sandbox, that the interpreter is a Python 3.8 or
// newer: it must compute the line that a Python prints, not echo it.
func (e *Env) probe(configured string) error {
	res := e.box.Run(context.Background(), nil, e.python, "-I", "-c", "import sys; print('python', 6 * 7, *sys.version_info[:2])")
	f := strings.Fields(string(res.Stdout))
	if res.Outcome == sandbox.Passed && len(f) == 4 && f[0] == "python" && f[1] == "42" && f[2] == "3" {
		if minor, err := strconv.Atoi(f[3]); err == nil && minor >= 8 {
			return nil
		}
	}
	if res.Outcome == sandbox.Unavailable {
		return fmt.Errorf("coding: the sandbox cannot run %s (%s %s); install bubblewrap and python3 (scripts/setup.sh)", configured, res.Detail, strings.TrimSpace(string(res.Stderr)))
	}
	return fmt.Errorf("env.coding.interpreter: %s is not a Python 3.8+ interpreter in the sandbox (%s; it printed %q, stderr %q)", configured, res.Outcome, strings.TrimSpace(string(res.Stdout)), strings.TrimSpace(string(res.Stderr)))
}

var (
	fence = regexp.MustCompile("(?s)```(?:python|py)?\\s*\\n(.*?)```")
)

// Code extracts the program from a response: the last fenced block, else
// the whole text.
func Code(response string) string {
	if m := fence.FindAllStringSubmatch(response, -1); len(m) > 0 {
		return strings.TrimSpace(m[len(m)-1][1])
	}
	return strings.TrimSpace(response)
}

// JointScore runs [helper, main] against the task's tests. The reward is
// the sum of the terms, clamped to [0, MaxReward].
func (e *Env) JointScore(task rollout.Task, turn int, outputs []string) rollout.JointResult {
	if len(outputs) != 2 {
		return rollout.JointResult{Feedback: fmt.Sprintf("coding needs a helper and a main program, got %d", len(outputs))}
	}
	return total(e.score(task, Code(outputs[0]), Code(outputs[1]), nil))
}

// ScoreWrittenTests runs [helper, main] against tests a model wrote (the
// code-test workflow's tester) instead of the task's own, by the same
// reward. A written test is model-written code, so it is never run: the
// test runner reads each as data, one `assert ENTRY(args) == expected`
// (or `is None/True/False`, a bare call, `not` a call) with literal
// arguments and expected value, calls the entry point across the pipe and
// compares; any other test fails and says why (harness/runner.py).
func (e *Env) ScoreWrittenTests(task rollout.Task, outputs []string, tests []string) rollout.JointResult {
	if len(outputs) != 2 {
		return rollout.JointResult{Feedback: fmt.Sprintf("coding needs a helper and a main program, got %d", len(outputs))}
	}
	if tests == nil {
		tests = []string{}
	}
	return total(e.score(task, Code(outputs[0]), Code(outputs[1]), tests))
}

// total sums the terms into the reward, clamped to [0, MaxReward].
func total(res rollout.JointResult) rollout.JointResult {
	res.Reward = 0
	for _, k := range slices.Sorted(maps.Keys(res.Terms)) { // a fixed order: bit-identical runs
		res.Reward += res.Terms[k]
	}
	res.Reward = clamp(res.Reward, 0, MaxReward)
	return res
}

// reading is what the static checks found in the two programs.
type reading struct {
	auxFn, mainFn   string // the two functions' text ("" when missing)
	auxOK, mainOK   bool   // defined with a return value
	entry           string
	calls, discards bool // the entry point calls aux; as a bare statement
	wrapper         bool
}

func read(helper, main, entry string) reading {
	r := reading{auxFn: function(helper, "aux"), mainFn: function(main, entry), entry: entry}
	r.auxOK, r.mainOK = definedWithReturn(r.auxFn), definedWithReturn(r.mainFn)
	r.calls = auxCall.MatchString(r.mainFn)
	r.discards = r.calls && discardsAux(r.mainFn)
	r.wrapper = r.mainFn != "" && isWrapper(r.mainFn)
	return r
}

// score fills the terms level by level, stopping at the first gate that
// fails; JointScore sums them. written, when not nil, replaces the task's
// tests with tests a model wrote, which the runner reads as data.
func (e *Env) score(task rollout.Task, helper, main string, written []string) rollout.JointResult {
	terms := map[string]float64{"structure": 0, "syntax": 0, "tests": 0, "aux_used": 0, "not_wrapper": 0, "discarded_aux": 0}
	res := rollout.JointResult{Terms: terms, Stats: map[string]float64{}}
	rd := read(helper, main, task.Meta["entry_point"])
	if rd.auxOK {
		terms["structure"] += AuxDefinedReward
	}
	if !rd.mainOK {
		terms["structure"] += 0
		res.Feedback = diagnostics(rd, nil)
		return res
	}
	terms["structure"] += MainDefinedReward
	tests := written
	if written == nil {
		if err := json.Unmarshal([]byte(task.Meta["tests"]), &tests); err != nil {
			tests = nil
		}
	}
	if len(tests) == 0 {
		res.Feedback = fmt.Sprintf("task %s has no tests to run", task.ID)
		return res
	}
	program := helper + "\n\n\n" + main + "\n"
	if imports := promptImports(task.Question); imports != "" {
		program = imports + "\n\n" + program
	}
	return scored(res, e.try(program, rd.entry, tests, written != nil), rd, tests)
}

// scored fills the terms from the syntax check on, from what the test run
// found, and writes the feedback.
func scored(res rollout.JointResult, t trial, rd reading, tests []string) rollout.JointResult {
	terms := res.Terms
	for _, o := range outcomes {
		res.Stats[stat(o)] = 0
	}
	res.Stats[stat(t.program.Outcome)] = 1
	switch {
	case t.runner.Outcome == sandbox.Unavailable:
		res.Feedback = "sandbox unavailable: " + t.runner.Detail
		return res
	case !t.judged:
		res.Feedback = fmt.Sprintf("sandbox unavailable: the test runner %s (%s)", t.runner.Outcome, tail(t.runner.Detail+" "+string(t.runner.Stderr)))
		return res
	case !t.syntax:
		res.Feedback = diagnostics(rd, &t)
		return res
	}
	terms["syntax"] = SyntaxReward
	terms["tests"] = clamp(TestsReward*float64(t.passed)/float64(t.total), 0, TestsReward)
	res.Stats["tests/share"] = clamp(float64(t.passed)/float64(t.total), 0, 1) // what the code-test workflow reads
	if t.passed > 0 && rd.auxFn != "" && rd.calls {
		terms["aux_used"] = AuxUsedReward
		if !rd.wrapper {
			terms["not_wrapper"] = NotWrapperReward
		}
		if rd.discards {
			terms["discarded_aux"] = DiscardedAuxReward
		}
	}
	res.Success = t.passed == t.total && t.complete
	res.Feedback = diagnostics(rd, &t, tests...)
	return res
}

// diagnostics is the next turn's feedback, in the reference's shape
// (LLM_Collab_Code_Generation external/level_feedback.py): each function
// found or missing, the syntax check, the tests with every failing case and
// its error, and how the entry point uses aux. t is nil when no test ran.
func diagnostics(rd reading, t *trial, tests ...string) string {
	found := func(ok bool, fn, what string) string {
		switch {
		case ok:
			return "FOUND (" + what + " defined with a return statement)"
		case fn != "":
			return "MISSING (" + what + " has no return statement)"
		}
		return "MISSING (" + what + " not defined)"
	}
	lines := []string{
		"- Aux definition: " + found(rd.auxOK, rd.auxFn, "aux"),
		"- Main definition: " + found(rd.mainOK, rd.mainFn, rd.entry),
	}
	if t == nil {
		return strings.Join(lines, "\n")
	}
	if !t.syntax {
		return strings.Join(append(lines, "- Syntax: ERROR (the joint program does not compile: "+t.compileError+")"), "\n")
	}
	lines = append(lines, "- Syntax: OK", fmt.Sprintf("- Tests: %d of %d tests passed", t.passed, t.total))
	switch o := t.program.Outcome; o {
	case sandbox.TimedOut, sandbox.OutOfMemory, sandbox.Crashed, sandbox.OutputLimit:
		lines = append(lines, fmt.Sprintf("  the program %s while the tests ran", o))
	case sandbox.Unavailable:
		lines = append(lines, "  sandbox unavailable: "+t.program.Detail)
	}
	for _, f := range t.failures {
		lines = append(lines, fmt.Sprintf("  Failed case: %s -> %s", strings.TrimSpace(tests[f.test]), f.error))
	}
	if !t.complete && t.passed+len(t.failures) < t.total {
		lines = append(lines, fmt.Sprintf("  %d tests were not reached", t.total-t.passed-len(t.failures)))
	}
	switch {
	case !rd.calls:
		lines = append(lines, "- Aux usage: main does NOT call aux")
	case rd.discards:
		lines = append(lines, "- Aux usage: main calls aux but throws its value away")
	default:
		lines = append(lines, "- Aux usage: main calls aux and uses its result")
	}
	if rd.calls && rd.wrapper {
		lines = append(lines, "- Warning: main appears to be a thin wrapper over aux")
	}
	return strings.Join(lines, "\n")
}

// outcomes are the program's run outcomes, each reported as run/<outcome>.
var outcomes = []sandbox.Outcome{sandbox.Passed, sandbox.Failed, sandbox.TimedOut, sandbox.OutOfMemory, sandbox.Crashed, sandbox.OutputLimit, sandbox.Unavailable, sandbox.Stopped}

func stat(o sandbox.Outcome) string { return "run/" + strings.ReplaceAll(o.String(), " ", "_") }

func clamp(x, lo, hi float64) float64 {
	if math.IsNaN(x) {
		return lo
	}
	return max(lo, min(hi, x))
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 300 {
		s = "…" + s[len(s)-300:]
	}
	return s
}

// Score is the single-agent baseline: one response scored by the joint
// reward as the main agent's program with an empty helper (the reference's
// train_grpo.py, execution_reward_single_agent), or, with single_aux, its
// aux as the helper's program and the rest as the main agent's.
func (e *Env) Score(task rollout.Task, response string) rollout.Score {
	helper, main := "", Code(response)
	if e.singleAux {
		helper, main = SplitProgram(main)
	}
	r := total(e.score(task, helper, main, nil))
	return rollout.Score{Reward: r.Reward, Success: r.Success, Metrics: rollout.TermMetrics(r.Terms)}
}

// SplitProgram cuts one program into aux's definition and the rest.
func SplitProgram(code string) (helper, main string) {
	fn := function(code, "aux")
	if fn == "" {
		return "", code
	}
	at := strings.Index(code, fn)
	return fn + "\n", strings.TrimSpace(code[:at]+code[at+len(fn):]) + "\n"
}

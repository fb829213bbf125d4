// Package coding is MAGRPO's cooperative coding environment: a helper agent
// writes a function aux, a main agent writes the task's function (which may
// call aux), and the joint program is run against the task's tests in a
// sandbox (internal/sandbox: a separate, confined python3 process with CPU,
// memory, output and wall-clock limits, no network, its own directory).
//
// Files: coding.go (options, the environment, the joint reward), tasks.go
// (JSONL and procedural tasks, the two roles' presets and
// demonstrations), register.go (the registration).
//
// The joint reward is level-gated, as CoMLRL's is, with troupe's own terms
// (each reported as reward/<term>):
//
//	structure  1.0  the helper defines aux and the main agent the entry point   (else the rest is 0)
//	syntax     1.0  the joint program compiles                                  (else the rest is 0)
//	tests      1.5  × the share of tests passed
//	aux_used   0.5  the entry point calls aux and aux is not empty
//
// so the maximum is 4.0; success is every test passing. How the run ended is
// reported apart from the reward (run/passed, run/failed, run/timed_out,
// run/out_of_memory, run/crashed, run/output_limit, run/unavailable), and
// the feedback for the next turn says it in words: "tests failed", "timed
// out", "crashed" and "sandbox unavailable" are never confused. The
// environment refuses to start when the sandbox cannot run python3.
//
// Tasks: HumanEval- or MBPP-style JSONL (a prompt, an entry point, and
// either a check(candidate) test or a list of asserts), or a procedural set
// of small list and string functions with tests computed here, so it runs
// offline. Needs python3 and bubblewrap (scripts/setup.sh installs them).
package coding

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
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
	TimeoutSeconds float64 `yaml:"timeout_s"`   // wall clock per run
	MemoryMiB      int64   `yaml:"memory_mib"`  // address space per run
	Interpreter    string  `yaml:"interpreter"` // the Python to run (default python3)
}

// DefaultConfig is the procedural set with short limits.
func DefaultConfig() Config {
	return Config{Source: "procedural", Seed: 1, TimeoutSeconds: 10, MemoryMiB: 512, Interpreter: "python3"}
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
		return fmt.Errorf("env.coding.timeout_s: must be in (0, 600], got %g", c.TimeoutSeconds)
	case c.MemoryMiB < 64:
		return fmt.Errorf("env.coding.memory_mib: must be >= 64, got %d", c.MemoryMiB)
	case c.Interpreter == "":
		return fmt.Errorf("env.coding.interpreter: name the Python interpreter (python3)")
	}
	return nil
}

// Term weights.
const (
	StructureWeight = 1.0
	SyntaxWeight    = 1.0
	TestsWeight     = 1.5
	AuxWeight       = 0.5
	MaxReward       = StructureWeight + SyntaxWeight + TestsWeight + AuxWeight
)

// Env is the coding environment for one split.
type Env struct {
	rollout.TaskSource
	box    *sandbox.Sandbox
	python string
}

func (*Env) Name() string { return "coding" }

// New builds a split and checks that the sandbox runs python3.
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
	box, err := sandbox.New(sandbox.Limits{
		Wall: time.Duration(cfg.TimeoutSeconds * float64(time.Second)), CPU: time.Duration(cfg.TimeoutSeconds * float64(time.Second)),
		Memory: cfg.MemoryMiB << 20, Processes: 16, Output: 1 << 20, FileSize: 16 << 20,
	})
	if err != nil {
		return nil, fmt.Errorf("coding: %w", err)
	}
	e := &Env{TaskSource: tasks, box: box, python: cfg.Interpreter}
	if res := e.run(map[string][]byte{"probe.py": []byte("print('ok')\n")}, "probe.py"); res.Outcome != sandbox.Passed {
		return nil, fmt.Errorf("coding: the sandbox cannot run %s (%s: %s %s); install python3 and bubblewrap (scripts/setup.sh)", cfg.Interpreter, res.Outcome, res.Detail, strings.TrimSpace(string(res.Stderr)))
	}
	return e, nil
}

func (e *Env) run(files map[string][]byte, script string) sandbox.Result {
	return e.box.Run(context.Background(), files, e.python, "-I", script)
}

var (
	fence   = regexp.MustCompile("(?s)```(?:python|py)?\\s*\\n(.*?)```")
	defLine = regexp.MustCompile(`(?m)^def\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(`)
)

// Code extracts the program from a response: the last fenced block, else
// the whole text.
func Code(response string) string {
	if m := fence.FindAllStringSubmatch(response, -1); len(m) > 0 {
		return strings.TrimSpace(m[len(m)-1][1])
	}
	return strings.TrimSpace(response)
}

func defines(code, name string) bool {
	for _, m := range defLine.FindAllStringSubmatch(code, -1) {
		if m[1] == name {
			return true
		}
	}
	return false
}

// harness runs the tests one by one and prints a JSON verdict. It is
// troupe's own; tests are a list of Python snippets that raise on failure.
const harness = `import json, sys
src = open("solution.py").read()
tests = json.load(open("tests.json"))
try:
    compile(src, "solution.py", "exec")
except SyntaxError as e:
    print(json.dumps({"syntax": False, "error": str(e)[:300]}))
    sys.exit(0)
ns = {"__name__": "solution"}
try:
    exec(src, ns)
except BaseException as e:
    print(json.dumps({"syntax": True, "passed": 0, "total": len(tests), "error": repr(e)[:300]}))
    sys.exit(0)
passed, first = 0, ""
for t in tests:
    try:
        exec(t, dict(ns))
        passed += 1
    except BaseException as e:
        if not first:
            first = repr(e)[:300]
print(json.dumps({"syntax": True, "passed": passed, "total": len(tests), "error": first}))
`

type verdict struct {
	Syntax bool   `json:"syntax"`
	Passed int    `json:"passed"`
	Total  int    `json:"total"`
	Error  string `json:"error"`
}

// JointScore runs [helper, main] against the task's tests.
func (e *Env) JointScore(task rollout.Task, turn int, outputs []string) rollout.JointResult {
	res := e.jointScore(task, turn, outputs)
	for _, t := range res.Terms {
		res.Reward += t
	}
	return res
}

// jointScore fills the terms level by level, returning at the first that
// fails; JointScore sums them.
func (e *Env) jointScore(task rollout.Task, _ int, outputs []string) rollout.JointResult {
	terms := map[string]float64{"structure": 0, "syntax": 0, "tests": 0, "aux_used": 0}
	res := rollout.JointResult{Terms: terms, Stats: map[string]float64{}}
	if len(outputs) != 2 {
		res.Feedback = fmt.Sprintf("coding needs a helper and a main program, got %d", len(outputs))
		return res
	}
	helper, main := Code(outputs[0]), Code(outputs[1])
	entry := task.Meta["entry_point"]
	var missing []string
	if !defines(helper, "aux") {
		missing = append(missing, "the helper does not define aux")
	}
	if !defines(main, entry) {
		missing = append(missing, fmt.Sprintf("the main program does not define %s", entry))
	}
	if len(missing) > 0 {
		res.Feedback = strings.Join(missing, "; ") + "."
		return res
	}
	terms["structure"] = StructureWeight
	program := helper + "\n\n\n" + main + "\n"
	run := e.run(map[string][]byte{"solution.py": []byte(program), "tests.json": []byte(task.Meta["tests"]), "harness.py": []byte(harness)}, "harness.py")
	for _, o := range []sandbox.Outcome{sandbox.Passed, sandbox.Failed, sandbox.TimedOut, sandbox.OutOfMemory, sandbox.Crashed, sandbox.OutputLimit, sandbox.Unavailable} {
		res.Stats["run/"+strings.ReplaceAll(o.String(), " ", "_")] = 0
	}
	res.Stats["run/"+strings.ReplaceAll(run.Outcome.String(), " ", "_")] = 1
	var v verdict
	switch run.Outcome {
	case sandbox.Passed:
		if err := json.Unmarshal(lastLine(run.Stdout), &v); err != nil {
			res.Feedback = "the program printed over the test report; do not print at import time"
			return res
		}
	case sandbox.Unavailable:
		res.Feedback = "sandbox unavailable: " + run.Detail
		return res
	default: // the harness itself was stopped: the program looped, crashed or ate memory
		res.Feedback = fmt.Sprintf("the program %s while the tests ran", run.Outcome)
		terms["syntax"] = SyntaxWeight // the harness compiles before running anything that can hang
		return res
	}
	if !v.Syntax {
		res.Feedback = "the joint program does not compile: " + v.Error
		return res
	}
	terms["syntax"] = SyntaxWeight
	if v.Total > 0 {
		terms["tests"] = TestsWeight * float64(v.Passed) / float64(v.Total)
	}
	if usesAux(main, helper) {
		terms["aux_used"] = AuxWeight
	}
	res.Success = v.Total > 0 && v.Passed == v.Total
	res.Feedback = fmt.Sprintf("%d of %d tests passed", v.Passed, v.Total)
	if v.Error != "" && !res.Success {
		res.Feedback += "; the first failure: " + v.Error
	}
	return res
}

func lastLine(b []byte) []byte {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return []byte(s)
}

// usesAux: the main program calls aux, and aux's body holds more than pass.
func usesAux(main, helper string) bool {
	if !strings.Contains(main, "aux(") {
		return false
	}
	body := helper[strings.Index(helper, "def aux"):]
	lines := strings.Split(body, "\n")[1:]
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l != "" && l != "pass" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, `"""`) {
			return true
		}
	}
	return false
}

// Score runs one response as the main program with no helper: 1 when every
// test passes (for evaluating a single coder).
func (e *Env) Score(task rollout.Task, response string) rollout.Score {
	r := e.JointScore(task, 0, []string{"def aux(*args):\n    return None\n", response})
	if r.Success {
		return rollout.Score{Reward: 1, Success: true}
	}
	return rollout.Score{}
}

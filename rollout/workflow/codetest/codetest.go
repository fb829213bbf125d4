// Package codetest is AT-GRPO's code team: a coder that writes the task's
// function and a tester that writes unit tests for it, turn after turn,
// registered as the workflow "code-test" with its options under
// workflow.code_test. It plays in an environment that runs a program
// against assert tests in the sandbox (rollout.JointScorer with a "tests"
// term: coding).
//
// Files: codetest.go (the options, the game over the environment, the
// registration and the presets).
//
// Per turn, in the reference's order (PettingLLMs' code_L1_prompt.yaml:
// turn_order code_generator, test_generator; max_turns 5):
//
//	the coder's function: reward = the share of the task's own tests it
//	passes (the reference's ground_truth_test_vs_generated_code_match_ratio);
//	the tester's asserts: reward = the share of them the task's reference
//	solution passes (generated_test_vs_golden_code_match_ratio: tests that
//	are right about the task), 0 without asserts or without a reference
//	(HumanEval's canonical_solution and MBPP's code are the golden programs
//	of file tasks, the generator's helper and main those of procedural ones);
//	the episode ends when the coder's function passes every assert of the
//	tester's (the reference's done).
//
// Every program runs through the environment's harness (docs/sandbox.md):
// the coder's function with a stub helper, the reference solution with the
// task's own helper. The tester's asserts are model-written code too, and
// never run: the harness reads each as data (the entry point called on
// literal arguments, its value compared with a literal) and fails any other
// assert, so `assert True`, a patch, an exit or a write to a descriptor
// earns nothing (docs/sandbox.md, "Tests a model wrote"). The team sees how the latest function fared on the
// latest generated tests (the reference's mismatch history); nothing of the
// task's own tests or its reference solution.
//
// Departures:
//  1. The reference's tasks are stdin/stdout programs with input/output
//     pairs; here they are functions with assert tests (the coding
//     environment's procedural set, HumanEval, MBPP), and the tester writes
//     asserts. Each assert is read as the reference reads its test case,
//     as data: one call of the entry point on literal arguments and its
//     expected value (`assert f(args) == expected`, or `is None/True/False`,
//     a bare call, `not` a call); any other assert counts as a wrong test.
//     A task without a reference solution (a JSONL record with neither
//     canonical_solution nor code) leaves the tester's reward 0 and the run
//     logs tester_judged 0.
//  2. Success is the coder's latest function passing all of the task's
//     tests, as the reference's coder success.
package codetest

import (
	"fmt"
	"regexp"
	"strings"

	"troupe/rollout"
	"troupe/rollout/workflow/tree"
)

// Options configures the code team.
type Options struct {
	Coder      string `yaml:"coder"`      // the agent writing the function
	Tester     string `yaml:"tester"`     // the agent writing asserts
	Candidates int    `yaml:"candidates"` // K per (turn, agent); 1 with mode no-tree
	MaxTurns   int    `yaml:"max_turns"`  // turns at most
	Mode       string `yaml:"mode"`       // tree | no-tree
	MaxTests   int    `yaml:"max_tests"`  // asserts of the tester's that run at most
}

// DefaultOptions is the reference's setting with K = 4.
func DefaultOptions() Options {
	return Options{Coder: "coder", Tester: "tester", Candidates: 4, MaxTurns: 5, Mode: tree.ModeTree, MaxTests: 10}
}

func (o Options) treeOptions() tree.Options {
	return tree.Options{Agents: []string{o.Coder, o.Tester}, Candidates: o.Candidates, MaxTurns: o.MaxTurns, Mode: o.Mode}
}

// Validate checks the options; errors name their key under
// workflow.code_test.
func (o Options) Validate() error {
	if o.Coder == "" || o.Tester == "" || o.Coder == o.Tester {
		return fmt.Errorf("workflow.code_test.coder, tester: name two different agents, got %q and %q", o.Coder, o.Tester)
	}
	if o.MaxTests < 1 || o.MaxTests > 100 {
		return fmt.Errorf("workflow.code_test.max_tests: must be in [1, 100], got %d", o.MaxTests)
	}
	if err := o.treeOptions().Validate(); err != nil {
		return fmt.Errorf("%s", strings.Replace(err.Error(), "workflow.tree.", "workflow.code_test.", 1))
	}
	return nil
}

// PooledGroups: with mode no-tree the estimator must pool a task's
// environments.
func (o Options) PooledGroups() bool { return o.treeOptions().PooledGroups() }

// WrittenTestScorer is an environment that scores a program on the task's
// own tests (JointScore) and on tests a model wrote (ScoreWrittenTests),
// which it must read as data and never run: the tester's asserts are
// model-written code, and run beside the verdict they could grant
// themselves any reward. The coding environment is one.
type WrittenTestScorer interface {
	rollout.JointScorer
	ScoreWrittenTests(task rollout.Task, outputs []string, tests []string) rollout.JointResult
}

// game is the code task as a turn-based environment over the harness.
type game struct {
	WrittenTestScorer
	opts Options
}

// state is one episode's latest function and tests.
type state struct {
	task    rollout.Task
	code    string // the coder's latest function ("" before the first)
	passed  bool   // it passes all of the task's tests
	agreed  bool   // it passes all of the tester's latest asserts: the episode is over
	history tree.Transcript
}

func (s *state) Clone() rollout.State {
	c := *s
	c.history = s.history.Clone()
	return &c
}

func (s *state) Observation() string { return s.history.Text("No function or tests yet.") }

func (s *state) Done() bool    { return s.agreed }
func (s *state) Success() bool { return s.passed }

func (g game) Reset(task rollout.Task) (rollout.State, error) {
	if task.Meta["entry_point"] == "" || task.Meta["tests"] == "" {
		return nil, fmt.Errorf("code-test: task %s has no entry_point or tests; use the coding environment", task.ID)
	}
	return &state{task: task}, nil
}

const stubHelper = "def aux(*args):\n    return None\n"

// share runs main (with helper) against the task's own tests (asserts
// nil) or the tester's asserts, and returns the share passed, whether all
// passed, and the harness's feedback.
func (g game) share(task rollout.Task, asserts []string, helper, main string) (float64, bool, string) {
	outputs := []string{helper, main}
	var r rollout.JointResult
	if asserts == nil {
		r = g.JointScore(task, 0, outputs)
	} else {
		r = g.ScoreWrittenTests(task, outputs, asserts)
	}
	return r.Stats[TestsShareStat], r.Success, r.Feedback
}

// TestsShareStat is the stat in which the environment reports the share of
// the tests the program passed (the coding environment does; 0 when the
// program did not compile or the runner failed).
const TestsShareStat = "tests/share"

// Step scores the coder's function on the task's tests, or the tester's
// asserts on the reference solution and the latest function.
func (g game) Step(s rollout.State, agent, action string) rollout.StepResult {
	st := s.(*state)
	turn := len(st.history) + 1
	if agent == g.opts.Coder {
		st.code = action
		share, all, _ := g.share(st.task, nil, stubHelper, "```python\n"+action+"\n```")
		st.passed = all
		return rollout.StepResult{Reward: share, Message: "the coder wrote a new version of the function",
			Metrics: map[string]float64{"coder_tests_passed": share}}
	}
	asserts := Asserts(action, g.opts.MaxTests)
	if len(asserts) == 0 {
		st.history = append(st.history, fmt.Sprintf("turn %d: the tester wrote no asserts", turn))
		return rollout.StepResult{Reward: 0, Message: "the tester wrote no asserts", Metrics: map[string]float64{"tester_judged": 0}}
	}
	reward, judged := 0.0, 0.0
	if helper, main, ok := golden(st.task); ok {
		reward, _, _ = g.share(st.task, asserts, helper, "```python\n"+main+"\n```")
		judged = 1
	}
	msg := fmt.Sprintf("turn %d: the tester wrote %d asserts", turn, len(asserts))
	if st.code != "" {
		_, all, feedback := g.share(st.task, asserts, stubHelper, "```python\n"+st.code+"\n```")
		st.agreed = all
		msg += "; against the coder's latest function: " + feedback
	}
	st.history = append(st.history, msg)
	return rollout.StepResult{Reward: reward, Message: msg, Metrics: map[string]float64{"tester_tests_right": reward, "tester_judged": judged}}
}

// golden is the task's reference solution as (helper, main): a file
// task's whole solution as main with an empty helper, or a procedural
// task's own helper and main; ok is false when the task has none.
func golden(task rollout.Task) (helper, main string, ok bool) {
	if sol := task.Meta["solution"]; strings.TrimSpace(sol) != "" {
		return "", sol, true
	}
	if main := task.Meta["main"]; main != "" {
		return task.Meta["helper"], main, true
	}
	return "", "", false
}

var assert = regexp.MustCompile(`(?m)^\s*(assert\s.+)$`)

// Asserts returns the single-line assert statements of a response's fenced
// blocks (or of the response itself when it has none), at most max.
func Asserts(response string, max int) []string {
	text := response
	if blocks := rollout.PythonBlocks(response); len(blocks) > 0 {
		text = strings.Join(blocks, "\n")
	}
	var out []string
	for _, m := range assert.FindAllStringSubmatch(text, -1) {
		if len(out) == max {
			break
		}
		out = append(out, strings.TrimSpace(m[1]))
	}
	return out
}

// codeParser reads the last fenced block: the coder's function.
var codeParser = rollout.PythonParser("the function")

// testsParser keeps the whole response (Step reads its asserts); valid when
// it holds at least one.
var testsParser = rollout.ParserFunc(func(response string) rollout.Parsed {
	if len(Asserts(response, 1)) == 0 {
		return rollout.Parsed{Value: response, Problem: "no assert statement"}
	}
	return rollout.Parsed{Valid: true, Value: response}
})

const (
	system = "You are one member of a two-person team that writes a correct Python function: one writes the function, the other writes unit tests for it. Follow your own role exactly."
	user   = "# Task Introduction\nComplete this Python function:\n{{.Task}}\n\n# History\n{{index .Extra \"observation\"}}\n" + rollout.TeamAndRole
)

func init() {
	rollout.RegisterParser("codetest-function", codeParser)
	rollout.RegisterParser("codetest-asserts", testsParser)
	rollout.RegisterPreset("codetest-coder", rollout.Preset{System: system, User: user, Parser: "codetest-function",
		Role: "You are the Coder. Write the complete function in one ```python block. If the tester's asserts failed against your last version, decide whether your function or the test is wrong, and fix your function if it is."})
	rollout.RegisterPreset("codetest-tester", rollout.Preset{System: system, User: user, Parser: "codetest-asserts",
		Role: "You are the Tester. Write unit tests for the function as single-line assert statements (assert f(args) == expected, with literal arguments and a literal expected value), one per line, in one ```python block. Work out each expected value from the task itself, not from the coder's function."})
	tree.RegisterTeam("code-test", tree.Team[Options]{
		Key:      "code_test",
		Defaults: DefaultOptions,
		RoleKeys: [2]string{"coder", "tester"},
		Roles:    func(o Options) [2]string { return [2]string{o.Coder, o.Tester} },
		Agents: [2]rollout.AgentConfig{
			{Name: "coder", Model: "policy", Preset: "codetest-coder", FormatPenalty: 0.1},
			{Name: "tester", Model: "policy", Preset: "codetest-tester", FormatPenalty: 0.1},
		},
		New: New,
	})
}

// New is the code-test workflow: the tree workflow over a game of the
// coder's functions and the tester's asserts, scored by env's harness.
func New(opts Options, agents []*rollout.Agent, env rollout.Scorer) (rollout.Workflow, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	ws, ok := env.(WrittenTestScorer)
	if !ok {
		return nil, fmt.Errorf("workflow code-test: the environment (%T) does not run programs against written tests; use the coding environment", env)
	}
	return tree.New(opts.treeOptions(), agents, game{WrittenTestScorer: ws, opts: opts})
}

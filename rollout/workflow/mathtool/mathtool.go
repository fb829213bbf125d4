// Package mathtool is AT-GRPO's math team: a tool agent that writes a
// Python program whose last printed line is its answer (run in the sandbox)
// and a reasoner that answers in \boxed{}, turn after turn, registered as
// the workflow "math-tool" with its options under workflow.math_tool. It
// plays in any environment that scores a \boxed{} answer (math); the
// environment grades the reasoner's whole response (its last \boxed{} in
// env.math.grading: boxed, whatever Math-Verify finds in verifier, as
// PettingLLMs does), and the program's printed answer as it is (verifier)
// or as if boxed (boxed).
//
// Files: mathtool.go (the options, the game over the environment's scorer,
// the registration and the presets).
//
// Per turn, in the reference's order (PettingLLMs' math_L1_prompt.yaml:
// turn_order tool_generator, reasoning_generator; max_turns 5):
//
//	the tool agent's program runs; the last line it printed is its answer:
//	reward 1 if the environment scores it correct, 0 if not, −1 if the
//	program printed nothing or failed;
//	the reasoner's answer (its response, graded by the environment):
//	reward 1 if correct, else 0;
//	the episode ends when the two answers of one turn agree (judged by the
//	environment's own equivalence), or after max_turns.
//
// Each agent sees the answers given so far (the observation) and the chosen
// outputs of its teammates; nothing says which answer is correct. The turns
// are driven by the tree workflow (rollout/workflow/tree) over this game,
// so tree sampling (K candidates per turn and agent, the best continues),
// mode: no-tree and the group filter all apply; the reward of each row is
// its own agent's.
//
// Departures:
//  1. The reference shows each agent the full history of both agents'
//     solutions (truncated to 300 characters) and their extracted answers,
//     except the reasoner at turn 0, which sees nothing of the tool's first
//     program. Here the answers are the observation and the chosen outputs
//     reach every later call as team context, at turn 0 too: the reasoner
//     may check the program's answer (the point of pairing them).
//  2. Success is the reasoner's last answer being correct (its first
//     agreeing one when the episode ends early); the reference counts any
//     correct agent output.
package mathtool

import (
	"fmt"
	"strings"

	"troupe/rollout"
	"troupe/rollout/workflow/tree"
)

// Options configures the math team.
type Options struct {
	Tool           string  `yaml:"tool"`            // the agent writing programs
	Reasoner       string  `yaml:"reasoner"`        // the agent answering in \boxed{}
	Candidates     int     `yaml:"candidates"`      // K per (turn, agent); 1 with mode no-tree
	MaxTurns       int     `yaml:"max_turns"`       // turns at most
	Mode           string  `yaml:"mode"`            // tree | no-tree
	Interpreter    string  `yaml:"interpreter"`     // absolute path of the Python 3 that runs the programs
	ProgramSeconds float64 `yaml:"program_seconds"` // wall-clock and CPU limit of one program (the reference: 20)
}

// DefaultOptions is the reference's setting with K = 4.
func DefaultOptions() Options {
	return Options{Tool: "tool", Reasoner: "reasoner", Candidates: 4, MaxTurns: 5, Mode: tree.ModeTree,
		Interpreter: "/usr/bin/python3", ProgramSeconds: 20}
}

// treeOptions are the tree workflow's options for the team.
func (o Options) treeOptions() tree.Options {
	return tree.Options{Agents: []string{o.Tool, o.Reasoner}, Candidates: o.Candidates, MaxTurns: o.MaxTurns,
		Mode: o.Mode, Programs: []string{o.Tool}, Interpreter: o.Interpreter, ProgramSeconds: o.ProgramSeconds,
		ProgramOutput: tree.OutputLastLine}
}

// Validate checks the options; errors name their key under
// workflow.math_tool.
func (o Options) Validate() error {
	if o.Tool == "" || o.Reasoner == "" || o.Tool == o.Reasoner {
		return fmt.Errorf("workflow.math_tool.tool, reasoner: name two different agents, got %q and %q", o.Tool, o.Reasoner)
	}
	if err := o.treeOptions().Validate(); err != nil {
		return fmt.Errorf("%s", strings.Replace(err.Error(), "workflow.tree.", "workflow.math_tool.", 1))
	}
	return nil
}

// PooledGroups: with mode no-tree the estimator must pool a task's
// environments (config asks atgrpo for key: prompt).
func (o Options) PooledGroups() bool { return o.treeOptions().PooledGroups() }

// game is the math task as a turn-based environment over a scorer.
type game struct {
	rollout.Scorer
	tool, reasoner string
}

// wholeResponses is implemented by a scorer that reads a whole response
// rather than its last \boxed{} (the math environment's verifier grading).
type wholeResponses interface{ GradesWholeResponse() bool }

// graded is the text the scorer grades for a program's printed answer:
// the line as it is for a scorer of whole responses, else as a box.
func (g game) graded(printed string) string {
	if w, ok := g.Scorer.(wholeResponses); ok && w.GradesWholeResponse() {
		return printed
	}
	return `\boxed{` + printed + `}`
}

func (g game) Name() string {
	if e, ok := g.Scorer.(rollout.Environment); ok {
		return e.Name()
	}
	return "math-tool"
}

func (g game) Len() int {
	if e, ok := g.Scorer.(rollout.Environment); ok {
		return e.Len()
	}
	return 0
}

func (g game) Task(i int) rollout.Task {
	if e, ok := g.Scorer.(rollout.Environment); ok {
		return e.Task(i)
	}
	return rollout.Task{}
}

// state is one episode's answers.
type state struct {
	task     rollout.Task
	answers  tree.Transcript // "turn 1, tool's program: 42", … (the observation)
	code     string          // the tool's answer of the current turn ("" if none)
	correct  bool            // the reasoner's last answer was correct
	answered bool            // the reasoner answered at least once
	agreed   bool            // the two answers of a turn agreed: the episode is over
}

func (s *state) Clone() rollout.State {
	c := *s
	c.answers = s.answers.Clone()
	return &c
}

func (s *state) Observation() string { return s.answers.Text("No answers yet.") }

func (s *state) Done() bool    { return s.agreed }
func (s *state) Success() bool { return s.answered && s.correct }

func (g game) Reset(task rollout.Task) (rollout.State, error) { return &state{task: task}, nil }

// Step scores the tool's printed answer or the reasoner's response (the
// reasoner's action is its whole response, parser mathtool-answer).
func (g game) Step(s rollout.State, agent, action string) rollout.StepResult {
	st := s.(*state)
	action = strings.TrimSpace(action)
	turn := len(st.answers)/2 + 1
	if agent == g.tool {
		right := action != "" && g.Score(st.task, g.graded(action)).Success
		st.code = action
		if action == "" {
			st.answers = append(st.answers, fmt.Sprintf("turn %d, the program: no answer", turn))
			return rollout.StepResult{Reward: -1, Message: "the program gave no answer", Metrics: map[string]float64{"program_answers": 0}}
		}
		st.answers = append(st.answers, fmt.Sprintf("turn %d, the program: %s", turn, action))
		return rollout.StepResult{Reward: reward(right), Message: "the program's answer: " + action,
			Metrics: map[string]float64{"program_answers": 1, "program_correct": reward(right)}}
	}
	score := g.Score(st.task, action)
	right := score.Success
	st.answered, st.correct = true, right
	shown := score.Extracted
	if shown == "" {
		shown = "none"
	}
	st.answers = append(st.answers, fmt.Sprintf("turn %d, the reasoning: %s", turn, shown))
	// agreement by the environment's own equivalence: the program's answer as the gold
	st.agreed = st.code != "" && score.Extracted != "" && g.Score(rollout.Task{Answer: st.code}, action).Success
	msg := "the reasoning's answer: " + shown
	if st.agreed {
		msg += "; it agrees with the program's"
	}
	return rollout.StepResult{Reward: reward(right), Message: msg, Metrics: map[string]float64{"reasoner_correct": reward(right), "agreed": reward(st.agreed)}}
}

func reward(ok bool) float64 {
	if ok {
		return 1
	}
	return 0
}

const (
	system = "You are one member of a small team that solves mathematics problems together: one member computes with a program, the other reasons. Follow your own role exactly."
	user   = "# Task Introduction\n{{.Task}}\n\n# Answers So Far\n{{index .Extra \"observation\"}}\n" + rollout.TeamAndRole
)

// The presets are named after the workflow, not "math-…": `train init
// --text math` learns its merges from the math presets, and the Dr. MAS
// demo models' tokenizers stay as they were.
func init() {
	rollout.RegisterPreset("mathtool-program", rollout.Preset{System: system, User: user, Parser: "python-program",
		Role: "You are the Tool agent. Write a short Python 3 program (standard library only) that computes the answer. If earlier answers are shown, check them and fix what is wrong. " +
			"Put the whole program in one ```python block; it runs in a sandbox without input, for a few seconds at most, and the last line it prints is your answer, so end with print(answer)."})
	rollout.RegisterParser("mathtool-answer", rollout.ParserFunc(answerParser))
	rollout.RegisterPreset("mathtool-reasoner", rollout.Preset{System: system, User: user, Parser: "mathtool-answer",
		Role: `You are the Reasoner. Solve the problem step by step; if the program's answer is shown, check it against your own reasoning and keep whichever is right.
Finish with the final answer alone inside \boxed{}, for example \boxed{42}.`})
	tree.RegisterTeam("math-tool", tree.Team[Options]{
		Key:      "math_tool",
		Defaults: DefaultOptions,
		RoleKeys: [2]string{"tool", "reasoner"},
		Roles:    func(o Options) [2]string { return [2]string{o.Tool, o.Reasoner} },
		Agents: [2]rollout.AgentConfig{
			{Name: "tool", Model: "policy", Preset: "mathtool-program", FormatPenalty: 0.1},
			{Name: "reasoner", Model: "policy", Preset: "mathtool-reasoner", FormatPenalty: 0.1},
		},
		New: New,
	})
}

// answerParser passes the reasoner's whole response on (the environment
// finds its answer); the response kept the format when it has a \boxed{}
// answer after any </think>, as the boxed parser asks.
func answerParser(response string) rollout.Parsed {
	p, _ := rollout.ParserByName("boxed")
	parsed := p.Parse(response)
	parsed.Value = strings.TrimSpace(response)
	return parsed
}

// New is the math-tool workflow: the tree workflow over a game of the tool
// agent's programs and the reasoner's answers, scored by env.
func New(opts Options, agents []*rollout.Agent, env rollout.Scorer) (rollout.Workflow, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return tree.New(opts.treeOptions(), agents, game{Scorer: env, tool: opts.Tool, reasoner: opts.Reasoner})
}

package config_test

// A workflow and an environment added from outside troupe's own packages:
// each registers itself from its package's init (here, this test's), and
// config decodes, checks and resolves them, and the sampler runs them, by
// name alone. In the tree, a new one is its package plus one line in
// config/plugins.go.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/config"
	"troupe/rollout"
	"troupe/rollout/answer"
	"troupe/rollout/scripted"
)

// echoOptions is workflow.echo.
type echoOptions struct {
	Agent  string `yaml:"agent"`  // the answering agent
	Rounds int    `yaml:"rounds"` // answers per episode; the last one is scored
}

func (o echoOptions) Validate() error {
	if o.Rounds < 1 {
		return fmt.Errorf("workflow.echo.rounds: must be >= 1, got %d", o.Rounds)
	}
	return nil
}

// echo lets one agent answer Rounds times, each time seeing its earlier
// answers, and scores the last.
type echo struct {
	opts  echoOptions
	agent *rollout.Agent
	env   rollout.Scorer
}

func (w *echo) Name() string             { return "echo" }
func (w *echo) Agents() []*rollout.Agent { return []*rollout.Agent{w.agent} }
func (w *echo) Begin(ep *rollout.Episode) ([]*rollout.Call, error) {
	return []*rollout.Call{ep.Linear(w.agent, rollout.NewPromptData(ep.Task.Question, nil, 0))}, nil
}
func (w *echo) Advance(ep *rollout.Episode, done []*rollout.Call) ([]*rollout.Call, error) {
	ep.Remember(done[0])
	if len(ep.Calls) < w.opts.Rounds {
		return []*rollout.Call{ep.Linear(w.agent, rollout.NewPromptData(ep.Task.Question, ep.Context, 0))}, nil
	}
	ep.Finish(w.env.Score(ep.Task, done[0].Response))
	return nil, nil
}

// sums is env.sums: "What is i + i?" for i < size.
type sumsConfig struct {
	Size int `yaml:"size"`
}

type sums struct{ rollout.SliceSource }

func (sums) Name() string { return "sums" }
func (sums) Score(t rollout.Task, response string) rollout.Score {
	got, _ := answer.Final(response)
	if got == t.Answer {
		return rollout.Score{Reward: 1, Success: true, Extracted: got}
	}
	return rollout.Score{Extracted: got}
}

func init() {
	rollout.RegisterEnvironment("sums", rollout.EnvironmentSpec{
		Key:      "sums",
		Defaults: func() any { return sumsConfig{Size: 4} },
		Validate: func(o any) error {
			if o.(sumsConfig).Size < 1 {
				return fmt.Errorf("env.sums.size: must be >= 1")
			}
			return nil
		},
		Build: func(o any) (rollout.Environment, rollout.Environment, error) {
			var tasks rollout.SliceSource
			for i := 0; i < o.(sumsConfig).Size; i++ {
				tasks = append(tasks, rollout.Task{ID: fmt.Sprint(i), Question: fmt.Sprintf("What is %d + %d?", i, i), Answer: fmt.Sprint(2 * i)})
			}
			return sums{tasks}, nil, nil
		},
		Workflows: []string{"echo"},
	})
	rollout.RegisterWorkflow("echo", rollout.WorkflowSpec{
		Key:      "echo",
		Defaults: func() any { return echoOptions{Agent: "talker", Rounds: 1} },
		Validate: func(o any) error { return o.(echoOptions).Validate() },
		Roles: func(o any) map[string]string {
			return rollout.RoleKeys("echo", map[string]string{"agent": o.(echoOptions).Agent})
		},
		Build: func(o any, agents []*rollout.Agent, env rollout.Scorer) (rollout.Workflow, error) {
			opts, err := rollout.OptionsOf("echo", o, func() echoOptions { return echoOptions{Agent: "talker", Rounds: 1} })
			if err != nil {
				return nil, err
			}
			a, err := rollout.AgentByName(agents, opts.Agent, "workflow.echo.agent")
			if err != nil {
				return nil, err
			}
			return &echo{opts: opts, agent: a, env: env}, nil
		},
		Agents: func() []rollout.AgentConfig {
			return []rollout.AgentConfig{{Name: "talker", Model: "policy", Preset: "math-single"}}
		},
		Estimators: rollout.LinearEstimators,
	})
}

func TestOutsideWorkflowPlugsIn(t *testing.T) {
	model := t.TempDir()
	for _, f := range []string{"config.json", "tokenizer.json"} {
		if err := os.WriteFile(filepath.Join(model, f), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	y := `
run: {name: t, output_dir: ` + t.TempDir() + `, steps: 1}
models:
  tiny: {path: ` + model + `}
agents:
  - {name: talker, preset: math-single}
workflow: {name: echo, echo: {rounds: 2}}
env: {name: sums, sums: {size: 3}}
advantage: {estimator: grpo}
`
	c, err := config.Parse([]byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	if o := c.Workflow.Options().(echoOptions); o.Rounds != 2 || o.Agent != "talker" {
		t.Fatalf("workflow.echo decoded over its defaults: %+v", o)
	}
	for set, want := range map[string]string{
		"workflow.echo.rounds=0":     "workflow.echo.rounds: must be >= 1, got 0",
		"workflow.echo.agent=nobody": `workflow.echo.agent: names agent "nobody", which is not configured`,
		"workflow.echo.rouns=2":      "workflow.echo.rouns: unknown key (did you mean rounds?)",
		"env.sums.size=0":            "env.sums.size: must be >= 1",
		"advantage.estimator=magrpo": `workflow "echo" does not produce the rows estimator "magrpo" needs`,
		"workflow.name=single":       `environment "sums" does not play workflow "single" (it plays "echo")`,
		"workflow.echo.rounds=twice": `workflow.echo.rounds: "twice" is not a valid integer`,
	} {
		if _, err := config.Parse([]byte(y), []string{set}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--set %s: %v, want %q", set, err, want)
		}
	}
	envOpts, err := c.Env.Options()
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := rollout.EnvironmentOf(c.Env.Name)
	train, _, err := spec.Build(envOpts)
	if err != nil {
		t.Fatal(err)
	}
	agents, err := rollout.NewAgents(c.AgentConfigs(), c.AgentDefaults(), func(rollout.AgentConfig) (rollout.Binding, error) { return scripted.Binding(), nil })
	if err != nil {
		t.Fatal(err)
	}
	wf, err := rollout.NewWorkflow(c.Workflow.Name, c.Workflow.Options(), agents, train)
	if err != nil {
		t.Fatal(err)
	}
	// the model answers 2 + 2 = 4 to everything: right only for task 2
	s := rollout.Sampler{Generators: map[string]rollout.Generator{agents[0].Model: scripted.New(scripted.Fixed(`\boxed{4}`))}}
	out, err := s.Run(wf, []rollout.Task{train.Task(0), train.Task(2)}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Samples) != 4 || out.Samples[0].Reward != 0 || out.Samples[3].Reward != 1 {
		t.Fatalf("2 episodes of 2 rounds, the second right: %+v", out.Samples)
	}
}

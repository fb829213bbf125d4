package config

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The AT-GRPO configs mirror PettingLLMs' recipe (docs/departures.md,
// "AT-GRPO"); the other configs leave the group filter off.
func TestATGRPOConfigsFollowTheReference(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "configs", "*.yaml"))
	for _, p := range paths {
		cfg := loadShipped(t, p)
		atgrpo := cfg.Workflow.Name == "tree" || filepath.Base(p)[:7] == "atgrpo-"
		f := cfg.Advantage.Filter
		switch {
		case atgrpo && f.LowestMeanFraction != 0.5:
			t.Errorf("%s: advantage.filter.lowest_mean_fraction %g, want the reference's 0.5", p, f.LowestMeanFraction)
		case !atgrpo && f.On():
			t.Errorf("%s: the group filter is on (%+v) outside an AT-GRPO config", p, f)
		}
		if !atgrpo {
			continue
		}
		if cfg.Recipe != "" {
			continue // the recipe's values, checked by TestRecipesMatchTheReferences
		}
		// every agent samples as the reference trains (train_temperature
		// 1.5, repetition_penalty 1.2), and evaluation greedily
		for _, ac := range cfg.AgentConfigs() {
			if s := ac.Sampling.Apply(cfg.Sampling); s.Temperature != 1.5 || s.RepetitionPenalty != 1.2 {
				t.Errorf("%s: agent %s samples at T %g, repetition penalty %g; want 1.5 and 1.2", p, ac.Name, s.Temperature, s.RepetitionPenalty)
			}
		}
		if cfg.Eval.Sampling.Temperature != 0 {
			t.Errorf("%s: eval.sampling.temperature %g, want 0 (val_temperature)", p, cfg.Eval.Sampling.Temperature)
		}
		if o := cfg.Optim; o.MiniBatchRows != 16 || o.Epochs != 1 {
			t.Errorf("%s: mini_batch_rows %d, epochs %d; want ppo_mini_batch_size 16, ppo_epochs 1", p, o.MiniBatchRows, o.Epochs)
		}
		if !strings.Contains(p, "tiny") { // the real-size recipe: eval.yaml's optimizer
			o := cfg.Optim
			if o.LR != 1e-6 || o.LRSchedule != "constant" || o.WarmupSteps != 0 || o.WeightDecay != 0.01 || o.GradClip != 1 || o.ClipLow != 0.2 || o.ClipHigh != 0.2 || o.DualClip != 3 || o.EntropyCoef != 0 || o.KLCoef != 0 {
				t.Errorf("%s: optim %+v; want lr 1e-6 constant, no warmup, wd 0.01, grad clip 1, clip 0.2/0.2, dual clip 3, no entropy or KL", p, o)
			}
			if cfg.Batch.PromptsPerStep != 32 || cfg.Run.Steps != 200 {
				t.Errorf("%s: %d prompts per step, %d steps; want train_batch_size 32, 200 steps", p, cfg.Batch.PromptsPerStep, cfg.Run.Steps)
			}
		}
	}
}

// loadShipped parses a shipped config as TestShippedConfigsValidate does:
// model directories unchecked, the dataset files it names created empty.
func loadShipped(t *testing.T, path string) *Config {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, m := range regexp.MustCompile(`(?m)^\s+(?:train|test|corpus|index):\s*(\S+)\s*$`).FindAllSubmatch(data, -1) {
		f := filepath.Join(dir, string(m[1]))
		os.MkdirAll(filepath.Dir(f), 0o755)
		os.WriteFile(f, nil, 0o644)
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	cfg, err := parse(data, nil, noModels)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return cfg
}

// Per-agent training sampling (PettingLLMs' train_llm_config: temperature
// 1.5, repetition penalty 1.2) reaches each agent's config, evaluation keeps
// eval.sampling, and a repetition penalty is refused with the engine's CUDA
// graphs (static batches carry no record of the tokens seen).
func TestPerAgentRepetitionPenalty(t *testing.T) {
	src := `
run: {name: t, output_dir: ` + t.TempDir() + `, steps: 3}
models:
  tiny: {path: ` + fakeModel(t) + `}
assignment: shared
agents:
  - {name: solver, preset: math-solver, sampling: {temperature: 1.5, repetition_penalty: 1.2}}
  - {name: verifier, preset: math-verifier, sampling: {temperature: 1.5, repetition_penalty: 1.2}}
eval: {sampling: {temperature: 0, top_p: 1}}
`
	_, err := Parse([]byte(src), []string{"engine.cuda_graphs=true"})
	if want := "agents[0].sampling.repetition_penalty: 1.2, but the engine's CUDA graphs do not apply a repetition penalty; set engine.cuda_graphs: false"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("with CUDA graphs: %v, want %q", err, want)
	}
	if _, err := Parse([]byte(src), []string{"engine.enabled=false", "engine.cuda_graphs=true"}); err != nil {
		t.Fatalf("batched Generate: %v", err)
	}
	c, err := Parse([]byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ac := range c.AgentConfigs() {
		s := ac.Sampling.Apply(c.Sampling)
		if s.Temperature != 1.5 || s.RepetitionPenalty != 1.2 || s.TopP != 1 {
			t.Errorf("agent %s samples with %+v in training, want T 1.5, penalty 1.2", ac.Name, s)
		}
	}
	if e := c.Eval.Sampling; e.Temperature != 0 || e.RepetitionPenalty == 1.2 {
		t.Errorf("eval.sampling %+v took the agents' training settings", e)
	}
	if _, err := Parse([]byte(src), []string{"agents[1].sampling.repetition_penalty=-1"}); err == nil || !strings.Contains(err.Error(), "repetition_penalty: must be a finite number > 0") {
		t.Errorf("a negative penalty: %v", err)
	}
}

// The tree workflow's rows feed atgrpo and the grouping ablations (grpo,
// grpo-step, drmas, rloo); mode: no-tree with atgrpo needs key: prompt.
func TestTreeEstimatorsAndNoTreeKey(t *testing.T) {
	src := `
run: {name: t, output_dir: ` + t.TempDir() + `, steps: 3}
models:
  tiny: {path: ` + fakeModel(t) + `}
assignment: shared
agents:
  - {name: tool, preset: plan-path-tool}
  - {name: plan, preset: plan-path-plan, reward_scale: 2}
workflow: {name: tree}
env: {name: plan-path}
advantage: {estimator: atgrpo}
`
	for _, est := range []string{"atgrpo", "grpo", "grpo-step", "drmas", "rloo"} {
		if _, err := Parse([]byte(src), []string{"advantage.estimator=" + est}); err != nil {
			t.Errorf("estimator %s on tree rows: %v", est, err)
		}
	}
	if _, err := Parse([]byte(src), []string{"advantage.estimator=magrpo"}); err == nil {
		t.Errorf("magrpo accepted on tree rows")
	}
	noTree := []string{"workflow.tree.mode=no-tree", "workflow.tree.candidates=1"}
	if _, err := Parse([]byte(src), noTree); err == nil || !strings.Contains(err.Error(), "set advantage.atgrpo.key: prompt") {
		t.Errorf("no-tree keyed by environment: %v", err)
	}
	if _, err := Parse([]byte(src), append(noTree, "advantage.atgrpo.key=prompt")); err != nil {
		t.Errorf("no-tree keyed by prompt: %v", err)
	}
}

// The math team registers as a plug-in: a config names it, the math
// environment plays it, its options decode under workflow.math_tool and its
// errors name that path.
func TestMathToolWorkflowConfig(t *testing.T) {
	src := `
run: {name: t, output_dir: ` + t.TempDir() + `, steps: 3}
models:
  tiny: {path: ` + fakeModel(t) + `}
assignment: shared
agents:
  - {name: tool, preset: mathtool-program}
  - {name: reasoner, preset: mathtool-reasoner}
workflow: {name: math-tool, math_tool: {candidates: 2, max_turns: 3}}
env: {name: math}
advantage: {estimator: atgrpo, filter: {lowest_mean_fraction: 0.5}}
`
	c, err := Parse([]byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%+v", c.Workflow.Options()); !strings.Contains(got, "Candidates:2") || !strings.Contains(got, "MaxTurns:3") {
		t.Errorf("workflow.math_tool decoded as %s", got)
	}
	if _, err := Parse([]byte(src), []string{"workflow.math_tool.program_seconds=0"}); err == nil || !strings.Contains(err.Error(), "workflow.math_tool.program_seconds") {
		t.Errorf("a zero program limit: %v", err)
	}
	if _, err := Parse([]byte(src), []string{"workflow.math_tool.reasoner=critic"}); err == nil || !strings.Contains(err.Error(), "critic") {
		t.Errorf("an unknown reasoner: %v", err)
	}
}

// The code team registers as a plug-in the coding environment plays.
func TestCodeTestWorkflowConfig(t *testing.T) {
	src := `
run: {name: t, output_dir: ` + t.TempDir() + `, steps: 3}
models:
  tiny: {path: ` + fakeModel(t) + `}
assignment: shared
agents:
  - {name: coder, preset: codetest-coder}
  - {name: tester, preset: codetest-tester}
workflow: {name: code-test, code_test: {candidates: 2, max_tests: 5}}
env: {name: coding}
advantage: {estimator: atgrpo}
`
	if _, err := Parse([]byte(src), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Parse([]byte(src), []string{"workflow.code_test.max_tests=0"}); err == nil || !strings.Contains(err.Error(), "workflow.code_test.max_tests") {
		t.Errorf("max_tests 0: %v", err)
	}
	if _, err := Parse([]byte(src), []string{"workflow.name=math-tool", "workflow.math_tool.tool=coder", "workflow.math_tool.reasoner=tester"}); err == nil || !strings.Contains(err.Error(), `environment "coding" does not play workflow "math-tool"`) {
		t.Errorf("the math team on coding: %v", err)
	}
}

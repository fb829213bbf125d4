package config

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"troupe/rollout"
	"troupe/rollout/env/coding"
	"troupe/rollout/env/sokoban"
	"troupe/rollout/env/sudoku"
	"troupe/rollout/workflow/codetest"
	"troupe/rollout/workflow/joint"
	"troupe/rollout/workflow/mathrefine"
	"troupe/rollout/workflow/mathtool"
	"troupe/rollout/workflow/tree"
)

// refValue is one value of a reference's recipe, in the reference's own
// terms, and where troupe's resolved config keeps it.
type refValue struct {
	ref  string            // the reference's key
	want any               // its value there
	got  func(*Config) any // the resolved config's
}

// The values every preset shares with its reference: the optimizer and
// loss, read from the resolved config's typed fields.
func optimValues(lr, gradClip float64, loss, agg, logprobs string) []refValue {
	return []refValue{
		{"optim.lr", lr, func(c *Config) any { return c.Optim.LR }},
		{"grad_clip", gradClip, func(c *Config) any { return c.Optim.GradClip }},
		{"weight_decay", 0.01, func(c *Config) any { return c.Optim.WeightDecay }},
		{"loss", loss, func(c *Config) any { return c.Optim.Loss }},
		{"loss_agg_mode", agg, func(c *Config) any { return c.Optim.LossAgg }},
		{"log-probs at", logprobs, func(c *Config) any { return c.Optim.LogProbTemperature }},
		{"kl", 0.0, func(c *Config) any { return c.Optim.KLCoef }},
	}
}

func sampling(t, p float64, k int) []refValue {
	return []refValue{
		{"train temperature", t, func(c *Config) any { return c.Sampling.Temperature }},
		{"train top_p", p, func(c *Config) any { return c.Sampling.TopP }},
		{"train top_k", k, func(c *Config) any { return c.Sampling.TopK }},
	}
}

func evalSampling(t, p float64, k, n int) []refValue {
	return []refValue{
		{"val temperature", t, func(c *Config) any { return c.Eval.Sampling.Temperature }},
		{"val top_p", p, func(c *Config) any { return c.Eval.Sampling.TopP }},
		{"val top_k", k, func(c *Config) any { return c.Eval.Sampling.TopK }},
		{"val samples", n, func(c *Config) any { return c.Eval.N }},
	}
}

func every(name string, want any, get func(rollout.AgentConfig) any) refValue {
	return refValue{name + " (every agent)", want, func(c *Config) any {
		for _, a := range c.Agents {
			if v := get(a.AgentConfig); v != want {
				return v
			}
		}
		return want
	}}
}

func batch(tasks, n int) []refValue {
	return []refValue{
		{"train_batch_size", tasks, func(c *Config) any { return c.Batch.PromptsPerStep }},
		{"group size", n, func(c *Config) any { return c.Batch.N }},
	}
}

func refs(parts ...[]refValue) []refValue {
	var out []refValue
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// Each preset, resolved over a config that names only the team, the
// workflow and the environment, against the values of its reference's own
// files (docs/departures.md cites each file and commit):
//
//	drmas               langfengQ/DrMAS examples/drmas_trainer/run_math.sh,
//	                    run_search.sh
//	atgrpo-pettingllms  PettingLLMs 244467e config/{stateful,math,code}/
//	                    *_L1_prompt.yaml, config/ppo_trainer/eval.yaml,
//	                    trainer/async_generate.py (sampling defaults),
//	                    trainer/multi_agents_ppo_trainer.py (the key)
//	magrpo-comlrl       LLM_Collab_Writing configs/magrpo_tldr_config.yaml,
//	                    LLM_Collab_Code_Generation configs/magrpo_he_config.yaml,
//	                    CoMLRL comlrl/trainers/reinforce/magrpo.py
func TestRecipesMatchTheReferences(t *testing.T) {
	const model = "models: {m: {path: M}}\n"
	for _, c := range []struct {
		name, yaml string
		want       []refValue
	}{
		{"drmas math", `recipe: drmas
agents: [{name: solver, model: m, preset: math-solver}, {name: verifier, model: m, preset: math-verifier}]
workflow: {name: math-refine, math_refine: {solver: solver, verifier: verifier}}
env: {name: math}
`, refs(optimValues(1e-6, 1, "clipped", "token-mean", "sampling"), sampling(1, 1, 0), evalSampling(0.6, 0.95, 0, 1), batch(32, 8), []refValue{
			{"adv_estimator grpo + group_by_agent_id", "drmas", func(c *Config) any { return c.Advantage.Estimator }},
			{"model_sharing False", "separate", func(c *Config) any { return c.Assignment }},
			{"max_response_length", 4096, func(c *Config) any { return c.MaxNewTokens }},
			{"ppo_mini_update_num", 1, func(c *Config) any { return c.Optim.UpdatesPerStep }},
			{"ppo_micro_batch_size_per_gpu", 4, func(c *Config) any { return c.Optim.MicroBatchSize }},
			{"clip_ratio_c", 3.0, func(c *Config) any { return c.Optim.DualClip }},
			{"entropy_coeff", 0.0, func(c *Config) any { return c.Optim.EntropyCoef }},
			{"max_loop_num", 2, func(c *Config) any { return c.Workflow.Options().(mathrefine.Options).MaxLoops }},
			{"test_freq", 10, func(c *Config) any { return c.Eval.Every }},
			every("invalid_action_penalty_coef", 0.1, func(a rollout.AgentConfig) any { return a.FormatPenalty }),
		})},
		{"drmas search", `recipe: drmas
agents: [{name: verifier, model: m, preset: search-verifier}, {name: search, model: m, preset: search-search}, {name: answer, model: m, preset: search-answer}]
workflow: {name: search}
env: {name: search}
`, refs(optimValues(1e-6, 1, "clipped", "token-mean", "sampling"), evalSampling(0.6, 0.95, 0, 1), batch(128, 5), []refValue{
			{"max_response_length", 800, func(c *Config) any { return c.MaxNewTokens }},
			{"ppo_mini_update_num", 5, func(c *Config) any { return c.Optim.UpdatesPerStep }},
			{"entropy_coeff", 0.001, func(c *Config) any { return c.Optim.EntropyCoef }},
			{"test_freq", 5, func(c *Config) any { return c.Eval.Every }},
			every("invalid_action_penalty_coef", 0.01, func(a rollout.AgentConfig) any { return a.FormatPenalty }),
		})},
		{"atgrpo plan-path", `recipe: atgrpo-pettingllms
agents: [{name: tool, model: m, preset: plan-path-tool}, {name: plan, model: m, preset: plan-path-plan, reward_scale: 2}]
workflow: {name: tree, tree: {agents: [tool, plan], simulate: [tool]}}
env: {name: plan-path}
`, refs(optimValues(1e-6, 1, "clipped", "token-mean", "raw"), sampling(1.5, 0.9, 20), evalSampling(0, 1, 0, 1), batch(32, 8), atgrpoShared, []refValue{
			{"sample_mode (unset: no_tree)", tree.ModeNoTree, func(c *Config) any { return c.Workflow.Options().(tree.Options).Mode }},
			{"max_turns", 5, func(c *Config) any { return c.Workflow.Options().(tree.Options).MaxTurns }},
			{"max_response_length", 2048, func(c *Config) any { return c.MaxNewTokens }},
			{"repetition_penalty (none at 244467e)", 1.0, func(c *Config) any { return c.Sampling.RepetitionPenalty }},
		})},
		{"atgrpo sudoku", `recipe: atgrpo-pettingllms
agents: [{name: tool, model: m, preset: sudoku-tool}, {name: plan, model: m, preset: sudoku-plan, reward_scale: 2}]
workflow: {name: tree, tree: {agents: [tool, plan], simulate: [tool]}}
env: {name: sudoku}
`, refs(atgrpoShared, []refValue{
			{"SudukuEnvState.step", sudoku.RewardReference, func(c *Config) any { o, _ := c.Env.Options(); return o.(sudoku.Config).Reward }},
		})},
		{"atgrpo sokoban", `recipe: atgrpo-pettingllms
agents: [{name: tool, model: m, preset: sokoban-tool}, {name: plan, model: m, preset: sokoban-plan, reward_scale: 2}]
workflow: {name: tree, tree: {agents: [tool, plan], simulate: [tool]}}
env: {name: sokoban}
`, refs(atgrpoShared, []refValue{
			{"no deadlock end", false, func(c *Config) any { o, _ := c.Env.Options(); return o.(sokoban.Config).DeadlockEnd }},
			{"DEFAULT_MAX_STEPS", 200, func(c *Config) any { o, _ := c.Env.Options(); return o.(sokoban.Config).MaxMoves }},
		})},
		{"atgrpo math", `recipe: atgrpo-pettingllms
agents: [{name: tool, model: m, preset: mathtool-program}, {name: reasoner, model: m, preset: mathtool-reasoner}]
workflow: {name: math-tool}
env: {name: math}
`, refs(optimValues(1e-6, 1, "clipped", "token-mean", "raw"), sampling(1, 0.9, 20), evalSampling(0.6, 0.8, 20, 5), batch(32, 8), atgrpoShared, []refValue{
			{"sample_mode (unset: no_tree)", tree.ModeNoTree, func(c *Config) any { return c.Workflow.Options().(mathtool.Options).Mode }},
			{"max_turns", 5, func(c *Config) any { return c.Workflow.Options().(mathtool.Options).MaxTurns }},
			{"max_response_length (math_L1_prompt.sh)", 8192, func(c *Config) any { return c.MaxNewTokens }},
		})},
		{"atgrpo code", `recipe: atgrpo-pettingllms
agents: [{name: coder, model: m, preset: codetest-coder}, {name: tester, model: m, preset: codetest-tester}]
workflow: {name: code-test}
env: {name: coding}
`, refs(optimValues(1e-6, 1, "clipped", "token-mean", "raw"), sampling(0.8, 0.9, 20), evalSampling(0.7, 0.8, 20, 5), batch(32, 8), atgrpoShared, []refValue{
			{"sample_mode (unset: no_tree)", tree.ModeNoTree, func(c *Config) any { return c.Workflow.Options().(codetest.Options).Mode }},
			{"max_turns", 5, func(c *Config) any { return c.Workflow.Options().(codetest.Options).MaxTurns }},
			{"max_response_length", 2048, func(c *Config) any { return c.MaxNewTokens }},
		})},
		{"magrpo writing", `recipe: magrpo-comlrl
agents: [{name: first, model: m, preset: writing-summary}, {name: second, model: m, preset: writing-expansion}]
workflow: {name: joint}
env: {name: writing}
`, refs(optimValues(5e-6, 0, "magrpo", "seq-mean-token-sum", "raw"), sampling(0.7, 0.9, 0), evalSampling(0.7, 0.9, 0, 1), batch(1, 1), magrpoShared, []refValue{
			{"num_turns", 1, func(c *Config) any { return c.Workflow.Options().(joint.Options).Turns }},
			{"eval_interval", 20, func(c *Config) any { return c.Eval.Every }},
			{"rollout_buffer_size", 1, func(c *Config) any { return c.Optim.UpdatesPerStep }},
		})},
		{"magrpo coding", `recipe: magrpo-comlrl
agents: [{name: first, model: m, preset: coding-helper}, {name: second, model: m, preset: coding-main}]
workflow: {name: joint}
env: {name: coding}
`, refs(optimValues(2e-5, 0, "magrpo", "seq-mean-token-sum", "raw"), sampling(0.6, 0.6, 0), evalSampling(0.6, 0.6, 0, 1), batch(1, 1), magrpoShared, []refValue{
			{"num_turns", 2, func(c *Config) any { return c.Workflow.Options().(joint.Options).Turns }},
			{"early_termination_threshold −0.2, shift −4", 3.8, func(c *Config) any { return *c.Workflow.Options().(joint.Options).TerminationThreshold }},
			{"discount", 1.0, func(c *Config) any { return c.Advantage.MAGRPO.Gamma }},
			{"eval_interval", 4, func(c *Config) any { return c.Eval.Every }},
			{"rollout_buffer_size", 2, func(c *Config) any { return c.Optim.UpdatesPerStep }},
			{"single agent: empty aux", false, func(c *Config) any { o, _ := c.Env.Options(); return o.(coding.Config).SingleAux }},
		})},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := parse([]byte(model+c.yaml), nil, noModels)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range c.want {
				if got := v.got(cfg); got != v.want {
					t.Errorf("%s: resolved %v (%T), the reference's %v", v.ref, got, got, v.want)
				}
			}
			if src, set, _ := cfg.RecipeReport(); src == "" || len(set) == 0 {
				t.Errorf("recipe report: source %q, %d keys set", src, len(set))
			}
		})
	}
}

// atgrpoShared are the AT-GRPO values every workflow shares: the group key
// and filter of multi_agents_ppo_trainer.py's _assign_consistent_uids, the
// update of ppo_trainer/eval.yaml, and no format penalty.
var atgrpoShared = []refValue{
	{"uid (env_idx // sample_num, turn, agent)", "merged", func(c *Config) any { return c.Advantage.ATGRPO.Key }},
	{"sample_num (the divisor)", 8, func(c *Config) any { return c.Advantage.ATGRPO.TasksPerGroup }},
	{"filter_ratio (method mean)", 0.5, func(c *Config) any { return c.Advantage.Filter.LowestMeanFraction }},
	{"ppo_mini_batch_size", 16, func(c *Config) any { return c.Optim.MiniBatchRows }},
	{"ppo_max_token_len_per_gpu", 16384, func(c *Config) any { return c.Optim.MicroBatchTokens }},
	{"total_training_steps", 200, func(c *Config) any { return c.Run.Steps }},
	{"specialization prompt", "shared", func(c *Config) any { return c.Assignment }},
	every("no format penalty", 0.0, func(a rollout.AgentConfig) any { return a.FormatPenalty }),
}

// magrpoShared are the MAGRPO values both tasks share.
var magrpoShared = []refValue{
	{"num_generations", 4, func(c *Config) any { return c.Workflow.Options().(joint.Options).Samples }},
	{"joint_mode", joint.Aligned, func(c *Config) any { return c.Workflow.Options().(joint.Options).Mode }},
	{"advantage_normalization", true, func(c *Config) any { return c.Advantage.MAGRPO.Normalize }},
	{"max_new_tokens", 256, func(c *Config) any { return c.MaxNewTokens }},
	every("one joint reward", 0.0, func(a rollout.AgentConfig) any { return a.FormatPenalty }),
}

// A recipe fills only what the config leaves unset: a file's value and a
// --set value win and are reported as kept; a workflow a recipe does not
// cover, and an unknown recipe, are refused by name.
func TestRecipeIsUnderTheFile(t *testing.T) {
	const src = `recipe: magrpo-comlrl
models: {m: {path: M}}
agents: [{name: first, model: m, preset: writing-summary}, {name: second, model: m, preset: writing-expansion, format_penalty: 0}]
workflow: {name: joint}
env: {name: writing}
optim: {lr: 3.0e-4}
`
	cfg, err := parse([]byte(src), []string{"sampling.temperature=1.0"}, noModels)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Optim.LR != 3e-4 || cfg.Sampling.Temperature != 1.0 || cfg.Sampling.TopP != 0.9 {
		t.Errorf("lr %g, temperature %g, top_p %g; want the file's 3e-4, --set's 1.0 and the recipe's 0.9", cfg.Optim.LR, cfg.Sampling.Temperature, cfg.Sampling.TopP)
	}
	_, set, kept := cfg.RecipeReport()
	for _, k := range []string{"optim.lr", "sampling.temperature", "agents.1.format_penalty"} {
		if !contains(kept, k) || contains(set, k) {
			t.Errorf("%s: kept %v, set %v; want it kept", k, kept, set)
		}
	}
	if !contains(set, "agents.0.format_penalty") || !contains(set, "sampling.top_p") {
		t.Errorf("set %v: want the keys the file leaves out", set)
	}
	for bad, want := range map[string]string{
		strings.Replace(src, "magrpo-comlrl", "drmas", 1):  `recipe: drmas has no values for workflow "joint"`,
		strings.Replace(src, "magrpo-comlrl", "magrpo", 1): `recipe: must be drmas, atgrpo-pettingllms or magrpo-comlrl`,
	} {
		if _, err := parse([]byte(bad), nil, noModels); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Every shipped config that names a recipe resolves, and keeps the
// recipe's value for every key the recipe covers; a tiny config may scale
// the sizes down (steps, batch, lengths, turns, the learning rate and the
// evaluation's cadence). A config that departs from its reference does so
// in keys the recipe leaves alone, or names no recipe.
func TestShippedRecipeConfigs(t *testing.T) {
	sizes := regexp.MustCompile(`^(run\.steps|batch\.(n|prompts_per_step)|max_new_tokens|optim\.(lr|micro_batch_tokens|micro_batch_size)|eval\.(every|n|tasks)|workflow\.\w+\.max_turns)$`)
	paths, _ := filepath.Glob(filepath.Join("..", "configs", "*.yaml"))
	n := 0
	for _, p := range paths {
		cfg := loadShipped(t, p)
		if cfg.Recipe == "" {
			continue
		}
		n++
		entries, _, err := recipeFor(cfg.Recipe, cfg.Workflow.Name, cfg.Env.Name)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		want := map[string]any{}
		for _, e := range entries {
			var v any
			yaml.Unmarshal([]byte(e.value), &v)
			want[e.path] = v
		}
		b, err := cfg.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		var doc yaml.Node
		yaml.Unmarshal(b, &doc)
		_, set, kept := cfg.RecipeReport()
		if len(set) == 0 {
			t.Errorf("%s: recipe %s set no key", p, cfg.Recipe)
		}
		for _, k := range kept {
			key := regexp.MustCompile(`^agents\.\d+\.`).ReplaceAllString(k, "agents.*.")
			var got any
			if node := nodeAt(doc.Content[0], splitPath(k)...); node != nil {
				node.Decode(&got)
			}
			if fmt.Sprint(got) == fmt.Sprint(want[key]) {
				continue
			}
			if sizes.MatchString(k) && strings.Contains(p, "tiny") {
				continue
			}
			t.Errorf("%s: %s is %v, recipe %s's %v; keep the recipe's value (or drop the recipe and say why)", p, k, got, cfg.Recipe, want[key])
		}
	}
	if n < 7 {
		t.Errorf("%d shipped configs name a recipe, want the real-size Dr. MAS and MAGRPO ones and AT-GRPO's as-run ones", n)
	}
}

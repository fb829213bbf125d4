package config

import (
	"testing"

	"troupe/optim"
	"troupe/rollout"
	"troupe/rollout/env/coding"
	mathenv "troupe/rollout/env/math"
	"troupe/rollout/env/planpath"
	"troupe/rollout/env/sokoban"
	"troupe/rollout/env/sudoku"
	"troupe/rollout/workflow/codetest"
	"troupe/rollout/workflow/joint"
	"troupe/rollout/workflow/mathrefine"
	"troupe/rollout/workflow/mathtool"
	"troupe/rollout/workflow/tree"
)

// cited is one value of a reference's run: its name there, the file and
// line (or function) it comes from, the value, and where troupe's resolved
// config keeps it. Files are cited at the commits docs/departures.md names:
//
//	DrMAS        langfengQ/DrMAS 19c632b: examples/drmas_trainer/run_{math,search}.sh,
//	             verl/trainer/config/ppo_trainer.yaml, verl/workers/fsdp_workers.py
//	PettingLLMs  pettingllms-ai/PettingLLMs 244467e: pettingllms/config/{stateful,math,code}/
//	             *_L1_prompt.yaml, config/ppo_trainer/eval.yaml, scripts/train/{game,math}/
//	             *_L1_prompt.sh, trainer/, multi_agent_env/
//	CoMLRL       comlrl 1.3.7 comlrl/trainers/reinforce/magrpo.py (the first release that
//	             takes the task repositories' keys); LLM_Collab_Writing 7e59995
//	             configs/magrpo_tldr_config.yaml; LLM_Collab_Code_Generation 07663c1
//	             configs/magrpo_he_config.yaml
type cited struct {
	ref, src string
	want     any
	got      func(*Config) any
}

func envOf[T any](c *Config) T {
	o, _ := c.Env.Options()
	return o.(T)
}

func allAgents(want any, get func(rollout.AgentConfig) any) func(*Config) any {
	return func(c *Config) any {
		for _, a := range c.Agents {
			if v := get(a.AgentConfig); v != want {
				return v
			}
		}
		return want
	}
}

var (
	lr          = func(c *Config) any { return c.Optim.LR }
	gradClip    = func(c *Config) any { return c.Optim.GradClip }
	weightDecay = func(c *Config) any { return c.Optim.WeightDecay }
	lossOf      = func(c *Config) any { return c.Optim.Loss }
	lossAgg     = func(c *Config) any { return c.Optim.LossAgg }
	logprobsAt  = func(c *Config) any { return c.Optim.LogProbTemperature }
	klCoef      = func(c *Config) any { return c.Optim.KLCoef }
	entropy     = func(c *Config) any { return c.Optim.EntropyCoef }
	stateDType  = func(c *Config) any { return c.Optim.StateDType }
	padding     = func(c *Config) any { return c.Optim.LossPadding }
	updates     = func(c *Config) any { return c.Optim.UpdatesPerStep }
	runSteps    = func(c *Config) any { return c.Run.Steps }
	runEpochs   = func(c *Config) any { return c.Run.Epochs }
	runDType    = func(c *Config) any { return c.Run.DType }
	tasks       = func(c *Config) any { return c.Batch.PromptsPerStep }
	groupN      = func(c *Config) any { return c.Batch.N }
	shuffle     = func(c *Config) any { return c.Batch.Shuffle }
	epochTasks  = func(c *Config) any { return c.Batch.EpochTasks }
	maxTokens   = func(c *Config) any { return c.MaxNewTokens }
	trainT      = func(c *Config) any { return c.Sampling.Temperature }
	trainP      = func(c *Config) any { return c.Sampling.TopP }
	trainK      = func(c *Config) any { return c.Sampling.TopK }
	penalty     = func(c *Config) any { return c.Sampling.RepetitionPenalty }
	evalT       = func(c *Config) any { return c.Eval.Sampling.Temperature }
	evalP       = func(c *Config) any { return c.Eval.Sampling.TopP }
	evalK       = func(c *Config) any { return c.Eval.Sampling.TopK }
	evalN       = func(c *Config) any { return c.Eval.N }
	evalTasks   = func(c *Config) any { return c.Eval.Tasks }
	evalEvery   = func(c *Config) any { return c.Eval.Every }
	evalAtStart = func(c *Config) any { return c.Eval.AtStart }
)

// Each preset, resolved over a config that names only the team, the
// workflow and the environment, against its reference's values, each
// with the line it comes from: run length, evaluation (cadence, set, samples,
// sampling), environment sizes, precision, batch and update.
func TestRecipesMatchTheReferences(t *testing.T) {
	const model = "models: {m: {path: M}}\n"
	drmas := []cited{
		{"actor.optim.lr", "run_math.sh:36, run_search.sh (actor_optim_lr)", 1e-6, lr},
		{"actor.grad_clip", "ppo_trainer.yaml:52", 1.0, gradClip},
		{"actor.optim.weight_decay", "ppo_trainer.yaml:79", 0.01, weightDecay},
		{"loss_agg_mode", "ppo_trainer.yaml:58", optim.TokenMean, lossAgg},
		{"use_kl_loss False", "run_math.sh:63", 0.0, klCoef},
		{"rollout.temperature (log-probs at it)", "ppo_trainer.yaml:107", optim.LogProbSampling, logprobsAt},
		{"model_dtype unset: the actor in float32", "fsdp_workers.py:204-206", optim.StateFloat32, stateDType},
		{"data.shuffle", "ppo_trainer.yaml:15", true, shuffle},
		{"val_kwargs.temperature", "run_math.sh:77", 0.6, evalT},
		{"val_kwargs.top_p", "run_math.sh:76", 0.95, evalP},
		{"val_group_size", "run_math.sh:19", 1, evalN},
		{"val_batch_size: the whole test file", "run_math.sh:18", 0, evalTasks},
		{"val_before_train", "run_math.sh:100", true, evalAtStart},
		{"model_sharing False", "run_math.sh:30", "separate", func(c *Config) any { return c.Assignment }},
		{"adv_estimator grpo + group_by_agent_id", "run_math.sh:23-25", "drmas", func(c *Config) any { return c.Advantage.Estimator }},
	}
	atgrpo := []cited{
		{"actor.optim.lr", "eval.yaml:79", 1e-6, lr},
		{"grad_clip", "eval.yaml:61", 1.0, gradClip},
		{"weight_decay", "eval.yaml:86", 0.01, weightDecay},
		{"loss_agg_mode", "eval.yaml:67", optim.TokenMean, lossAgg},
		{"use_kl_loss False", "eval.yaml:69", 0.0, klCoef},
		{"entropy_coeff", "eval.yaml:68", 0.0, entropy},
		{"log-probs at rollout.temperature 1", "stateful_L1_prompt.yaml:78", optim.LogProbRaw, logprobsAt},
		{"ppo_mini_batch_size", "eval.yaml:55", 16, func(c *Config) any { return c.Optim.MiniBatchRows }},
		{"ppo_max_token_len_per_gpu", "eval.yaml:60", 16384, func(c *Config) any { return c.Optim.MicroBatchTokens }},
		{"actor.fsdp_config.model_dtype bf16", "eval.yaml:98", "bfloat16", runDType},
		{"AdamW over bf16 weights", "eval.yaml:98", optim.StateModel, stateDType},
		{"total_training_steps", "game_L1_prompt.sh:34, math_L1_prompt.sh:33", 200, runSteps},
		{"train_batch_size", "game_L1_prompt.sh:36", 32, tasks},
		{"train_sample_num", "game_L1_prompt.sh:37", 8, groupN},
		{"val_freq", "game_L1_prompt.sh:41", 10, evalEvery},
		{"validation before training", "multi_agents_ppo_trainer.py fit (i == 0)", true, evalAtStart},
		{"validation: the whole test set", "stateful_env.py:83, math_utils.py load_math_problem_batch", 0, evalTasks},
		{"uid (env_idx // sample_num, turn, agent)", "multi_agents_ppo_trainer.py:859", "merged", func(c *Config) any { return c.Advantage.ATGRPO.Key }},
		{"sample_num (the divisor)", "multi_agents_ppo_trainer.py:859", 8, func(c *Config) any { return c.Advantage.ATGRPO.TasksPerGroup }},
		{"filter_ratio (method mean)", "stateful_L1_prompt.yaml:93-94", 0.5, func(c *Config) any { return c.Advantage.Filter.LowestMeanFraction }},
		{"specialization prompt", "stateful_L1_prompt.yaml:8", "shared", func(c *Config) any { return c.Assignment }},
		{"no format penalty", "multi_agents_execution_engine.py (rewards unpenalised)", 0.0, allAgents(0.0, func(a rollout.AgentConfig) any { return a.FormatPenalty })},
	}
	magrpo := []cited{
		{"torch.optim.AdamW weight_decay default", "magrpo.py MAGRPOTrainer.__init__", 0.01, weightDecay},
		{"no gradient clipping", "magrpo.py _update_from_samples", 0.0, gradClip},
		{"loss −A · Σ_t log π", "magrpo.py _compute_loss_with_gradients", optim.LossMAGRPO, lossOf},
		{"averaged over completions", "magrpo.py _compute_loss_with_gradients", optim.SeqMeanTokenSum, lossAgg},
		{"log_softmax of the raw logits", "magrpo.py _compute_loss_with_gradients", optim.LogProbRaw, logprobsAt},
		{"pads after a shorter completion trained", "magrpo.py _generate_completions, _compute_loss_with_gradients", true, padding},
		{"AdamW over bf16 weights", "magrpo_he_config.yaml:9", optim.StateModel, stateDType},
		{"torch_dtype bfloat16", "magrpo_he_config.yaml:9; magrpo_tldr_config.yaml:8 (auto)", "bfloat16", runDType},
		{"one task a step, in order", "magrpo.py get_train_dataloader (batch_size 1, shuffle False)", false, shuffle},
		{"", "", 1, tasks},
		{"num_generations are the group", "magrpo_he_config.yaml:44", 1, groupN},
		{"num_generations", "magrpo_he_config.yaml:44; magrpo_tldr_config.yaml:39", 4, func(c *Config) any { return c.Workflow.Options().(joint.Options).Samples }},
		{"joint_mode", "magrpo_he_config.yaml:47; magrpo_tldr_config.yaml:41", joint.Aligned, func(c *Config) any { return c.Workflow.Options().(joint.Options).Mode }},
		{"advantage_normalization", "magrpo_he_config.yaml:51; magrpo_tldr_config.yaml:44", true, func(c *Config) any { return c.Advantage.MAGRPO.Normalize }},
		{"max_new_tokens", "magrpo_he_config.yaml:45; magrpo_tldr_config.yaml:40", 256, maxTokens},
		{"eval_num_samples", "magrpo_he_config.yaml:53; magrpo_tldr_config.yaml:46", 4, evalTasks},
		{"one evaluation sample per task", "magrpo.py _evaluate_sample", 1, evalN},
		{"evaluation before training", "magrpo.py train (batch_idx 0 % eval_interval)", true, evalAtStart},
		{"one joint reward", "magrpo.py _compute_rewards", 0.0, allAgents(0.0, func(a rollout.AgentConfig) any { return a.FormatPenalty })},
	}
	for _, c := range []struct {
		name, yaml string
		want       []cited
	}{
		{"drmas math", `recipe: drmas
agents: [{name: solver, model: m, preset: math-solver}, {name: verifier, model: m, preset: math-verifier}]
workflow: {name: math-refine, math_refine: {solver: solver, verifier: verifier}}
env: {name: math}
`, append([]cited{
			{"trainer.total_epochs (steps: ⌊tasks / batch⌋ each, ray_trainer.py:648,671)", "run_math.sh:98", 2, runEpochs},
			{"data.train_batch_size", "run_math.sh:17", 32, tasks},
			{"env.rollout.n (group_size)", "run_math.sh:24", 8, groupN},
			{"data.max_response_length", "run_math.sh:50", 4096, maxTokens},
			{"ppo_mini_update_num", "run_math.sh:60", 1, updates},
			{"ppo_micro_batch_size_per_gpu", "run_math.sh:37", 4, func(c *Config) any { return c.Optim.MicroBatchSize }},
			{"clip_ratio_c", "ppo_trainer.yaml:57", 3.0, func(c *Config) any { return c.Optim.DualClip }},
			{"entropy_coeff", "run_math.sh:64", 0.0, entropy},
			{"rollout.temperature", "ppo_trainer.yaml:107", 1.0, trainT},
			{"rollout.top_p", "ppo_trainer.yaml:109", 1.0, trainP},
			{"rollout.top_k −1", "ppo_trainer.yaml:108", 0, trainK},
			{"max_loop_num", "run_math.sh:33", 2, func(c *Config) any { return c.Workflow.Options().(mathrefine.Options).MaxLoops }},
			{"test_freq", "run_math.sh:97", 10, evalEvery},
			{"invalid_action_penalty_coef", "run_math.sh:79", 0.1, allAgents(0.1, func(a rollout.AgentConfig) any { return a.FormatPenalty })},
		}, drmas...)},
		{"drmas search", `recipe: drmas
agents: [{name: verifier, model: m, preset: search-verifier}, {name: search, model: m, preset: search-search}, {name: answer, model: m, preset: search-answer}]
workflow: {name: search}
env: {name: search}
`, append([]cited{
			{"trainer.total_epochs (steps: ⌊tasks / batch⌋ each, ray_trainer.py:648,671)", "run_search.sh:98", 1, runEpochs},
			{"data.train_batch_size", "run_search.sh:17", 128, tasks},
			{"env.rollout.n (group_size)", "run_search.sh:24", 5, groupN},
			{"data.max_response_length", "run_search.sh:50", 800, maxTokens},
			{"ppo_mini_update_num", "run_search.sh:59", 5, updates},
			{"entropy_coeff (verl's default)", "ppo_trainer.yaml:59", 0.001, entropy},
			{"test_freq", "run_search.sh:97", 5, evalEvery},
			{"invalid_action_penalty_coef", "run_search.sh:77", 0.01, allAgents(0.01, func(a rollout.AgentConfig) any { return a.FormatPenalty })},
		}, drmas...)},
		{"atgrpo plan-path", `recipe: atgrpo-pettingllms
agents: [{name: tool, model: m, preset: plan-path-tool}, {name: plan, model: m, preset: plan-path-plan, reward_scale: 2}]
workflow: {name: tree, tree: {agents: [tool, plan], simulate: [tool]}}
env: {name: plan-path}
`, append([]cited{
			{"sample_mode (unset: no_tree)", "multi_agents_ppo_trainer.py fit", tree.ModeNoTree, func(c *Config) any { return c.Workflow.Options().(tree.Options).Mode }},
			{"env.max_turns", "stateful_L1_prompt.yaml:19", 5, func(c *Config) any { return c.Workflow.Options().(tree.Options).MaxTurns }},
			{"max_response_length", "game_L1_prompt.sh:39", 8192, maxTokens},
			{"train_temperature", "stateful_L1_prompt.yaml:43", 1.5, trainT},
			{"train top_p default", "async_generate.py:419", 0.9, trainP},
			{"train top_k default", "async_generate.py:420", 20, trainK},
			{"no repetition penalty at 244467e", "async_generate.py", 1.0, penalty},
			{"val_temperature", "stateful_L1_prompt.yaml:44", 0.0, evalT},
			{"validate_sample_num 5, all greedy", "game_L1_prompt.sh:38", 1, evalN},
			{"epoch_size × train_batch_size replayed", "multi_agents_execution_engine.py:144-146; game_L1_prompt.sh:35-36", 640, epochTasks},
			{"the epoch's tasks in order", "multi_agents_execution_engine.py:146", false, shuffle},
			{"grid_h = grid_w", "env_state.py:870-871", 10, func(c *Config) any { return envOf[planpath.Config](c).Rows }},
			{"grid_w", "env_state.py:871", 10, func(c *Config) any { return envOf[planpath.Config](c).Cols }},
			{"block_ratio", "env_state.py:872", 0.22, func(c *Config) any { return envOf[planpath.Config](c).WallProb }},
			{"train seeds 0 … 639", "stateful_env.py:115-117", 640, func(c *Config) any { return envOf[planpath.Config](c).TrainSize }},
			{"validation puzzles", "stateful_env.py:83", 100, func(c *Config) any { return envOf[planpath.Config](c).TestSize }},
		}, atgrpo...)},
		{"atgrpo sudoku", `recipe: atgrpo-pettingllms
agents: [{name: tool, model: m, preset: sudoku-tool}, {name: plan, model: m, preset: sudoku-plan, reward_scale: 2}]
workflow: {name: tree, tree: {agents: [tool, plan], simulate: [tool]}}
env: {name: sudoku}
`, append([]cited{
			{"SudukuEnvState.step", "env_state.py (SudukuEnvState.step)", sudoku.RewardReference, func(c *Config) any { return envOf[sudoku.Config](c).Reward }},
			{"size (map_size unset)", "env_state.py:433", 4, func(c *Config) any { return envOf[sudoku.Config](c).Size }},
			{"train seeds", "stateful_env.py:136-138", 640, func(c *Config) any { return envOf[sudoku.Config](c).TrainSize }},
			{"validation puzzles", "stateful_env.py:83", 100, func(c *Config) any { return envOf[sudoku.Config](c).TestSize }},
			{"epoch replay", "multi_agents_execution_engine.py:144-146", 640, epochTasks},
		}, atgrpo...)},
		{"atgrpo sokoban", `recipe: atgrpo-pettingllms
agents: [{name: tool, model: m, preset: sokoban-tool}, {name: plan, model: m, preset: sokoban-plan, reward_scale: 2}]
workflow: {name: tree, tree: {agents: [tool, plan], simulate: [tool]}}
env: {name: sokoban}
`, append([]cited{
			{"no deadlock end", "env_state.py (SokobanGridEnvState.step)", false, func(c *Config) any { return envOf[sokoban.Config](c).DeadlockEnd }},
			{"DEFAULT_MAX_STEPS", "env_state.py (SokobanGridEnvState)", 200, func(c *Config) any { return envOf[sokoban.Config](c).MaxMoves }},
			{"size (map_size unset → 16)", "env_state.py:1307-1308", 16, func(c *Config) any { return envOf[sokoban.Config](c).Size }},
			{"train seeds", "stateful_env.py:122-124", 640, func(c *Config) any { return envOf[sokoban.Config](c).TrainSize }},
			{"validation puzzles", "stateful_env.py:83", 100, func(c *Config) any { return envOf[sokoban.Config](c).TestSize }},
		}, atgrpo...)},
		{"atgrpo math", `recipe: atgrpo-pettingllms
agents: [{name: tool, model: m, preset: mathtool-program}, {name: reasoner, model: m, preset: mathtool-reasoner}]
workflow: {name: math-tool}
env: {name: math}
`, append([]cited{
			{"sample_mode (unset: no_tree)", "multi_agents_ppo_trainer.py fit", tree.ModeNoTree, func(c *Config) any { return c.Workflow.Options().(mathtool.Options).Mode }},
			{"env.max_turns", "math_L1_prompt.yaml:19", 5, func(c *Config) any { return c.Workflow.Options().(mathtool.Options).MaxTurns }},
			{"max_response_length", "math_L1_prompt.sh:39", 8192, maxTokens},
			{"train_temperature", "math_L1_prompt.yaml:43", 1.0, trainT},
			{"train top_p default", "async_generate.py:419", 0.9, trainP},
			{"train top_k default", "async_generate.py:420", 20, trainK},
			{"val_temperature", "math_L1_prompt.yaml:44", 0.6, evalT},
			{"validate top_p default (thinking off)", "async_generate.py:430", 0.8, evalP},
			{"validate top_k default", "async_generate.py:431", 20, evalK},
			{"validate_sample_num", "math_L1_prompt.sh:37", 5, evalN},
			{"random.sample over the file each step", "math_utils.py:98", true, shuffle},
			{"no replay: the whole file", "math_utils.py:98", 0, epochTasks},
			{"math_verify parse of the whole response, verify against the parsed gold", "reasoning_agent.py:99,110; tool_agent.py:112,121", mathenv.GradingVerifier, func(c *Config) any { return envOf[mathenv.Config](c).Grading }},
		}, atgrpo...)},
		{"atgrpo code", `recipe: atgrpo-pettingllms
agents: [{name: coder, model: m, preset: codetest-coder}, {name: tester, model: m, preset: codetest-tester}]
workflow: {name: code-test}
env: {name: coding}
`, append([]cited{
			{"sample_mode (unset: no_tree)", "multi_agents_ppo_trainer.py fit", tree.ModeNoTree, func(c *Config) any { return c.Workflow.Options().(codetest.Options).Mode }},
			{"env.max_turns", "code_L1_prompt.yaml:18", 5, func(c *Config) any { return c.Workflow.Options().(codetest.Options).MaxTurns }},
			{"max_response_length", "code_L1_prompt.yaml:79", 2048, maxTokens},
			{"no train_temperature: the default", "async_generate.py:418", 0.8, trainT},
			{"validate temperature default (thinking off)", "async_generate.py:429", 0.7, evalT},
			{"validate top_p default", "async_generate.py:430", 0.8, evalP},
			{"validate_sample_num", "code_L1_prompt.yaml:73", 5, evalN},
			{"epoch replay of the file's first tasks", "multi_agents_execution_engine.py:144-146; code_utils.py load_problem_batch", 640, epochTasks},
			{"in order", "code_utils.py load_problem_batch", false, shuffle},
		}, atgrpo...)},
		{"magrpo writing", `recipe: magrpo-comlrl
agents: [{name: first, model: m, preset: writing-summary}, {name: second, model: m, preset: writing-expansion}]
workflow: {name: joint}
env: {name: writing}
`, append([]cited{
			{"num_train_epochs 2 × train[:1100]", "magrpo_tldr_config.yaml:19,36", 2200, runSteps},
			{"agent_learning_rate", "magrpo_tldr_config.yaml:37", 5e-6, lr},
			{"num_turns", "magrpo_tldr_config.yaml:35", 1, func(c *Config) any { return c.Workflow.Options().(joint.Options).Turns }},
			{"rollout_buffer_size", "magrpo_tldr_config.yaml:42", 1, updates},
			{"agent_model.temperature", "magrpo_tldr_config.yaml:4", 0.7, trainT},
			{"agent_model.top_p", "magrpo_tldr_config.yaml:5", 0.9, trainP},
			{"top_k null", "magrpo_tldr_config.yaml:6", 0, trainK},
			{"evaluation samples as training", "magrpo.py _generate_completions (do_sample)", 0.7, evalT},
			{"eval_interval", "magrpo_tldr_config.yaml:45", 20, evalEvery},
		}, magrpo...)},
		{"magrpo coding", `recipe: magrpo-comlrl
agents: [{name: first, model: m, preset: coding-helper}, {name: second, model: m, preset: coding-main}]
workflow: {name: joint}
env: {name: coding}
`, append([]cited{
			{"num_train_epochs 6 × test[33:163]", "magrpo_he_config.yaml:20,41", 780, runSteps},
			{"agent_learning_rate", "magrpo_he_config.yaml:42", 2e-5, lr},
			{"num_turns", "magrpo_he_config.yaml:40", 2, func(c *Config) any { return c.Workflow.Options().(joint.Options).Turns }},
			{"early_termination_threshold −0.2, shift −4", "magrpo_he_config.yaml:48,59", 3.8, func(c *Config) any { return *c.Workflow.Options().(joint.Options).TerminationThreshold }},
			{"discount", "magrpo_he_config.yaml:46", 1.0, func(c *Config) any { return c.Advantage.MAGRPO.Gamma }},
			{"rollout_buffer_size", "magrpo_he_config.yaml:49", 2, updates},
			{"agent_model.temperature", "magrpo_he_config.yaml:4", 0.6, trainT},
			{"agent_model.top_p", "magrpo_he_config.yaml:5", 0.6, trainP},
			{"top_k null", "magrpo_he_config.yaml:6", 0, trainK},
			{"evaluation samples as training", "magrpo.py _generate_completions (do_sample)", 0.6, evalT},
			{"eval_interval", "magrpo_he_config.yaml:52", 4, evalEvery},
			{"single agent: empty aux", "train_grpo.py reward_wrapper", false, func(c *Config) any { return envOf[coding.Config](c).SingleAux }},
		}, magrpo...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := parse([]byte(model+c.yaml), nil, noModels)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range c.want {
				if v.ref == "" {
					v.ref, v.src = "batch_size 1", "magrpo.py get_train_dataloader"
				}
				if got := v.got(cfg); got != v.want {
					t.Errorf("%s (%s): resolved %v (%T), the reference's %v", v.ref, v.src, got, got, v.want)
				}
			}
			if src, set, _ := cfg.RecipeReport(); src == "" || len(set) == 0 {
				t.Errorf("recipe report: source %q, %d keys set", src, len(set))
			}
		})
	}
}

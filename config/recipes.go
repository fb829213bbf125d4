package config

// recipes.go — the values of each recipe (recipe.go), key by key, each
// with the reference's name for it and, where a run's value comes from a
// launch script or a config file rather than a default, its file and line.
// docs/departures.md has the audit (every setting of each reference's
// training path, with troupe's value); config/recipe_test.go checks the
// resolved config against the reference's values, citing the same lines.

// Dr. MAS (langfengQ/DrMAS, examples/drmas_trainer/run_math.sh and
// run_search.sh, on verl's ppo_trainer defaults).
var drmasCommon = []recipeEntry{
	{"assignment", "separate"},                // agent.model_sharing=False
	{"advantage.estimator", "drmas"},          // adv_estimator=grpo, group_by_agent_id=True
	{"advantage.divide_by_std", "true"},       // norm_adv_by_std_in_grpo
	{"advantage.std", "sample"},               // torch.std
	{"advantage.epsilon", "1.0e-6"},           // epsilon
	{"advantage.singleton", "raw"},            // a singleton keeps mean 0, std 1
	{"optim.loss", "clipped"},                 // verl's dual-clip PPO loss
	{"optim.loss_agg", "token-mean"},          // loss_agg_mode
	{"optim.lr", "1.0e-6"},                    // actor.optim.lr [1e-6, …]
	{"optim.lr_schedule", "constant"},         // warmup_style constant
	{"optim.warmup_steps", "0"},               // lr_warmup_steps_ratio 0
	{"optim.beta1", "0.9"},                    // torch AdamW
	{"optim.beta2", "0.999"},                  //
	{"optim.eps", "1.0e-8"},                   //
	{"optim.weight_decay", "0.01"},            // actor.optim.weight_decay
	{"optim.grad_clip", "1.0"},                // actor.grad_clip
	{"optim.clip_low", "0.2"},                 // clip_ratio_low
	{"optim.clip_high", "0.2"},                // clip_ratio_high
	{"optim.dual_clip", "3"},                  // clip_ratio_c
	{"optim.kl_coef", "0"},                    // use_kl_loss=False
	{"optim.micro_batch_size", "4"},           // ppo_micro_batch_size_per_gpu [4, …]
	{"optim.epochs", "1"},                     // ppo_epochs
	{"optim.logprob_temperature", "sampling"}, // rollout.temperature 1 = the sampling temperature
	{"sampling.temperature", "1.0"},           // rollout.temperature
	{"sampling.top_p", "1.0"},                 // rollout.top_p
	{"sampling.top_k", "0"},                   // rollout.top_k −1
	{"agents.*.thinking", "false"},            // enable_thinking=False
	{"eval.at_start", "true"},                 // val_before_train=True
	{"eval.n", "1"},                           // env.rollout.val_n (val_group_size 1 while training)
	{"eval.ks", "[1]"},                        //
	{"eval.sampling.temperature", "0.6"},      // val_kwargs.temperature
	{"eval.sampling.top_p", "0.95"},           // val_kwargs.top_p
	{"eval.tasks", "0"},                       // val_batch_size ≥ the test file: one batch of all of it
	{"batch.shuffle", "true"},                 // ppo_trainer.yaml:15 data.shuffle True
	{"optim.state_dtype", "float32"},          // fsdp_workers.py:204-206: the actor loads in float32 (masters)
}

var drmasMath = []recipeEntry{
	{"run.epochs", "2"},                                 // trainer.total_epochs (run_math.sh:98)
	{"batch.prompts_per_step", "32"},                    // data.train_batch_size
	{"batch.n", "8"},                                    // env.rollout.n (group_size)
	{"max_new_tokens", "4096"},                          // data.max_response_length
	{"optim.updates_per_step", "1"},                     // ppo_mini_update_num
	{"optim.entropy_coef", "0"},                         // entropy_coeff=0.0
	{"agents.*.format_penalty", "0.1"},                  // invalid_action_penalty_coef
	{"workflow.math_refine.max_loops", "2"},             // orchestra.math.max_loop_num
	{"workflow.math_refine.missing_verdict", "approve"}, // no verdict tag approves
	{"workflow.math_refine.verify_final", "false"},      // the last answer is not verified
	{"eval.every", "10"},                                // trainer.test_freq
}

var drmasSearch = []recipeEntry{
	{"run.epochs", "1"},                        // trainer.total_epochs (run_search.sh:98)
	{"batch.prompts_per_step", "128"},          // data.train_batch_size
	{"batch.n", "5"},                           // env.rollout.n (group_size)
	{"max_new_tokens", "800"},                  // data.max_response_length
	{"optim.updates_per_step", "5"},            // ppo_mini_update_num
	{"optim.entropy_coef", "0.001"},            // verl's default entropy_coeff
	{"agents.*.format_penalty", "0.01"},        // invalid_action_penalty_coef
	{"workflow.search.max_steps", "4"},         // env.max_steps (max_turn)
	{"workflow.search.missing_verdict", "yes"}, // no verdict tag answers
	{"eval.every", "5"},                        // trainer.test_freq
}

// AT-GRPO as PettingLLMs ran it at 244467e: the L1 "prompt" configs (one
// model shared by both roles) on ppo_trainer/eval.yaml, without sample_mode
// (so no_tree, whose groups pool train_sample_num tasks), launched by
// scripts/train/{game,math}/*_L1_prompt.sh.
var atgrpoCommon = []recipeEntry{
	{"assignment", "shared"},                         // specialization: prompt
	{"run.steps", "200"},                             // total_training_steps
	{"batch.prompts_per_step", "32"},                 // train_batch_size
	{"batch.n", "8"},                                 // train_sample_num: environments per task
	{"advantage.estimator", "atgrpo"},                // GRPO over (env_idx // sample_num, turn, agent)
	{"advantage.atgrpo.key", "merged"},               // no_tree: env_idx is the task, divided again
	{"advantage.divide_by_std", "true"},              //
	{"advantage.std", "sample"},                      //
	{"advantage.epsilon", "1.0e-6"},                  //
	{"advantage.singleton", "zero"},                  //
	{"advantage.filter.lowest_mean_fraction", "0.5"}, // filter_method mean, filter_ratio 0.5
	{"optim.loss", "clipped"},                        //
	{"optim.loss_agg", "token-mean"},                 // loss_agg_mode
	{"optim.lr", "1.0e-6"},                           // actor.optim.lr
	{"optim.lr_schedule", "constant"},                // warmup_style constant
	{"optim.warmup_steps", "0"},                      //
	{"optim.weight_decay", "0.01"},                   //
	{"optim.grad_clip", "1.0"},                       //
	{"optim.clip_low", "0.2"},                        // clip_ratio_low
	{"optim.clip_high", "0.2"},                       // clip_ratio_high
	{"optim.dual_clip", "3"},                         // clip_ratio_c
	{"optim.entropy_coef", "0"},                      // entropy_coeff
	{"optim.kl_coef", "0"},                           // use_kl_loss False
	{"optim.mini_batch_rows", "16"},                  // ppo_mini_batch_size
	{"optim.updates_per_step", "1"},                  //
	{"optim.epochs", "1"},                            // ppo_epochs
	{"optim.micro_batch_tokens", "16384"},            // ppo_max_token_len_per_gpu
	{"optim.logprob_temperature", "raw"},             // log-probs at rollout.temperature (sample_temperature 1)
	{"agents.*.format_penalty", "0"},                 // no format penalty
	{"agents.*.thinking", "false"},                   // enable_thinking false
	{"eval.every", "10"},                             // val_freq (game_L1_prompt.sh:40)
	{"eval.at_start", "true"},                        // the initial validation (fit, i == 0)
	{"eval.ks", "[1]"},                               //
	{"eval.tasks", "0"},                              // validation runs the whole test set
	{"run.dtype", "bfloat16"},                        // eval.yaml:98 actor.fsdp_config.model_dtype bf16
	{"optim.state_dtype", "model"},                   // AdamW over the bf16 weights: bf16 moments, no master
}

var atgrpoGames = []recipeEntry{
	{"workflow.tree.mode", "no-tree"},      // sample_mode unset: no_tree
	{"workflow.tree.candidates", "1"},      //
	{"workflow.tree.max_turns", "5"},       // env.max_turns
	{"max_new_tokens", "8192"},             // game_L1_prompt.sh:39 max_response_length
	{"batch.shuffle", "false"},             // step s plays tasks (s mod 20)·32 … +31, in order
	{"batch.epoch_tasks", "640"},           // epoch_size 20 × train_batch_size 32 (game_L1_prompt.sh:35-36)
	{"sampling.temperature", "1.5"},        // train_temperature
	{"sampling.top_p", "0.9"},              // async_generate's train default
	{"sampling.top_k", "20"},               //
	{"sampling.repetition_penalty", "1.0"}, // none at 244467e (1.2 from 5767f51)
	{"eval.n", "1"},                        // validate_sample_num 5, all greedy
	{"eval.sampling.temperature", "0"},     // val_temperature 0
	{"eval.sampling.top_p", "1.0"},         //
	{"eval.sampling.top_k", "0"},           //
}

// atgrpoGameSizes are each game's instances as the runs drew them: the
// stateful env's defaults (env.map_size is never set for training), 640
// train seeds replayed (StatefulEnvBatch: seed = env index) and the 100
// validation seeds (stateful_env.py:83).
var atgrpoGameSizes = map[string][]recipeEntry{
	"plan-path": {
		{"env.plan_path.rows", "10"},        // env_state.py:870 grid_h 10
		{"env.plan_path.cols", "10"},        // grid_w = grid_h
		{"env.plan_path.wall_prob", "0.22"}, // env_state.py:872 block_ratio
		{"env.plan_path.train_size", "640"}, // epoch_size × train_batch_size seeds
		{"env.plan_path.test_size", "100"},  // stateful_env.py:83 range(100)
	},
	"sokoban": {
		{"env.sokoban.size", "16"},            // env_state.py:1308: map_size unset → 16 (one box)
		{"env.sokoban.train_size", "640"},     //
		{"env.sokoban.test_size", "100"},      //
		{"env.sokoban.max_moves", "200"},      // DEFAULT_MAX_STEPS
		{"env.sokoban.deadlock_end", "false"}, // a stuck box plays on
	},
	"sudoku": {
		{"env.sudoku.size", "4"},           // env_state.py:433 size 4 (map_size unset)
		{"env.sudoku.train_size", "640"},   //
		{"env.sudoku.test_size", "100"},    //
		{"env.sudoku.reward", "reference"}, // SudukuEnvState.step
	},
}

var atgrpoMath = []recipeEntry{
	{"workflow.math_tool.mode", "no-tree"}, // sample_mode unset: no_tree
	{"workflow.math_tool.candidates", "1"}, //
	{"workflow.math_tool.max_turns", "5"},  // env.max_turns
	{"max_new_tokens", "8192"},             // math_L1_prompt.sh:39 max_response_length
	{"batch.shuffle", "true"},              // math_utils.py:98: random.sample over the whole file each step
	{"batch.epoch_tasks", "0"},             //
	{"sampling.temperature", "1.0"},        // train_temperature
	{"sampling.top_p", "0.9"},              // async_generate's train default
	{"sampling.top_k", "20"},               //
	{"sampling.repetition_penalty", "1.0"}, //
	{"eval.n", "5"},                        // validate_sample_num
	{"eval.sampling.temperature", "0.6"},   // val_temperature
	{"eval.sampling.top_p", "0.8"},         // async_generate's validate default (thinking off)
	{"eval.sampling.top_k", "20"},          //
	{"env.math.grading", "verifier"},       // reasoning_agent.py:99,110: math_verify parse of the whole response, verify
}

var atgrpoCode = []recipeEntry{
	{"workflow.code_test.mode", "no-tree"}, // sample_mode unset: no_tree
	{"workflow.code_test.candidates", "1"}, //
	{"workflow.code_test.max_turns", "5"},  // env.max_turns
	{"max_new_tokens", "2048"},             // code_L1_prompt.yaml:79 max_response_length (no script)
	{"batch.shuffle", "false"},             // code_utils.py load_problem_batch: the file's rows at the step's indices
	{"batch.epoch_tasks", "640"},           // epoch_size 20 × train_batch_size 32 (code_L1_prompt.yaml)
	{"sampling.temperature", "0.8"},        // no train_temperature: async_generate's 0.8
	{"sampling.top_p", "0.9"},              //
	{"sampling.top_k", "20"},               //
	{"sampling.repetition_penalty", "1.0"}, //
	{"eval.n", "5"},                        // validate_sample_num
	{"eval.sampling.temperature", "0.7"},   // async_generate's validate default (thinking off)
	{"eval.sampling.top_p", "0.8"},         //
	{"eval.sampling.top_k", "20"},          //
}

// MAGRPO as CoMLRL's trainer runs it with its writing (TLDR) and
// code-generation (HumanEval) configs: comlrl 1.3.7's
// comlrl/trainers/reinforce/magrpo.py (the first release that takes the
// task repositories' keys), LLM_Collab_Writing 7e59995
// configs/magrpo_tldr_config.yaml, LLM_Collab_Code_Generation 07663c1
// configs/magrpo_he_config.yaml.
var magrpoCommon = []recipeEntry{
	{"assignment", "separate"},               // one model per agent
	{"advantage.estimator", "magrpo"},        //
	{"advantage.magrpo.baseline", "mean"},    // R − mean(R)
	{"advantage.magrpo.normalize", "true"},   // advantage_normalization
	{"optim.loss", "magrpo"},                 // −A · Σ_tokens log π
	{"optim.loss_agg", "seq-mean-token-sum"}, // averaged over completions
	{"optim.logprob_temperature", "raw"},     // log_softmax of the raw logits
	{"optim.lr_schedule", "constant"},        //
	{"optim.warmup_steps", "0"},              //
	{"optim.beta1", "0.9"},                   // torch.optim.AdamW defaults
	{"optim.beta2", "0.999"},                 //
	{"optim.eps", "1.0e-8"},                  //
	{"optim.weight_decay", "0.01"},           //
	{"optim.grad_clip", "0"},                 // no clipping
	{"optim.entropy_coef", "0"},              //
	{"optim.kl_coef", "0"},                   //
	{"workflow.joint.samples", "4"},          // num_generations
	{"workflow.joint.mode", "aligned"},       // joint_mode
	{"batch.prompts_per_step", "1"},          // one task at a time
	{"batch.n", "1"},                         // the G samples are the group
	{"max_new_tokens", "256"},                // max_new_tokens
	{"agents.*.format_penalty", "0"},         // one joint reward
	{"agents.*.thinking", "false"},           //
	{"eval.at_start", "true"},                // the untrained team
	{"eval.tasks", "4"},                      // eval_num_samples: the first 4 of the evaluation split
	{"eval.n", "1"},                          //
	{"eval.ks", "[1]"},                       //
	{"batch.shuffle", "false"},               // get_train_dataloader: shuffle=False, one task a step
	{"run.dtype", "bfloat16"},                // torch_dtype bfloat16 (coding), auto on a bf16 checkpoint (writing)
	{"optim.state_dtype", "model"},           // torch.optim.AdamW over the bf16 weights
	{"optim.loss_padding", "true"},           // the loss sums log π over generate's pads too
}

var magrpoWriting = []recipeEntry{
	{"run.steps", "2200"},                // num_train_epochs 2 × train[:1100] (magrpo_tldr_config.yaml:19,36)
	{"optim.lr", "5.0e-6"},               // agent_learning_rate
	{"optim.updates_per_step", "1"},      // rollout_buffer_size 1
	{"workflow.joint.turns", "1"},        // num_turns
	{"advantage.magrpo.gamma", "0.9"},    // discount (unused at one turn)
	{"sampling.temperature", "0.7"},      // agent_model.temperature
	{"sampling.top_p", "0.9"},            //
	{"sampling.top_k", "0"},              // top_k null
	{"eval.every", "20"},                 // eval_interval
	{"eval.sampling.temperature", "0.7"}, // evaluation samples as training does
	{"eval.sampling.top_p", "0.9"},       //
	{"eval.sampling.top_k", "0"},         //
}

var magrpoCoding = []recipeEntry{
	{"run.steps", "780"},                            // num_train_epochs 6 × test[33:163] (magrpo_he_config.yaml:20,41)
	{"optim.lr", "2.0e-5"},                          // agent_learning_rate
	{"optim.updates_per_step", "2"},                 // rollout_buffer_size 2
	{"workflow.joint.turns", "2"},                   // num_turns
	{"workflow.joint.termination_threshold", "3.8"}, // −0.2 on the reward shifted by −4
	{"advantage.magrpo.gamma", "1.0"},               // discount
	{"env.coding.single_aux", "false"},              // a single agent's aux earns nothing
	{"sampling.temperature", "0.6"},                 // agent_model.temperature
	{"sampling.top_p", "0.6"},                       //
	{"sampling.top_k", "0"},                         // top_k null
	{"eval.every", "4"},                             // eval_interval
	{"eval.sampling.temperature", "0.6"},            //
	{"eval.sampling.top_p", "0.6"},                  //
	{"eval.sampling.top_k", "0"},                    //
}

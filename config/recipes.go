package config

// recipes.go — the values of each recipe (recipe.go), key by key, each
// with the reference's name for it. docs/departures.md cites the files and
// commits; config/recipe_test.go checks the resolved config against the
// reference's values.

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
}

var drmasMath = []recipeEntry{
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
// (so no_tree, whose groups pool train_sample_num tasks).
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
	{"eval.every", "10"},                             // val_freq
	{"eval.at_start", "true"},                        // the initial validation
	{"eval.ks", "[1]"},                               //
}

var atgrpoGames = []recipeEntry{
	{"workflow.tree.mode", "no-tree"},      // sample_mode unset: no_tree
	{"workflow.tree.candidates", "1"},      //
	{"workflow.tree.max_turns", "5"},       // env.max_turns
	{"max_new_tokens", "2048"},             // max_response_length
	{"sampling.temperature", "1.5"},        // train_temperature
	{"sampling.top_p", "0.9"},              // async_generate's train default
	{"sampling.top_k", "20"},               //
	{"sampling.repetition_penalty", "1.0"}, // none at 244467e (1.2 from 5767f51)
	{"eval.n", "1"},                        // validate_sample_num 5, all greedy
	{"eval.sampling.temperature", "0"},     // val_temperature 0
	{"eval.sampling.top_p", "1.0"},         //
	{"eval.sampling.top_k", "0"},           //
}

var atgrpoMath = []recipeEntry{
	{"workflow.math_tool.mode", "no-tree"}, // sample_mode unset: no_tree
	{"workflow.math_tool.candidates", "1"}, //
	{"workflow.math_tool.max_turns", "5"},  // env.max_turns
	{"max_new_tokens", "8192"},             // the script's max_response_length
	{"sampling.temperature", "1.0"},        // train_temperature
	{"sampling.top_p", "0.9"},              // async_generate's train default
	{"sampling.top_k", "20"},               //
	{"sampling.repetition_penalty", "1.0"}, //
	{"eval.n", "5"},                        // validate_sample_num
	{"eval.sampling.temperature", "0.6"},   // val_temperature
	{"eval.sampling.top_p", "0.8"},         // async_generate's validate default (thinking off)
	{"eval.sampling.top_k", "20"},          //
}

var atgrpoCode = []recipeEntry{
	{"workflow.code_test.mode", "no-tree"}, // sample_mode unset: no_tree
	{"workflow.code_test.candidates", "1"}, //
	{"workflow.code_test.max_turns", "5"},  // env.max_turns
	{"max_new_tokens", "2048"},             // max_response_length
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
// code-generation (HumanEval) configs.
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
	{"eval.tasks", "4"},                      // eval_num_samples
	{"eval.n", "1"},                          //
	{"eval.ks", "[1]"},                       //
}

var magrpoWriting = []recipeEntry{
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

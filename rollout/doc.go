// Package rollout runs multi-agent episodes and turns every agent
// invocation into a Sample row.
//
// The pieces, one file each:
//
//	generator.go   Codec, ChatRenderer, Generator: what rollout needs of model/ and tokenizer/
//	agent.go       Agent and AgentConfig: name, model, prompt templates, sampling, parser, penalty
//	prompts.go     built-in prompt presets (math-solver, math-verifier, math-single)
//	parse.go       output parsers and their validity check (boxed, verdict, free)
//	workflow.go    Episode, Call, the Workflow interface and the registry (NewWorkflow)
//	mathrefine.go  Dr. MAS's Solver/Verifier refinement loop ("math-refine")
//	single.go      one agent answers once ("single")
//	sampler.go     the batched sampler: many episodes, one Generate call per model and batch
//	sample.go      the Sample row and the reward rule
//	task.go        Task, TaskSource, Scorer, Environment, the resumable TaskIterator
//	eval.go        accuracy, avg@k, pass@k, validity, turns and tokens
//	seed.go        SplitMix64 seeds and shuffles, fixed across Go releases
//
// Subpackages: answer (final-answer and tag extraction shared by parsers and
// rewards), scripted (a test double for Generator), env/math (the math
// environment). rollout never imports model, torch or tokenizer.
//
// # How a step runs
//
// Sampler.Run creates n episodes per task. A Workflow's Begin and Advance
// decide, from one episode's state, which Calls (agent + PromptData) come
// next and apply the completed ones. The sampler renders each call with its
// agent's templates and chat template, gathers the calls of all episodes,
// groups them by model, and sends each group in batches of at most
// MaxBatchRows to that model's Generator from the caller's goroutine.
// Episodes whose calls are all back advance on worker goroutines (parsing,
// environment steps, scoring) while the next model generates. When every
// episode has finished, each call becomes a Sample.
//
// # What comes next, and where it fits
//
// The interface is shaped for the three workflow families after math:
//
// Search router (Dr. MAS search): a Workflow whose episode state holds the
// gathered information and the env step. Advance after the Verifier's call
// reads <verify>yes|no</verify> and returns an Answer call or a Search call;
// after a Search call it runs retrieval on the worker goroutine (the HTTP
// request to a Search-R1-compatible server is ordinary pure-Go environment
// work) and puts the passages into the next Verifier's PromptData.Extra or
// team context. Nothing in the sampler changes.
//
// AT-GRPO tree sampling: Advance returns K calls for the acting agent, all
// with the same Turn and Node and Candidate 0…K−1; they are generated in the
// same batch. When they are back, Advance steps K clones of the environment
// state (a Stepper next to Scorer), sets each call's TeamReward (α·r_team)
// and LocalReward, keeps the best branch (argmax, lowest index on ties) as
// the episode state, and returns the next agent's K calls from it. Rows
// carry (Traj, Turn, Agent) for the advantage's group key, and each group
// holds exactly the K candidates of one state.
//
// MAGRPO joint actions: Advance returns G calls per agent at a node (all
// agents at once, so different models generate in the same round). When all
// are back it forms joint actions (aligned: the g-th of each agent; cross:
// the Cartesian product), scores each with the joint reward, opens a child
// Node per joint action for the next turn, and at the leaves back-propagates
// returns R = r + γ·mean(child returns) into the calls' TeamReward. Node and
// Candidate tell the advantage which rows are siblings.
package rollout

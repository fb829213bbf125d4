// Package rollout runs multi-agent episodes and turns every agent
// invocation into a Sample row.
//
// The pieces, one file each:
//
//	doc.go         this overview
//	generator.go   Codec, ChatRenderer, Generator: what rollout needs of model/ and tokenizer/
//	agent.go       Agent and AgentConfig: name, model, prompt templates, sampling, parser, penalty
//	prompts.go     built-in prompt presets (math-solver, math-verifier, math-single)
//	parse.go       output parsers and their validity check (boxed, verdict, python-program, free)
//	workflow.go    Episode, Call, the Workflow interface and helpers for workflow packages
//	registry.go    the plug-in registries: environments and workflows by name, with their options keys
//	oracle.go      train sft's demonstration writers, found by workflow and environment (OracleFor)
//	stepper.go     State, StepResult, Stepper: the contract of turn-based environments
//	jointscorer.go JointScorer, JointResult, JointCredit: the contract of cooperative environments
//	sampler.go     the batched sampler: many episodes, each model's engine fed as calls come
//	batchengine.go a batch Generator as an Engine (one adapter, so the sampler has one loop)
//	sample.go      the Sample row and the reward rule
//	task.go        Task, TaskSource, Scorer, Environment, the resumable TaskIterator
//	eval.go        accuracy, avg@k, pass@k, validity, turns and tokens
//	seed.go        SplitMix64 seeds and shuffles, fixed across Go releases
//
// Subpackages: answer (final-answer and tag extraction shared by parsers and
// rewards), scripted (a test double for Generator), internal/rollouttest
// (the scripted team the tests share). The plug-ins, each registering
// itself on import (config/plugins.go imports them all):
//
//	workflow/mathrefine  Dr. MAS's Solver/Verifier refinement loop ("math-refine")
//	workflow/single      one agent answers once ("single")
//	workflow/tree        AT-GRPO's tree sampling over a Stepper environment ("tree")
//	workflow/joint       MAGRPO's joint actions over a JointScorer environment ("joint")
//	env/math             the math environment (procedural or dataset problems)
//	env/search           Dr. MAS's search environment and its orchestra ("search")
//	env/planpath, env/sokoban, env/sudoku   AT-GRPO's games
//	env/writing, env/coding                 CoMLRL's cooperative tasks
//
// rollout never imports model, torch or tokenizer, nor any plug-in.
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
// # The workflows and their rows
//
// Dr. MAS search (package env/search): a router. Advance after the
// Verifier's call reads <verify>yes|no</verify> and returns an Answer call or
// a Search call; after a Search call it retrieves on the worker goroutine
// (BM25 in process, or an HTTP request to a Search-R1 server) and adds the
// passages to the team context. One call per turn: rows key (Prompt, Traj,
// Agent, Turn), Node = Turn, Candidate = 0.
//
// AT-GRPO tree sampling (workflow/tree, over a Stepper: env/planpath,
// sokoban, sudoku): Advance returns K calls for the acting agent, all with
// the same Turn and Node and Candidate 0…K−1, generated in the same batch.
// When they are back it steps K clones of the state, sets each call's
// TeamReward (α·r), keeps the best branch (argmax, lowest index on ties)
// and returns the next agent's K calls from it. The row contract with the
// estimator (advantage.ATGRPO): an episode is one environment, so each row's
// Env is its Traj (set in sample.go), and the group (Prompt, Env, Turn, Agent)
// holds exactly the K candidates of one state; the estimator, not the
// workflow, normalises them.
//
// MAGRPO joint actions (workflow/joint, over a JointScorer: env/writing,
// env/coding): Begin and Advance return G calls per agent at a node (all
// agents at once, so different models generate in the same round). When a
// node's calls are back the workflow forms its joint actions (aligned: the
// g-th of each agent; cross: the Cartesian product), scores each with the
// environment's joint reward, and, below the last turn, opens a child Node
// per joint action whose prompts carry the feedback. Each completion gets
// one Credit (Joint id, reward) per joint action it is in, and so one row
// each; the estimator (advantage.MAGRPO) computes returns with γ over the
// tree from those rows.
package rollout

// Package run owns a training run and the tools around it: the team (models,
// engines, adapters, trainers, agents, workflow, environment splits, data
// parallel placement), the RL step loop, evaluation, supervised warm-up,
// checkpoints and exports. cmd/train parses flags into the option structs of
// this package (Train, SFT, Eval, Export, Generate, Init, Plan, Index, Serve)
// and calls their Run methods; nothing here knows about flags or cobra.
//
// The files, one concept each:
//
//	doc.go          this overview
//	train.go        Train: opening the run, the steps, the end (export, plot)
//	step.go         one step top to bottom: rollout, rows, advantages, update, metrics, checkpoint
//	overlap.go      the step's update half: each model in turn, or models on different devices at once (concurrent_updates)
//	overlaprollout.go the next step's rollout beside the update, from engine weight copies (policy_lag)
//	resume.go       which config a run starts from; the guards on output_dir
//	start.go        which checkpoint: rank 0 chooses, every rank follows; torchrun restarts, bad checkpoints, --resume
//	rundir.go       one writer per run directory: its lock, then the guards, on rank 0 for every rank
//	nextcommand.go  the exact command that continues an interrupted run
//	checkpointarg.go what eval and export --checkpoint name; the team a checkpoint trained
//	console.go      progress lines, interrupts, the held-out summary
//	preflight.go    what a run checks before it loads a weight (train check stops there)
//	fit.go          what the data must fit: first prompts within the positions and engine.max_seq_len, an evaluation's test split
//	build.go        the team: a resolved config turned into models, trainers, agents, workflow
//	engine.go       one generation engine per trained model behind the sampler's Engine interface
//	rows.go         rollout samples → advantage rows and policy sequences; reward metrics
//	stepmetrics.go  per-step figures beside the trainer's: aliases, peaks, engine counters, memory
//	evaluate.go     Eval and the periodic evaluation: accuracy, avg@n, pass@k
//	sft.go          SFT: supervised warm-up on oracle demonstrations of the workflow
//	state.go        checkpoints of a run, resuming from them, the samples log
//	board.go        the run's TensorBoard events
//	export.go       Export and the end-of-run export: Hugging Face and PEFT directories
//	lorabase.go     the frozen base of LoRA adapters: recorded in checkpoints, checked when loaded
//	dataparallel.go the run's data-parallel group (package dist): joining it, the device, the split, the weight check
//	shard.go        sharded training state: the run's lines about it, the save-kill test hook
//	brokenpipe.go   a closed console (train | tee, Ctrl-C) stops the printing, not the run or any command
//	interrupt.go    SIGINT and SIGTERM in export and sft: stop at a safe point, say what was written
//	notes.go        --print-samples, the zero-advantage warning, the resolved config in the run directory
//	heartbeat.go    "still running" lines of silent phases; SFT's progress line
//	check.go        Check: what the run refuses before the weights, then the resolved config and the plan
//	evaljson.go     train eval --json: the evaluation as one JSON object
//	memory.go       the resident memory of a run, from config.json files before loading
//	plan.go         Plan: a run's device memory per device, without loading a weight
//	planupdate.go   the plan's update, phase by phase: grads, the head's backward, buckets, activations
//	planfit.go      whether a plan fits its GPUs with slack, and the remedies, planned and ranked
//	generate.go     Generate: sampling from a model directory (model.Generate)
//	init.go         Init: a tiny random model and tokenizer for tests and CPU demos
//	compare.go      CompareRuns: one report over several runs' metrics
//	comparegroups.go which runs of a comparison are seeds of one experiment (configs that agree but for the seed)
//	plot.go         DefaultCharts: the panels a run plots at its end
//	guard.go        RefuseReplace: nothing existing is replaced without --force
//	retrieve.go     Index and Serve: a BM25 index built from a corpus, served over HTTP
//	bench.go        Bench: generation and update throughput of a model on this device (package bench)
//
// All torch work of a run happens on the caller's goroutine, which must be
// locked to its OS thread (package torch on thread-local state).
package run

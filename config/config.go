// Package config is troupe's run configuration: the typed YAML schema, its
// defaults, loading with strict keys and `--set a.b.c=value` overrides, and
// validation whose every message names the key and the fix.
//
// Files:
//
//	config.go     the schema (Config and its sections) and Default
//	load.go       Load, --set overrides, the key-by-key check against the schema
//	validate.go   Validate, and resolving agents into trained models
//	sections.go   the env and workflow sections, whose options come from the plug-in registries
//	plugins.go    the environments and workflows troupe ships (their only importer)
//	lora.go       the lora section and per-agent lora blocks
//	resume.go     what may change on resume: ResumeChanges, CheckResume, LogResumeChanges
//	paths.go      run.output_dir must be a directory that exists or can be created
//	sizes.go      sizes against the machine's memory and the models; presets against the environment
//	recipe.go     recipe: a paper's preset filled under the file (recipes.go: the values)
//
// Precedence: Default() < a recipe (recipe.go) < the YAML file < --set
// flags, in that order. Unknown
// keys are errors naming their full path (and the nearest known key). The
// resolved config (Marshal) is printed at the start of a run and saved with
// every checkpoint.
//
// Why a package of its own rather than a file in cmd/train: tests and the
// subcommands (train, eval, export) share it, and its schema is made of the
// option types of rollout, advantage and policy, which it composes without
// those packages knowing about each other.
//
// Paths in a config (models, datasets, output_dir) are relative to the
// working directory, not to the config file.
package config

import (
	"troupe/advantage"
	"troupe/optim"
	"troupe/rollout"
)

// fileChecks says which files a loaded config must find on disk.
type fileChecks int

const (
	allFiles   fileChecks = iota // Load: model directories, tokenizers, datasets
	noModels                     // LoadSaved: the checkpoint has the weights and tokenizer
	modelsOnly                   // LoadForPlan: config.json of each model, nothing else
)

// Config is one training run.
type Config struct {
	files  fileChecks   // which files Validate requires to exist
	recipe recipeRecord // what Recipe filled in (recipe.go)
	length string       // how run.steps was counted from run.epochs ("" when it was not; epochs.go)

	// Recipe names a paper's preset (drmas, atgrpo-pettingllms,
	// magrpo-comlrl): its reference code's values for every key the file
	// and --set leave unset (recipe.go).
	Recipe       string           `yaml:"recipe,omitempty"`
	Run          Run              `yaml:"run"`
	Models       map[string]Model `yaml:"models"`         // checkpoints by name
	Assignment   string           `yaml:"assignment"`     // separate | shared | lora
	LoRA         LoRA             `yaml:"lora"`           // adapters' shape under assignment: lora
	Agents       []Agent          `yaml:"agents"`         // the team
	Workflow     Workflow         `yaml:"workflow"`       // the orchestra
	Env          Env              `yaml:"env"`            // tasks and rewards
	Batch        Batch            `yaml:"batch"`          // rollout batch per step
	Engine       Engine           `yaml:"engine"`         // the generation engine per model
	Sampling     rollout.Sampling `yaml:"sampling"`       // training sampling, overridable per agent
	MaxNewTokens int              `yaml:"max_new_tokens"` // per response, overridable per agent
	Advantage    Advantage        `yaml:"advantage"`      // estimator and options
	Optim        optim.Settings   `yaml:"optim"`          // optimizer and loss, overridable per agent
	Eval         Eval             `yaml:"eval"`           // periodic evaluation on the test split
	Checkpoint   Checkpoint       `yaml:"checkpoint"`     // cadence and retention
	Export       Export           `yaml:"export"`         // Hugging Face export at the end
}

// Run holds the run-wide settings.
type Run struct {
	Name       string `yaml:"name"`        // shown in logs
	OutputDir  string `yaml:"output_dir"`  // metrics.jsonl, checkpoints/, export/ go here
	Seed       uint64 `yaml:"seed"`        // every random choice derives from it
	Steps      int    `yaml:"steps"`       // train steps
	Epochs     int    `yaml:"epochs"`      // or passes over the training split: epochs × ⌊tasks / prompts_per_step⌋ steps (epochs.go); 0: run.steps
	Device     string `yaml:"device"`      // default device of the models: cpu, cuda, cuda:N
	DType      string `yaml:"dtype"`       // default dtype of the models: float32 or bfloat16
	LogSamples int    `yaml:"log_samples"` // rows per step written to samples.jsonl (0 = none)
	// TensorBoard writes events.out.tfevents.troupe beside metrics.jsonl:
	// every metric as a scalar and the step's first episodes as text.
	TensorBoard bool `yaml:"tensorboard"`
	// ConcurrentUpdates updates the team's trained models on different
	// devices at the same time, each device's on a torch thread of its
	// own, with the synchronous step's results bit for bit (run/overlap.go;
	// docs/overlap.md). Off by default.
	ConcurrentUpdates bool `yaml:"concurrent_updates"`
	// PolicyLag is how many updates the weights a step's rows were
	// sampled from may trail the weights it trains: 0 (the default) samples
	// every step's rows from its own weights, one step after another; 1 runs
	// the next step's rollout, on a copy of the weights, beside this step's
	// update (run/overlaprollout.go; docs/overlap.md).
	PolicyLag int `yaml:"policy_lag"`
}

// Model is a checkpoint to load: a Hugging Face directory with config.json,
// safetensors weights and tokenizer.json.
type Model struct {
	Path      string `yaml:"path"`      // the directory
	Tokenizer string `yaml:"tokenizer"` // directory or tokenizer.json; default: Path
	DType     string `yaml:"dtype"`     // default: run.dtype
	Device    string `yaml:"device"`    // default: run.device
	// ReferenceDevice holds the frozen KL reference (kl_coef > 0); default:
	// the model's device.
	ReferenceDevice string `yaml:"reference_device"`
	// Shard spreads the model's training state over the data-parallel
	// ranks (docs/scaling.md): 0 none; 1 the float32 masters and AdamW
	// moments; 2 also the grads; 3 also the weights during the update.
	// One process has nothing to spread over and trains unsharded.
	Shard int `yaml:"shard"`
	// ShardBucketMiB bounds one bucket of the model's collectives: the
	// sharded ones in float32 MiB (0: 1024, a decoder layer per bucket), and
	// at shard 0–1 the grads' all-reduce in MiB of its buffer (0: 256).
	ShardBucketMiB float64 `yaml:"shard_bucket_mib"`
}

// Agent is one member of the team: rollout's agent settings plus per-agent
// overrides of the optimizer and loss settings.
type Agent struct {
	rollout.AgentConfig `yaml:",inline"`
	Optim               optim.Overrides `yaml:"optim"`
	LoRA                AgentLoRA       `yaml:"lora"` // assignment: lora: this agent's adapter (or full: true)
}

// Batch is the rollout batch of one train step.
type Batch struct {
	PromptsPerStep int  `yaml:"prompts_per_step" json:"prompts_per_step"` // tasks per step
	N              int  `yaml:"n" json:"n"`                               // trajectories per task (the GRPO group size)
	MaxBatchRows   int  `yaml:"max_batch_rows" json:"max_batch_rows"`     // cap on rows per Generate call (0 = none)
	Shuffle        bool `yaml:"shuffle" json:"shuffle"`                   // shuffle the train split each epoch
	// EpochTasks, when > 0, makes an epoch of the split's first EpochTasks
	// tasks only, walked again every epoch (PettingLLMs' replay of
	// epoch_size × train_batch_size tasks; rollout.FirstTasks).
	EpochTasks int `yaml:"epoch_tasks" json:"epoch_tasks"`
}

// Advantage selects the estimator; its options are inline.
type Advantage struct {
	Estimator         string `yaml:"estimator"`
	advantage.Options `yaml:",inline"`
}

// Eval configures evaluation on the test split.
type Eval struct {
	Every    int              `yaml:"every"`    // train steps between evaluations (0 = only with the eval subcommand)
	AtStart  bool             `yaml:"at_start"` // also evaluate before the first step
	Tasks    int              `yaml:"tasks"`    // test tasks (0 = the whole split)
	N        int              `yaml:"n"`        // samples per task (avg@n, pass@k)
	Ks       []int            `yaml:"ks"`       // k values of pass@k
	Sampling rollout.Sampling `yaml:"sampling"` // evaluation sampling (Dr. MAS: T 0.6, top-p 0.95)
}

// Checkpoint configures saving.
type Checkpoint struct {
	Every    int  `yaml:"every"`     // train steps between checkpoints (0 = only at the end and on a signal)
	Keep     int  `yaml:"keep"`      // newest checkpoints kept (0 = all)
	OnSignal bool `yaml:"on_signal"` // save on SIGINT/SIGTERM before exiting
	// AtEnd saves after the last step (default true). Off for benchmarks of
	// large models, whose final save would take longer than their steps;
	// an export at the end still happens when export.at_end says so.
	AtEnd bool `yaml:"at_end"`
}

// Export configures the Hugging Face export written at the end of a run.
type Export struct {
	AtEnd         bool   `yaml:"at_end"`          // export every trained model when the run ends
	DType         string `yaml:"dtype"`           // float32 or bfloat16 ("" = the model's dtype)
	MaxShardBytes int64  `yaml:"max_shard_bytes"` // shard above this size (0 = 5 GB)
	// MergeAdapters also writes, for every adapter (assignment: lora), the
	// base with the adapter folded in as a full model at <name>-merged.
	MergeAdapters bool `yaml:"merge_adapters"`
}

// Engine configures the generation engine of each model: continuous
// batching over a key/value arena of fixed slots, sized from a budget.
type Engine struct {
	Enabled       bool    `yaml:"enabled"`        // false: one batched Generate call per model per round (the reference path)
	KVBudgetGiB   float64 `yaml:"kv_budget_gib"`  // key/value memory per model; 0 = automatic (see KVFraction)
	KVFraction    float64 `yaml:"kv_fraction"`    // with kv_budget_gib 0 on CUDA: this share of the free device memory, split among the models on it
	MaxSeqLen     int     `yaml:"max_seq_len"`    // tokens per slot (prompt + response); 0 = min(max_position_embeddings, max_new_tokens + 2048)
	MaxSlots      int     `yaml:"max_slots"`      // most rows decoded at once per model
	SyncEvery     int     `yaml:"sync_every"`     // decode steps between host reads
	PrefillTokens int     `yaml:"prefill_tokens"` // most prompt tokens one prefill forward computes (bounds its transient memory)
	Release       bool    `yaml:"release"`        // free the arena after each rollout, so the update has the memory
	PrefixCache   bool    `yaml:"prefix_cache"`   // reuse keys and values already in the arena for shared prompt prefixes
	CUDAGraphs    bool    `yaml:"cuda_graphs"`    // on CUDA: decode in fixed-size batches captured as CUDA graphs
	CPUKernels    bool    `yaml:"cpu_kernels"`    // on CPU: single-pass generation kernels (faster; each row computed the same whatever shares its step)
}

// Default returns the defaults every file starts from: a Dr. MAS math run
// (drmas estimator, reference optimizer settings) of a small size.
func Default() Config {
	return Config{
		Run: Run{
			Name:      "troupe",
			OutputDir: "runs/troupe",
			Seed:      1,
			Steps:     10,
			Device:    "cpu",
			DType:     "float32",

			TensorBoard: true,
		},
		Models:       map[string]Model{},
		Assignment:   "separate",
		LoRA:         DefaultLoRA(),
		Workflow:     defaultWorkflow(),
		Env:          defaultEnv(),
		Batch:        Batch{PromptsPerStep: 8, N: 4, MaxBatchRows: 256, Shuffle: true},
		Engine:       Engine{Enabled: true, KVFraction: 0.3, MaxSlots: 256, SyncEvery: 16, PrefillTokens: 16384, Release: true, PrefixCache: true, CPUKernels: true},
		Sampling:     rollout.DefaultSampling,
		MaxNewTokens: 512,
		Advantage:    Advantage{Estimator: "drmas", Options: advantage.DefaultOptions()},
		Optim:        optim.DefaultSettings(),
		Eval: Eval{Every: 0, Tasks: 32, N: 4, Ks: []int{1},
			Sampling: rollout.Sampling{Temperature: 0.6, TopP: 0.95}},
		Checkpoint: Checkpoint{Every: 0, Keep: 2, OnSignal: true, AtEnd: true},
		Export:     Export{AtEnd: true},
	}
}

package run

// check.go — `train check` (and `train --dry-run`): whatever a run would
// refuse before it loads a weight, refused with the run's own line, then
// the fully resolved config and the run's plan. It goes through the run's
// own checks, not copies of them: config.Load (keys, values, the files the
// config names), the output directory that already holds a run
// (refuseFreshRun), and preflight.go — the tokenizers and config.json of
// every model, the agents' chat templates and chat_date, the environment's
// datasets read record by record, the workflow (its interpreter probed in
// the sandbox), the estimator, the task order. The resolved config shows
// each agent's inherited settings (optimizer, sampling, max_new_tokens,
// reward_scale) with their effective values rather than null; the plan
// lists the agents and the models they train, the workflow, the estimator,
// the steps and batch, the evaluation, checkpoint and export cadence, and
// the memory per device (plan.go).
//
// It answers for this machine: a device it does not have, or GPU memory it
// lacks, is refused as the run would refuse it (train plan works anywhere).
// What it is not: a check of the weights (dtype, NaN, shapes) or of the
// engines' and trainers' allocations; those need the weights loaded.

import (
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"troupe/config"
	"troupe/optim"
	"troupe/rollout"
	"troupe/torch"
)

// Check is `train check`'s options.
type Check struct {
	Config string
	Sets   []string
	GpuGiB float64 // each GPU's memory for the memory plan; 0: 80
	Prompt int     // prompt tokens assumed by the memory plan; 0: 1024
	Ranks  int     // data-parallel ranks the memory plan assumes (train --nproc); <= 1: one process
}

// Run prints the resolved config and the plan.
func (c *Check) Run(out io.Writer) error {
	if c.Config == "" {
		return fmt.Errorf("check: pass --config run.yaml")
	}
	cfg, err := config.Load(c.Config, c.Sets)
	if err != nil {
		return err
	}
	if err := refuseFreshRun(cfg.Run.OutputDir, false); err != nil {
		return err
	}
	if err := checkRanks(cfg, c.Ranks); err != nil {
		return err
	}
	// on a machine that sees no CUDA device (a login node), a CUDA config's
	// devices are left to the GPU node; everything else is checked
	devices := cudaDevicesOf(cfg)
	offNode := len(devices) > 0 && torch.CUDADeviceCount() == 0
	notes, err := preflight(cfg, offNode)
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(out, n)
	}
	resolved, err := effectiveConfig(cfg).Marshal()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "# resolved config (per-agent settings with their effective values)\n%s\n", resolved)
	fmt.Fprintf(out, "# plan\n")
	printPlan(out, cfg)
	gpu, prompt := c.GpuGiB, c.Prompt
	if gpu <= 0 {
		gpu = 80
	}
	if prompt <= 0 {
		prompt = 1024
	}
	fmt.Fprintf(out, "\n# memory per device (train plan: resident exact, update transient estimated; GPUs of %.0f GiB, %d-token prompts)\n", gpu, prompt)
	ranks := c.Ranks
	if ranks <= 1 {
		ranks = 0
	} else {
		fmt.Fprintf(out, "one rank of %d:\n", ranks)
	}
	capacity := int64(gpu * (1 << 30))
	p, err := memoryPlan(cfg, capacity, prompt, ranks)
	if err != nil {
		fmt.Fprintf(out, "memory plan not available: %v\n", err)
	} else {
		p.print(out)
		launch := "train check -c " + c.Config
		if ranks > 0 {
			launch += fmt.Sprintf(" --nproc %d", ranks)
		}
		pl := planner{path: c.Config, sets: c.Sets, capacity: capacity, prompt: prompt}
		if err := pl.verdict(out, cfg, p, ranks, launch); err != nil {
			return err
		}
	}
	if offNode {
		fmt.Fprintf(out, "\ncheck: the config, its files, tokenizers, chat templates, datasets, workflow and memory plan (GPUs of %.0f GiB) pass every check a run makes before it loads the weights; nothing was written. Not checked here: the devices %s (this machine sees no CUDA device) — run train check on the GPU node, or start the run there.\n", gpu, strings.Join(devices, ", "))
		return nil
	}
	fmt.Fprintf(out, "\ncheck: the run would start: the config, its files, tokenizers, chat templates, datasets and workflow pass every check a run makes before it loads the weights; nothing was written. Start it with the same config and --set flags.\n")
	return nil
}

// Validate makes, once, every check that each of ranks ranks of this run
// would make before it loads a weight — the config (or the resumed
// checkpoint's), the ranks against the batch, a fresh run's output
// directory, and preflight — so that a launcher (train --nproc) refuses a
// run with one line before it starts any rank, instead of each rank
// printing it.
func (c *Train) Validate(ranks int) error {
	view, cfg, err := c.loadConfig()
	if err != nil {
		return err
	}
	if err := checkRanks(cfg, ranks); err != nil {
		return err
	}
	from := view.Explicit // the checkpoint --resume names; a fresh run's directory is checked
	if from == "" {
		if err := refuseFreshRun(cfg.Run.OutputDir, c.Force); err != nil {
			return err
		}
	}
	t := newTeam(cfg, nil)
	t.ranks = ranks
	if err := t.prepare(true, from); err != nil {
		return err
	}
	_, err = t.taskIterator()
	return err
}

// effectiveConfig is cfg with every agent's unset overrides filled in with
// the values the agent inherits.
func effectiveConfig(cfg *config.Config) *config.Config {
	c := *cfg
	c.Agents = slices.Clone(cfg.Agents)
	for i := range c.Agents {
		a := &c.Agents[i]
		s := a.Optim.Apply(cfg.Optim)
		if s.LRSchedule == optim.ScheduleCosine && s.TotalSteps == 0 {
			s.TotalSteps = cfg.Run.Steps // a cosine schedule spans the run
		}
		a.Optim = overridesOf(s)
		smp := a.Sampling.Apply(cfg.Sampling)
		a.Sampling = rollout.SamplingOverride{Temperature: &smp.Temperature, TopP: &smp.TopP, TopK: &smp.TopK}
		if a.MaxNewTokens == 0 {
			a.MaxNewTokens = cfg.MaxNewTokens
		}
		if a.RewardScale == 0 {
			a.RewardScale = 1
		}
		a.LoRA = cfg.EffectiveLoRA(*a)
	}
	return &c
}

// overridesOf sets every override to the settings' value.
func overridesOf(s optim.Settings) optim.Overrides {
	var o optim.Overrides
	ov := reflect.ValueOf(&o).Elem()
	sv := reflect.ValueOf(s)
	for i := 0; i < ov.NumField(); i++ {
		v := sv.FieldByName(ov.Type().Field(i).Name)
		if !v.IsValid() {
			continue
		}
		p := reflect.New(v.Type())
		p.Elem().Set(v)
		ov.Field(i).Set(p)
	}
	return o
}

// printPlan lists what the run will do.
func printPlan(out io.Writer, cfg *config.Config) {
	for _, tr := range cfg.Trained() {
		what := "full weights"
		if tr.LoRA != nil {
			what = fmt.Sprintf("a LoRA adapter (r %d, alpha %g on %s) on the frozen base", tr.LoRA.Rank, tr.LoRA.Alpha, strings.Join(tr.LoRA.Targets, ","))
		}
		fmt.Fprintf(out, "model %s: trains %s of models.%s (%s, %s on %s) for agents %s\n", tr.Name, what, tr.Source, tr.Model.Path,
			tr.Model.DType, tr.Model.Device, strings.Join(tr.Agents, ", "))
	}
	if src, set, kept := cfg.RecipeReport(); cfg.Recipe != "" {
		fmt.Fprintf(out, "recipe: %s (%s): %d keys set from it; the config's own value kept for %d: %s\n", cfg.Recipe, src, len(set), len(kept), strings.Join(kept, ", "))
	}
	fmt.Fprintf(out, "assignment: %s\n", cfg.Assignment)
	fmt.Fprintf(out, "workflow: %s, environment: %s\n", cfg.Workflow.Name, cfg.Env.Name)
	fmt.Fprintf(out, "advantage estimator: %s\n", cfg.Advantage.Estimator)
	b := cfg.Batch
	fmt.Fprintf(out, "steps: %d, each %d tasks × %d trajectories = %d episodes (seed %d)\n", cfg.Run.Steps, b.PromptsPerStep, b.N, b.PromptsPerStep*b.N, cfg.Run.Seed)
	if l := cfg.RunLength(); l != "" {
		fmt.Fprintf(out, "  counted from run.epochs: %s\n", l)
	}
	ev := "only with train eval"
	if cfg.Eval.Every > 0 {
		ev = fmt.Sprintf("every %d steps", cfg.Eval.Every)
	}
	if cfg.Eval.AtStart {
		ev += ", and before the first step"
	}
	fmt.Fprintf(out, "evaluation: %s (%d tasks × %d samples)\n", ev, cfg.Eval.Tasks, cfg.Eval.N)
	ck := "at the end and on a signal"
	if cfg.Checkpoint.Every > 0 {
		ck = fmt.Sprintf("every %d steps, %s", cfg.Checkpoint.Every, ck)
	}
	fmt.Fprintf(out, "checkpoints: %s, keeping %d; export at the end: %v\n", ck, cfg.Checkpoint.Keep, cfg.Export.AtEnd)
	fmt.Fprintf(out, "output: %s\n", cfg.Run.OutputDir)
}

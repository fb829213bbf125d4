package run

// preflight.go — everything a run checks before it loads a weight, in the
// one path that `train`, `train eval` and `train check` share: the GPU
// memory the weights and optimizer state need, each trained model's device,
// tokenizer and config.json (the tokenizer's vocabulary against the
// model's), the agents bound to their chat templates (chat_date, a
// template troupe can render), the environment's splits (the datasets read
// and parsed record by record, as the rollouts will), the workflow (a
// program-running team probes its interpreter in the sandbox) and the
// advantage estimator. Tasks the environment sets aside as it reads its
// data (a coding task whose reference solution fails its own tests) are
// noted, and printed by both. A run that gets past it loads the weights
// (build.go); `train check` stops here, so whatever this refuses, both
// refuse with the same line.
//
// What it is not: a check of the weights themselves (dtype, NaN, shapes
// against config.json), the generation engines' memory or the trainers;
// those need the weights and are the run's alone.

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"troupe/advantage"
	"troupe/ckpt"
	"troupe/config"
	"troupe/dist"
	"troupe/model"
	"troupe/rollout"
	"troupe/tokenizer"
	"troupe/torch"
)

// newTeam is an empty team of cfg's trained models.
func newTeam(cfg *config.Config, dp *dist.Group) *team {
	return &team{cfg: cfg, dist: dp, trained: cfg.Trained(), models: map[string]*model.Model{},
		refs: map[string]*model.Model{}, bases: map[string]*model.Model{}, tokenizers: map[string]*tokenizer.Tokenizer{},
		tokDirs: map[string]string{}, modelConfigs: map[string]model.Config{}}
}

// preflight runs the weight-free checks of a fresh run of cfg (train
// check); its team holds no model and is dropped. It returns what reading
// the data set aside. offNode: this machine sees no CUDA device, so the
// CUDA devices cfg names are not checked (a config vetted on a login node
// before the job is queued); everything else is.
func preflight(cfg *config.Config, offNode bool) (notes []string, err error) {
	t := newTeam(cfg, nil)
	t.offNode = offNode
	if err := t.prepare(true, ""); err != nil {
		return nil, err
	}
	_, err = t.taskIterator()
	return t.notes, err
}

// checkRanks refuses a step's batch that ranks data-parallel ranks cannot
// share: each rolls out an equal part of batch.prompts_per_step, at least
// one task. The run (with its world size) and train check (with --nproc)
// make it alike.
func checkRanks(cfg *config.Config, ranks int) error {
	p := cfg.Batch.PromptsPerStep
	switch {
	case ranks <= 1:
		return nil
	case cfg.Run.PolicyLag != 0:
		return fmt.Errorf("run.policy_lag: %d is not built for data-parallel ranks (%d here; the engine copy and the rollout beside the update run in one process); set run.policy_lag: 0, or train in one process", cfg.Run.PolicyLag, ranks)
	case p < ranks:
		return fmt.Errorf("batch.prompts_per_step is %d, fewer than the %d data-parallel ranks: each rank rolls out at least one task per step; raise it to %d (or a multiple of it), or start fewer ranks", p, ranks, ranks)
	case p%ranks != 0:
		return fmt.Errorf("batch.prompts_per_step is %d, which %d ranks cannot split evenly; make it a multiple of %d", p, ranks, ranks)
	}
	return nil
}

// setAsideNotes says, per split, which tasks its environment left out
// when it read its data (an environment that checks its tasks has a
// SetAside method: coding sets aside tasks whose reference solution fails
// its own tests).
func setAsideNotes(env string, splits map[string]rollout.Environment) []string {
	var notes []string
	for _, split := range []string{"train", "test"} {
		a, ok := splits[split].(interface{ SetAside() []string })
		if !ok {
			continue
		}
		if aside := a.SetAside(); len(aside) > 0 {
			notes = append(notes, fmt.Sprintf("env %s: set aside %d tasks of the %s split, which no program could be scored against: %s", env, len(aside), split, strings.Join(aside, "; ")))
		}
	}
	return notes
}

// printNotes prints the team's notes, one line each.
func (t *team) printNotes(out io.Writer) {
	for _, n := range t.notes {
		fmt.Fprintln(out, n)
	}
}

// taskIterator is the order in which the run draws its training tasks.
func (t *team) taskIterator() (*rollout.TaskIterator, error) {
	var src rollout.TaskSource = t.train
	if n := t.cfg.Batch.EpochTasks; n > 0 { // an epoch replays the split's first n tasks
		var err error
		if src, err = rollout.FirstTasks(src, n); err != nil {
			return nil, err
		}
	}
	return rollout.NewTaskIterator(src, rollout.DeriveSeed(t.cfg.Run.Seed, seedData), t.cfg.Batch.Shuffle)
}

// prepare does everything before the weights: withTrainers and from as
// buildTeam's.
func (t *team) prepare(withTrainers bool, from string) error {
	cfg := t.cfg
	// a run whose weights and optimizer state alone cannot fit a GPU stops
	// here, before minutes of loading (a config that cannot be read is left
	// to the loaders below to report)
	ranks := t.ranks // data-parallel ranks: sharded state divides by them
	if t.dist != nil {
		ranks = t.dist.World()
	}
	if parts, err := residentPlan(cfg, withTrainers, ranks); err == nil {
		if err := checkResident(parts, freeMemory); err != nil {
			return err
		}
		t.pendingState = map[torch.Device]int64{} // the engines' automatic budgets leave it room
		for _, p := range parts {
			if p.state {
				t.pendingState[p.dev] += p.bytes
			}
		}
	}
	for _, tr := range t.trained {
		options := loadOptions
		if t.offNode {
			options = parseOptions
		}
		if _, err := options(tr.Model); err != nil {
			return fmt.Errorf("models.%s: %w", tr.Source, err)
		}
		weights, tokPath, what := tr.Model.Path, tr.Model.Tokenizer, "models."+tr.Source
		if from != "" {
			dir := filepath.Join(from, filepath.FromSlash(ckpt.ModelStateDir(tr.Name)))
			what = fmt.Sprintf("checkpoint %s, model %s", from, tr.Name)
			if tr.LoRA != nil {
				what = fmt.Sprintf("checkpoint %s, adapter %s", from, tr.Name)
				// the frozen base the checkpoint recorded (lorabase.go), refused
				// here as at load when the configured one is another model
				base, _, err := resolveBase(tr, from)
				if err != nil {
					return err
				}
				weights = base
			} else {
				weights = dir
			}
			t.tokDirs[tr.Name], tokPath = dir, dir
		}
		mc, err := model.LoadConfig(weights) // an adapter's is its base's
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		tok, err := tokenizer.Load(tokPath)
		if err != nil {
			return fmt.Errorf("%s, tokenizer: %w", what, err)
		}
		if err := tok.CheckModel(mc.VocabSize, mc.EOSTokenIDs, mc.BOSTokenID, tokenizerFix(tr)); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		t.tokenizers[tr.Name], t.modelConfigs[tr.Name] = tok, mc
	}
	if err := t.buildAgents(cfg.AgentConfigs(), cfg.AgentDefaults()); err != nil {
		return err
	}
	var err error
	if t.train, t.test, err = environments(cfg); err != nil {
		return err
	}
	if err := cfg.StepsFromEpochs(t.train.Len()); err != nil { // run.epochs: the split's size is known now
		return err
	}
	t.notes = setAsideNotes(cfg.Env.Name, map[string]rollout.Environment{"train": t.train, "test": t.test})
	if t.workflow, err = rollout.NewWorkflow(cfg.Workflow.Name, cfg.Workflow.Options(), t.agents, t.train); err != nil {
		return err
	}
	if err := t.checkEvalSplit(); err != nil { // fit.go
		return err
	}
	if err := t.checkPromptFit(); err != nil {
		return err
	}
	if t.estimator, err = advantage.New(cfg.Advantage.Estimator, cfg.Advantage.Options); err != nil {
		return err
	}
	return nil
}

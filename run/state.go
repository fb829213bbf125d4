package run

// state.go — checkpoints of a run and resuming from them.
//
// A checkpoint (ckpt.Begin … Commit: temporary directory, fsync, rename) holds:
//
//	config.yaml                 the resolved config
//	train_state.json            the next step, the data position, trainer counters,
//	                            the LoRA bases' identities (lorabase.go)
//	models/<name>/              per trained model: config.json, model.safetensors,
//	                            optimizer.safetensors, and its tokenizer files
//	engine_copy/<name>/         run.policy_lag: 1, when the engine copies trail
//	                            the weights: each copy's config.json and weights
//	                            (overlaprollout.go)
//
// There is no generator state to save: every rollout call's seed is derived
// from run.seed and the step, and the mini-batch order from the step.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"troupe/ckpt"
	"troupe/config"
	"troupe/dist"
	"troupe/internal/dirlock"
	"troupe/internal/metrics"
	"troupe/policy"
	"troupe/rollout"
)

const (
	configFile = "config.yaml"
	StateFile  = "train_state.json"
)

type trainState struct {
	Step     int                            `json:"step"` // train steps completed
	Seed     uint64                         `json:"seed"`
	Batch    batchState                     `json:"batch"` // rollout seeds and data order depend on it
	Data     rollout.IteratorState          `json:"data"`
	Trainers map[string]policy.TrainerState `json:"trainers"`
	Version  string                         `json:"troupe_version"`
	World    int                            `json:"world,omitempty"` // data-parallel ranks (0 in checkpoints from before it was recorded: 1)
	// LauncherRun is torchrun's TORCHELASTIC_RUN_ID of the group that wrote
	// it: a group that torchrun starts again for the same run resumes from it
	// by itself (resume.go)
	LauncherRun string `json:"torchrun_run_id,omitempty"`
	// Bases are the frozen bases of LoRA adapters, by models.<name>
	// (lorabase.go); absent before they were recorded.
	Bases map[string]baseRecord `json:"lora_bases,omitempty"`
	// EngineCopyAt is how many updates the engine copies' weights had
	// (run.policy_lag: 1; overlaprollout.go); engine_copy/ holds them when
	// it is below Step. Absent without engine copies.
	EngineCopyAt *int `json:"engine_copy_step,omitempty"`
}

// engineCopyDir is a trained model's engine copy in a checkpoint.
func engineCopyDir(name string) string { return "engine_copy/" + name }

// batchState is config.Batch in train_state.json. It reads the field names
// of checkpoints written before 2026-11 (Go's, "PromptsPerStep") as well.
type batchState config.Batch

func (b *batchState) UnmarshalJSON(data []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return err
	}
	for k, v := range fields {
		var dst any
		switch k {
		case "prompts_per_step", "PromptsPerStep":
			dst = &b.PromptsPerStep
		case "n", "N":
			dst = &b.N
		case "max_batch_rows", "MaxBatchRows":
			dst = &b.MaxBatchRows
		case "shuffle", "Shuffle":
			dst = &b.Shuffle
		case "epoch_tasks":
			dst = &b.EpochTasks
		default:
			return fmt.Errorf("batch: unknown field %q", k)
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return fmt.Errorf("batch.%s: %w", k, err)
		}
	}
	return nil
}

type checkpointRef = ckpt.Checkpoint

// findCheckpoint resolves --resume: "latest" under outputDir/checkpoints, or
// a checkpoint directory. The manifest is verified.
func findCheckpoint(resume, outputDir string) (*ckpt.Checkpoint, error) {
	if resume == "latest" {
		if outputDir == "" {
			return nil, fmt.Errorf("resume: --resume without a directory continues the run in the config's run.output_dir, and no --config was given; name the run instead: --resume=RUN_DIR (a run directory or one of its checkpoints)")
		}
		cp, err := ckpt.Latest(filepath.Join(outputDir, "checkpoints"))
		if err != nil {
			return nil, fmt.Errorf("resume: %w", err)
		}
		return cp, nil
	}
	// a run directory, or its checkpoints directory: the newest checkpoint
	// in it (a checkpoint directory itself holds a manifest)
	if _, err := os.Stat(filepath.Join(resume, ckpt.ManifestName)); errors.Is(err, fs.ErrNotExist) {
		for _, root := range []string{filepath.Join(resume, "checkpoints"), resume} {
			if entries, err := ckpt.List(root); err == nil && len(entries) > 0 {
				cp, err := ckpt.Latest(root)
				if err != nil {
					return nil, fmt.Errorf("resume: %w", err)
				}
				return cp, nil
			}
		}
	}
	cp, err := ckpt.Open(resume)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	return cp, nil
}

// save writes a checkpoint of the state after `step` completed steps and
// prunes old ones; data is the data position to resume from. Rank 0 writes, into the run directory it locked (lock:
// checkpoints/ is made in it, never again at a name that may mean another
// directory now); when a model is sharded every rank calls save, and the
// others only help gather the optimizer state (their dir is "").
func save(t *team, data rollout.IteratorState, step int, dp *dist.Group, lock *dirlock.Lock) (dir string, err error) {
	lead := dp.Lead()
	root := filepath.Join(t.cfg.Run.OutputDir, "checkpoints")
	var w *ckpt.Writer
	if lead {
		if err := lock.Mkdir("checkpoints"); err != nil {
			return "", err
		}
		if w, err = ckpt.BeginIn(root, step); err != nil {
			return "", err
		}
		defer func() {
			if err != nil {
				w.Abort()
			}
		}()
	}
	st := trainState{Step: step, Seed: t.cfg.Run.Seed, Batch: batchState(t.cfg.Batch), Data: data, Trainers: map[string]policy.TrainerState{}, Version: Version, World: dp.World(), LauncherRun: os.Getenv(dist.LauncherRunEnv), Bases: t.baseRecords}
	for i, tr := range t.trainers {
		name := tr.Model()
		opt, release, err := tr.CheckpointState(lead) // sharded: gathered on rank 0 (a collective)
		if err != nil {
			return "", err
		}
		if !lead {
			continue
		}
		dir := w.Path(ckpt.ModelStateDir(name))
		// each level made by itself, never its parents: a run directory
		// renamed or deleted since the checkpoint began fails the save
		// here instead of being made again under its old name by the
		// weights' MkdirAll (rundir.go reports the move)
		err = mkdirLeaf(filepath.Dir(dir), dir)
		if err == nil {
			err = ckpt.SaveModelState(dir, t.models[name], opt)
		}
		release()
		if err != nil {
			return "", err
		}
		if err := ckpt.CopyTokenizerFiles(t.tokenizerDir(name), dir); err != nil {
			return "", err
		}
		st.Trainers[name] = tr.State()
		killInSave(step, i)
		savedModel(step, i)
	}
	if !lead {
		return "", nil
	}
	if len(t.copies) > 0 {
		st.EngineCopyAt = &t.copyAt
		if err := saveEngineCopies(t, w, step); err != nil {
			return "", err
		}
	}
	if err := ckpt.SaveJSON(w.Path(StateFile), st); err != nil {
		return "", err
	}
	resolved, err := t.cfg.Marshal()
	if err != nil {
		return "", err
	}
	if err := ckpt.WriteFile(w.Path(configFile), resolved); err != nil {
		return "", err
	}
	cp, err := w.Commit()
	if err != nil {
		return "", err
	}
	for _, tr := range t.trainers {
		if _, moved := t.tokDirs[tr.Model()]; moved {
			t.tokDirs[tr.Model()] = cp.Path(ckpt.ModelStateDir(tr.Model()))
		}
	}
	if _, err := ckpt.Prune(root, t.cfg.Checkpoint.Keep, cp.Dir); err != nil {
		return "", err
	}
	return cp.Dir, nil
}

// saveEngineCopies writes the engine copies' weights, unless they are the
// models' own (copied at step).
func saveEngineCopies(t *team, w *ckpt.Writer, step int) error {
	if t.copyAt == step {
		return nil
	}
	for _, tr := range t.trainers {
		dir := w.Path(engineCopyDir(tr.Model()))
		if err := mkdirLeaf(filepath.Dir(dir), dir); err != nil {
			return err
		}
		if err := ckpt.SaveWeights(dir, t.copies[tr.Model()]); err != nil {
			return fmt.Errorf("engine copy of model %q: %w", tr.Model(), err)
		}
	}
	return nil
}

// restoreEngineCopies loads the engine copies' weights from the checkpoint
// in dir, or keeps the models' own (the copies were made from them) when
// the checkpoint has none of its own.
func restoreEngineCopies(dir string, t *team, st trainState) error {
	t.copyAt = st.Step
	if len(t.copies) == 0 || st.EngineCopyAt == nil || *st.EngineCopyAt == st.Step {
		return nil
	}
	for _, tr := range t.trainers {
		if err := ckpt.LoadWeights(filepath.Join(dir, filepath.FromSlash(engineCopyDir(tr.Model()))), t.copies[tr.Model()]); err != nil {
			return fmt.Errorf("resume: the engine copy of model %q: %w", tr.Model(), err)
		}
	}
	t.copyAt = *st.EngineCopyAt
	return nil
}

// savedModel lets a test act between two models' states in a checkpoint.
var savedModel = func(step, i int) {}

// mkdirLeaf makes each directory in order with os.Mkdir, so none of their
// parents is ever made; one that exists is no error.
func mkdirLeaf(dirs ...string) error {
	for _, d := range dirs {
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return nil
}

// restore loads every trained model's weights and optimizer state, the data
// position and the trainers' counters; it returns the next step, and a note
// when the batch settings changed (the run then continues, but no longer as
// the original would have).
func restore(dir string, t *team, iter *rollout.TaskIterator, dp *dist.Group) (int, string, error) {
	var st trainState
	if err := ckpt.LoadJSON(filepath.Join(dir, StateFile), &st); err != nil {
		return 0, "", fmt.Errorf("resume: %w", err)
	}
	if err := ckpt.CheckStep(dir, StateFile, st.Step); err != nil {
		return 0, "", fmt.Errorf("resume: %w", err)
	}
	if st.Seed != t.cfg.Run.Seed {
		return 0, "", fmt.Errorf("resume: the checkpoint was made with run.seed %d, the config says %d; resuming with another seed would not continue the same run", st.Seed, t.cfg.Run.Seed)
	}
	for _, tr := range t.trainers {
		name := tr.Model()
		md := filepath.Join(dir, filepath.FromSlash(ckpt.ModelStateDir(name)))
		if _, err := os.Stat(md); err != nil {
			return 0, "", fmt.Errorf("resume: the checkpoint has no state for trained model %q (%v); was it made with another agent/model assignment?", name, err)
		}
		ts, ok := st.Trainers[name]
		if !ok {
			return 0, "", fmt.Errorf("resume: %s has no counters for model %q", StateFile, name)
		}
		// the optimizer file and the train state must tell of the same steps
		steps, err := ckpt.OptimizerStepCount(filepath.Join(md, ckpt.OptimizerFileName))
		if err != nil && !errors.Is(err, fs.ErrNotExist) { // a missing file: LoadModelState says what it means
			return 0, "", fmt.Errorf("resume: model %q: %w", name, err)
		}
		if err == nil && steps != ts.OptimizerSteps {
			return 0, "", fmt.Errorf("resume: model %q: %s records %d AdamW steps but %s says %d were applied; the two files come from different saves: resume from a checkpoint that was not edited or mixed", name, ckpt.OptimizerFileName, steps, StateFile, ts.OptimizerSteps)
		}
		if err := ckpt.LoadModelState(md, t.models[name], tr.ResumeState()); err != nil {
			return 0, "", fmt.Errorf("resume: model %q: %w", name, err)
		}
		tr.Restore(ts)
	}
	if err := restoreEngineCopies(dir, t, st); err != nil {
		return 0, "", err
	}
	if err := iter.Restore(st.Data); err != nil {
		return 0, "", fmt.Errorf("resume: data position: %w", err)
	}
	if st.Step > t.cfg.Run.Steps {
		return 0, "", fmt.Errorf("resume: the checkpoint is at step %d, past run.steps = %d; raise run.steps (e.g. --set run.steps=%d)", st.Step, t.cfg.Run.Steps, st.Step+10)
	}
	note := ""
	if config.Batch(st.Batch) != t.cfg.Batch {
		note = fmt.Sprintf("batch settings differ from the checkpoint's (%+v, was %+v): rollout batches and seeds change from here on", t.cfg.Batch, st.Batch)
	}
	if was := max(st.World, 1); was != dp.World() {
		note = strings.TrimPrefix(note+fmt.Sprintf("; the checkpoint was written by %d data-parallel ranks, this run has %d: the data and seeds continue, but float sums group differently, so the run is not bit-identical to one that kept %d", was, dp.World(), was), "; ")
	}
	return st.Step, note, nil
}

// tokenizerDir is the directory of a trained model's tokenizer files: the
// configured ones, or the copy in the checkpoint the team was loaded from or
// last saved (the newest checkpoint is never pruned).
func (t *team) tokenizerDir(name string) string {
	if d, ok := t.tokDirs[name]; ok {
		return d
	}
	for _, tr := range t.trained {
		if tr.Name == name {
			if st, err := os.Stat(tr.Model.Tokenizer); err == nil && !st.IsDir() {
				return filepath.Dir(tr.Model.Tokenizer)
			}
			return tr.Model.Tokenizer
		}
	}
	return ""
}

// sampleLog writes up to run.log_samples rows per step to samples.jsonl.
type sampleLog struct {
	f   *os.File
	max int
}

// openSampleLog opens samples.jsonl for appending after dropping the lines
// of steps ≥ next (a resumed run writes those steps again).
func openSampleLog(cfg *config.Config, next int) (*sampleLog, error) {
	path := filepath.Join(cfg.Run.OutputDir, "samples.jsonl")
	if _, err := metrics.TruncateSteps(path, next); err != nil {
		return nil, err
	}
	n := cfg.Run.LogSamples
	if n == 0 {
		return &sampleLog{}, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	return &sampleLog{f: f, max: n}, nil
}

func (l *sampleLog) write(step int, samples []rollout.Sample, adv []float64) error {
	if l.f == nil {
		return nil
	}
	for i, s := range samples {
		if i >= l.max {
			break
		}
		line, err := json.Marshal(map[string]any{
			"step": step, "traj": s.Traj, "agent": s.Agent, "turn": s.Turn, "task": s.TaskID,
			"reward": s.Reward, "advantage": adv[i], "valid": s.Valid, "truncated": s.Truncated,
			"problem": s.Problem, "response": s.ResponseText, "prompt": s.PromptText,
		})
		if err != nil {
			return err
		}
		if _, err := l.f.Write(append(line, '\n')); err != nil {
			return err
		}
	}
	return nil
}

func (l *sampleLog) Close() error {
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}

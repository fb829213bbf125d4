package run

// export.go — Hugging Face directories of the trained models: at the end of
// a run, and `train export` from a checkpoint. An adapter (assignment: lora)
// is exported as a PEFT directory, and on request also merged into its base
// as a full model (<name>-merged). `train export` writes all of a
// checkpoint's models or none: they are staged in a hidden directory under
// --out and installed together; SIGINT or SIGTERM stops it after the model
// being written, with nothing installed (interrupt.go).

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"troupe/ckpt"
	"troupe/config"
	"troupe/internal/dirlock"
	"troupe/model"
	"troupe/torch"
)

// exportOptions are the config's export settings, with the evaluation's
// sampling as the exported generation defaults: greedy evaluation
// (temperature 0) writes do_sample false and no sampling parameters, which
// greedy decoding ignores (top_p and top_k may still hold their defaults).
func exportOptions(cfg *config.Config) ckpt.ExportOptions {
	var g ckpt.GenerationDefaults
	if s := cfg.Eval.Sampling; s.Temperature > 0 {
		g = ckpt.GenerationDefaults{DoSample: true, Temperature: s.Temperature, TopP: nonOne(s.TopP), TopK: s.TopK}
	}
	return ckpt.ExportOptions{DType: cfg.Export.DType, MaxShardBytes: cfg.Export.MaxShardBytes, Generation: g}
}

func nonOne(p float64) float64 {
	if p >= 1 {
		return 0
	}
	return p
}

// exportAll writes one directory per trained model under root.
func exportAll(t *team, root string) ([]string, error) {
	var dirs []string
	for _, tr := range t.trained {
		d, err := exportModel(t.cfg, tr.Name, t.models[tr.Name], t.tokenizerDir(tr.Name), root)
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, d...)
	}
	return dirs, nil
}

// exportModel writes root/<name>, and root/<name>-merged for an adapter
// when export.merge_adapters is on.
func exportModel(cfg *config.Config, name string, m *model.Model, tokDir, root string) ([]string, error) {
	dst := filepath.Join(root, name)
	if err := ckpt.Export(dst, m, tokDir, exportOptions(cfg)); err != nil {
		return nil, fmt.Errorf("export of model %q: %w", name, err)
	}
	dirs := []string{dst}
	if a := m.Adapter(); a != nil && cfg.Export.MergeAdapters {
		merged, err := a.Merged()
		if err != nil {
			return nil, fmt.Errorf("export of model %q: merging the adapter: %w", name, err)
		}
		defer merged.Free()
		if err := ckpt.Export(dst+mergedSuffix, merged, tokDir, exportOptions(cfg)); err != nil {
			return nil, fmt.Errorf("export of model %q (merged): %w", name, err)
		}
		dirs = append(dirs, dst+mergedSuffix)
	}
	return dirs, nil
}

// mergedSuffix names the full-model export of an adapter.
const mergedSuffix = "-merged"

type Export struct {
	Checkpoint string
	Out        string
	Dtype      string
	Shard      int64
	Force      bool
	Merge      bool
}

func (c *Export) Run(out io.Writer, _ []string) (err error) {
	defer torch.Recover(&err)
	cp, note, err := openCheckpointArg(c.Checkpoint) // checkpointarg.go
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if note != "" {
		fmt.Fprintf(out, "export: %s\n", note)
	}
	cfg, err := config.LoadSaved(cp.Path(configFile), nil)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if c.Dtype != "" {
		cfg.Export.DType = c.Dtype
	}
	if c.Shard < 0 {
		return fmt.Errorf("export: --max-shard-bytes must be >= 0 (0 = 5 GB shards), got %d", c.Shard)
	}
	if c.Shard != 0 {
		cfg.Export.MaxShardBytes = c.Shard
	}
	if c.Merge {
		cfg.Export.MergeAdapters = true
	}
	if c.Out == "" {
		c.Out = filepath.Join(filepath.Dir(filepath.Dir(cp.Dir)), "export")
	}
	for _, tr := range cfg.Trained() {
		dsts := []string{filepath.Join(c.Out, tr.Name)}
		if tr.LoRA != nil && cfg.Export.MergeAdapters {
			dsts = append(dsts, filepath.Join(c.Out, tr.Name+mergedSuffix))
		}
		inputs := []string{cp.Dir}
		if tr.LoRA != nil {
			inputs = append(inputs, tr.Model.Path) // the frozen base
		}
		for _, dst := range dsts {
			if err := RefuseInputAsOutput("export", dst, "--out", inputs...); err != nil {
				return err
			}
			if err := RefuseReplace("export", dst, "--out", c.Force); err != nil {
				return err
			}
		}
	}
	bases, basePaths := map[string]*model.Model{}, map[string]string{}
	defer func() {
		for _, b := range bases {
			b.Free()
		}
	}()
	// every model is written into a hidden stage first and installed only
	// once all are: an interrupt or an error leaves --out as it was
	_, statErr := os.Stat(c.Out)
	stage, release, err := newExportStage(c.Out)
	if err != nil {
		return err
	}
	defer func() {
		os.RemoveAll(stage)
		release()
		if statErr != nil {
			os.Remove(c.Out) // made for this export, and empty unless it succeeded
		}
	}()
	stopped, release := commandStop(out, "export", "stopping after this model; nothing will be written to "+c.Out,
		"nothing was written to "+c.Out+" (a hidden "+filepath.Base(stage)+" is left, which the next export removes)")
	defer release()
	var staged []string
	for _, tr := range cfg.Trained() {
		if sig := stopped(); sig != nil {
			return fmt.Errorf("export: interrupted by %v before every model was written: nothing was written to %s (an export is all of the checkpoint's models or none)", sig, c.Out)
		}
		dir := cp.Path(ckpt.ModelStateDir(tr.Name))
		opt := model.Options{DType: mustDType(tr.Model.DType), Device: torch.CPU}
		var m *model.Model
		if tr.LoRA != nil {
			base, ok := bases[tr.Source]
			if !ok {
				path, rec, err := resolveBase(tr, cp.Dir)
				if err != nil {
					return fmt.Errorf("export: adapter %q: %w", tr.Name, err)
				}
				if base, err = model.Load(path, opt); err != nil {
					return fmt.Errorf("export: adapter %q: its base models.%s: %w", tr.Name, tr.Source, err)
				}
				bases[tr.Source], basePaths[tr.Source] = base, rec.Path
			}
			a, err := base.LoadAdapter(dir)
			if err != nil {
				return fmt.Errorf("export: adapter %q: %w", tr.Name, err)
			}
			a.BaseModel = basePaths[tr.Source]
			m = a.Model()
		} else if m, err = model.Load(dir, opt); err != nil {
			return fmt.Errorf("export: model %q: %w", tr.Name, err)
		}
		if note := ckpt.NarrowingNote(m.DType(), cfg.Export.DType); note != "" {
			fmt.Fprintf(out, "export: warning: model %q: %s\n", tr.Name, note)
		}
		dirs, err := exportModel(cfg, tr.Name, m, dir, stage)
		m.Free()
		if err != nil {
			return err
		}
		staged = append(staged, dirs...)
		afterStagedModel()
	}
	if sig := stopped(); sig != nil {
		return fmt.Errorf("export: interrupted by %v before every model was written: nothing was written to %s (an export is all of the checkpoint's models or none)", sig, c.Out)
	}
	for _, d := range staged {
		dst := filepath.Join(c.Out, filepath.Base(d))
		if err := ckpt.Install(d, dst); err != nil {
			return err
		}
		fmt.Fprintf(out, "export: %s\n", dst)
	}
	return nil
}

// afterStagedModel runs after each model is staged (a seam for tests).
var afterStagedModel = func() {}

// exportStagePrefix names the hidden directory under --out that an export
// writes its models into before it installs them.
const exportStagePrefix = ".tmp-export-stage-"

// newExportStage makes the stage under out (held by this process until
// release), removing the stages of exports that were killed — never one a
// live export holds (internal/dirlock's temporaries).
func newExportStage(out string) (stage string, release func(), err error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", nil, fmt.Errorf("export: --out %s: %w", out, err)
	}
	old, _ := filepath.Glob(filepath.Join(out, exportStagePrefix+"*"))
	for _, o := range old {
		dirlock.RemoveIfFree(o)
	}
	hold, err := dirlock.MakeTemp(out, exportStagePrefix)
	if err != nil {
		return "", nil, fmt.Errorf("export: --out %s: %w", out, err)
	}
	return hold.Path, hold.Release, nil
}

func mustDType(s string) torch.DType {
	d, err := torch.ParseDType(s)
	if err != nil {
		return torch.Float32
	}
	return d
}

package main

// export.go — Hugging Face directories of the trained models: at the end of
// a run, and `train export` from a checkpoint. An adapter (assignment: lora)
// is exported as a PEFT directory, and on request also merged into its base
// as a full model (<name>-merged).

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"troupe/ckpt"
	"troupe/config"
	"troupe/model"
	"troupe/torch"
)

func exportOptions(cfg *config.Config) ckpt.ExportOptions {
	return ckpt.ExportOptions{
		DType: cfg.Export.DType, MaxShardBytes: cfg.Export.MaxShardBytes,
		Generation: ckpt.GenerationDefaults{DoSample: cfg.Eval.Sampling.Temperature > 0,
			Temperature: cfg.Eval.Sampling.Temperature, TopP: nonOne(cfg.Eval.Sampling.TopP), TopK: cfg.Eval.Sampling.TopK},
	}
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

type exportCmd struct {
	checkpoint string
	out        string
	dtype      string
	shard      int64
	force      bool
	merge      bool
}

func newExport() *cobra.Command {
	c := &exportCmd{}
	cmd := &cobra.Command{
		Use:   "export --checkpoint DIR [--out DIR]",
		Short: "Write every trained model of a checkpoint as a Hugging Face directory (transformers/vLLM load it)",
		Args:  cobra.NoArgs,
		RunE:  c.run,
	}
	f := cmd.Flags()
	f.StringVar(&c.checkpoint, "checkpoint", "", "training checkpoint directory (required)")
	f.StringVarP(&c.out, "out", "o", "", "output directory; one subdirectory per model (default: <checkpoint>/../../export)")
	f.StringVar(&c.dtype, "dtype", "", "dtype of the exported weights: float32 or bfloat16 (default: the config's export.dtype, else the model's)")
	f.Int64Var(&c.shard, "max-shard-bytes", 0, "shard the weights above this many bytes (default: the config's, else 5 GB)")
	f.BoolVar(&c.force, "force", false, "replace existing model directories under the output directory")
	f.BoolVar(&c.merge, "merge", false, "also write every adapter merged into its base as a full model (<name>-merged); default: the config's export.merge_adapters")
	cmd.MarkFlagRequired("checkpoint")
	return cmd
}

func (c *exportCmd) run(cmd *cobra.Command, _ []string) (err error) {
	defer torch.Recover(&err)
	cp, err := ckpt.Open(c.checkpoint)
	if err != nil {
		return err
	}
	cfg, err := config.LoadSaved(cp.Path(configFile), nil)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if c.dtype != "" {
		cfg.Export.DType = c.dtype
	}
	if c.shard < 0 {
		return fmt.Errorf("export: --max-shard-bytes must be >= 0 (0 = 5 GB shards), got %d", c.shard)
	}
	if c.shard != 0 {
		cfg.Export.MaxShardBytes = c.shard
	}
	if c.merge {
		cfg.Export.MergeAdapters = true
	}
	if c.out == "" {
		c.out = filepath.Join(filepath.Dir(filepath.Dir(cp.Dir)), "export")
	}
	for _, tr := range cfg.Trained() {
		if err := refuseReplace("export", filepath.Join(c.out, tr.Name), "--out", c.force); err != nil {
			return err
		}
		if tr.LoRA != nil && cfg.Export.MergeAdapters {
			if err := refuseReplace("export", filepath.Join(c.out, tr.Name+mergedSuffix), "--out", c.force); err != nil {
				return err
			}
		}
	}
	bases := map[string]*model.Model{}
	defer func() {
		for _, b := range bases {
			b.Free()
		}
	}()
	for _, tr := range cfg.Trained() {
		dir := cp.Path(ckpt.ModelStateDir(tr.Name))
		opt := model.Options{DType: mustDType(tr.Model.DType), Device: torch.CPU}
		var m *model.Model
		if tr.LoRA != nil {
			base, ok := bases[tr.Source]
			if !ok {
				if base, err = model.Load(tr.Model.Path, opt); err != nil {
					return fmt.Errorf("export: adapter %q: its base models.%s: %w", tr.Name, tr.Source, err)
				}
				bases[tr.Source] = base
			}
			a, err := base.LoadAdapter(dir)
			if err != nil {
				return fmt.Errorf("export: adapter %q: %w", tr.Name, err)
			}
			a.BaseModel = tr.Model.Path
			m = a.Model()
		} else if m, err = model.Load(dir, opt); err != nil {
			return fmt.Errorf("export: model %q: %w", tr.Name, err)
		}
		if note := ckpt.NarrowingNote(m.DType(), cfg.Export.DType); note != "" {
			fmt.Fprintf(cmd.OutOrStdout(), "export: warning: model %q: %s\n", tr.Name, note)
		}
		dirs, err := exportModel(cfg, tr.Name, m, dir, c.out)
		m.Free()
		if err != nil {
			return err
		}
		for _, d := range dirs {
			fmt.Fprintf(cmd.OutOrStdout(), "export: %s\n", d)
		}
	}
	return nil
}

func mustDType(s string) torch.DType {
	d, err := torch.ParseDType(s)
	if err != nil {
		return torch.Float32
	}
	return d
}

package main

// export.go — Hugging Face directories of the trained models: at the end of
// a run, and `train export` from a checkpoint.

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
		dst := filepath.Join(root, tr.Name)
		if err := ckpt.Export(dst, t.models[tr.Name], t.tokenizerDir(tr.Name), exportOptions(t.cfg)); err != nil {
			return nil, fmt.Errorf("export of model %q: %w", tr.Name, err)
		}
		dirs = append(dirs, dst)
	}
	return dirs, nil
}

type exportCmd struct {
	checkpoint string
	out        string
	dtype      string
	shard      int64
	force      bool
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
	if c.shard != 0 {
		cfg.Export.MaxShardBytes = c.shard
	}
	if c.out == "" {
		c.out = filepath.Join(filepath.Dir(filepath.Dir(cp.Dir)), "export")
	}
	for _, tr := range cfg.Trained() {
		if err := refuseReplace("export", filepath.Join(c.out, tr.Name), "--out", c.force); err != nil {
			return err
		}
	}
	for _, tr := range cfg.Trained() {
		dir := cp.Path(ckpt.ModelStateDir(tr.Name))
		m, err := model.Load(dir, model.Options{DType: mustDType(tr.Model.DType), Device: torch.CPU})
		if err != nil {
			return fmt.Errorf("export: model %q: %w", tr.Name, err)
		}
		dst := filepath.Join(c.out, tr.Name)
		err = ckpt.Export(dst, m, dir, exportOptions(cfg))
		m.Free()
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "export: %s\n", dst)
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

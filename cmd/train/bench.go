package main

// bench.go — `train bench`: generation and update throughput of a model
// directory or a shape on this machine's device (package bench).

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"troupe/bench"
	"troupe/config"
	"troupe/internal/gpu"
	"troupe/model"
	"troupe/torch"
)

type benchCmd struct {
	model, shape, device, dtype, batches string
	opt                                  bench.Options
	json                                 bool
}

func newBench() *cobra.Command {
	c := &benchCmd{}
	cmd := &cobra.Command{
		Use:   "bench (--model DIR | --shape NAME|k=v,...) [flags]",
		Short: "Measure generation and update throughput (tok/s, MFU on GPU, peak memory) on this device",
		Args:  cobra.NoArgs,
		RunE:  c.run,
	}
	f := cmd.Flags()
	f.StringVar(&c.model, "model", "", "Hugging Face model directory")
	f.StringVar(&c.shape, "shape", "", "a random model instead: tiny, 40m, qwen2.5-0.5b, or hidden=,layers=,heads=,kv-heads=,intermediate=,vocab=")
	f.StringVar(&c.device, "device", "cpu", "cpu, cuda or cuda:N")
	f.StringVar(&c.dtype, "dtype", "float32", "float32 or bfloat16")
	f.StringVar(&c.batches, "batch", "1,8,32", "decode batch sizes, comma-separated")
	f.IntVar(&c.opt.PromptLen, "prompt", 64, "prompt tokens per row")
	f.IntVar(&c.opt.NewTokens, "new", 32, "generated tokens per row")
	f.IntVar(&c.opt.UpdateRows, "update-rows", 8, "update batch rows (0: no update)")
	f.IntVar(&c.opt.UpdateLen, "update-len", 256, "tokens per update row")
	f.IntVar(&c.opt.Reps, "reps", 3, "timed repetitions after a warm-up; the best is printed")
	f.BoolVar(&c.opt.SkipGen, "update-only", false, "time the update only")
	f.BoolVar(&c.json, "json", false, "one JSON object per row instead of a table")
	return cmd
}

func (c *benchCmd) run(cmd *cobra.Command, _ []string) (err error) {
	defer torch.Recover(&err)
	for _, s := range strings.Split(c.batches, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("bench: --batch: want positive integers separated by commas, got %q", c.batches)
		}
		c.opt.Batches = append(c.opt.Batches, n)
	}
	opt, err := loadOptions(config.Model{Device: c.device, DType: c.dtype})
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	var m *model.Model
	switch {
	case (c.model == "") == (c.shape == ""):
		return fmt.Errorf("bench: give exactly one of --model DIR and --shape")
	case c.model != "":
		m, err = model.Load(c.model, opt)
	default:
		var cfg model.Config
		if cfg, err = bench.ParseShape(c.shape); err == nil {
			m, err = model.New(cfg, 1, opt)
		}
	}
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	defer m.Free()
	rows, err := bench.Run(m, opt.Device, c.opt)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if c.json {
		return bench.WriteJSON(out, rows)
	}
	peak, name := 0.0, "cpu"
	if opt.Device.IsCUDA() {
		name = cudaName(int(opt.Device))
		peak = bench.PeakFLOPS(name)
	}
	fmt.Fprintf(out, "%s, %.1fM parameters, %s on %s, libtorch %s, %d intra-op threads\n",
		m.Config.Describe(), float64(m.Config.NumParams())/1e6, c.dtype, name, torch.VersionString(), torch.NumThreads())
	bench.Write(out, rows, peak)
	return nil
}

// cudaName is the GPU's name through NVML ("cuda" when unknown).
func cudaName(index int) string {
	d := gpu.NVML()
	if d.Init() != nil {
		return "cuda"
	}
	defer d.Shutdown()
	dev, err := d.Device(index)
	if err != nil {
		return "cuda"
	}
	if n, err := dev.Name(); err == nil {
		return n
	}
	return "cuda"
}

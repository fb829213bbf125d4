package main

// bench.go — `train bench`: the flags of run.Bench.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"troupe/run"
)

func newBench() *cobra.Command {
	c := &run.Bench{}
	var batches string
	cmd := &cobra.Command{
		Use:   "bench (--model DIR | --shape NAME|k=v,...) [flags]",
		Short: "Measure generation and update throughput (tok/s, MFU on GPU, peak memory) on this device",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, s := range strings.Split(batches, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(s))
				if err != nil || n < 1 {
					return fmt.Errorf("bench: --batch: want positive integers separated by commas, got %q", batches)
				}
				c.Options.Batches = append(c.Options.Batches, n)
			}
			return c.Run(cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.Model, "model", "", "Hugging Face model directory")
	f.StringVar(&c.Shape, "shape", "", "a random model instead: tiny, 40m, qwen2.5-0.5b, or hidden=,layers=,heads=,kv-heads=,intermediate=,vocab=")
	f.StringVar(&c.Device, "device", "cpu", "cpu, cuda or cuda:N")
	f.StringVar(&c.DType, "dtype", "float32", "float32 or bfloat16")
	f.StringVar(&batches, "batch", "1,8,32", "decode batch sizes, comma-separated")
	f.IntVar(&c.Options.PromptLen, "prompt", 64, "prompt tokens per row")
	f.IntVar(&c.Options.NewTokens, "new", 32, "generated tokens per row")
	f.IntVar(&c.Options.UpdateRows, "update-rows", 8, "update batch rows (0: no update)")
	f.IntVar(&c.Options.UpdateLen, "update-len", 256, "tokens per update row")
	f.IntVar(&c.Options.Reps, "reps", 3, "timed repetitions after a warm-up; the best is printed")
	f.BoolVar(&c.Options.SkipGen, "update-only", false, "time the update only")
	f.BoolVar(&c.Options.CPUKernels, "cpu-kernels", true, "generate with the CPU's single-pass kernels (engine.cpu_kernels; --cpu-kernels=false: ATen's operators)")
	f.BoolVar(&c.JSON, "json", false, "one JSON object per row instead of a table")
	return cmd
}

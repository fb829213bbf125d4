package main

// root.go — the command tree. Each subcommand is a struct whose RunE
// returns an error; main prints it as one line and exits non-zero.

import (
	"fmt"

	"github.com/spf13/cobra"

	"troupe/bench"
	"troupe/torch"
)

func newRoot() *cobra.Command {
	t := &trainCmd{}
	root := &cobra.Command{
		Use:   "train --config run.yaml [--set key=value]... [--resume]",
		Short: "Train multi-agent LLM systems with RL (GRPO, Dr. MAS, AT-GRPO, MAGRPO) on libtorch",
		Long: `train runs reinforcement learning of a team of LLM agents from a YAML config:
rollouts of the configured workflow, rewards from the environment, advantages
from the chosen estimator, and a clipped policy-gradient update of every
trained model under its own optimizer settings. Metrics go to
<output_dir>/metrics.jsonl, checkpoints to <output_dir>/checkpoints/, exports to
<output_dir>/export/.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE:          t.run,
	}
	t.flags(root)
	var profile string // --profile on every command (bench.StartProfile)
	var stopProfile func() error
	root.PersistentFlags().StringVar(&profile, "profile", "", "write a Go CPU profile (PREFIX.cpu.pprof), an ATen operator table (PREFIX.ops.txt) and, on CUDA, a kernel table with device times (PREFIX.kernels.txt) of the command")
	root.PersistentPreRunE = func(*cobra.Command, []string) (err error) {
		if profile != "" {
			stopProfile, err = bench.StartProfile(profile)
		}
		return err
	}
	root.PersistentPostRunE = func(*cobra.Command, []string) error {
		if stopProfile == nil {
			return nil
		}
		return stopProfile()
	}
	root.AddCommand(newInit(), newSFT(), newEval(), newGenerate(), newExport(), newTokenize(), newPlot(), newCompare(), newIndex(), newServe(), newPlan(), newBench(), newCheck(), newData(), newVersion())
	installSuggestions(root) // suggest.go: unknown commands and flags get the closest name
	return root
}

func newVersion() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print troupe's and libtorch's versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			build := "CPU only (make; Debian's libtorch)"
			if cuda, rt := torch.CUDABuild(); cuda {
				build = fmt.Sprintf("CUDA %s (make gpu)", rt)
				if torch.CUDADeviceCount() == 0 {
					build += "; no CUDA device visible here, so it runs on the CPU only"
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "troupe %s\nbuild: %s\nlibtorch %s (shim %s)\nthreads %d, CPU level %s, cuda devices %d, fused attention %v\n",
				version, build, torch.VersionString(), torch.ShimPath(), torch.NumThreads(), torch.CPUKernelsVariant(), torch.CUDADeviceCount(), torch.FusedSDPAAvailable())
			fmt.Fprintf(cmd.OutOrStdout(), "CUDA kernels in this build: varlen flash attention %v, fused RMSNorm %v, fused AdamW %v, CUDA graphs %v\n",
				torch.VarlenFused(), torch.FusedRMSNorm(), torch.FusedAdamW(), torch.GraphsSupported())
			return nil
		},
	}
}

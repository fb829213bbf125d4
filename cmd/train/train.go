package main

// train.go — the root command's flags: RL training from a YAML config
// (run.Train), or N data-parallel ranks of it (--nproc, launch.go).

import (
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"troupe/run"
)

type trainCmd struct {
	run.Train
	nproc  int
	seed   uint64
	dryRun bool
}

func (c *trainCmd) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVarP(&c.Config, "config", "c", "", "run config (YAML); optional with --resume (the checkpoint's own config is used)")
	f.StringArrayVar(&c.Sets, "set", nil, "override a config key, e.g. --set run.steps=20 --set agents[1].optim.lr=2e-6 (repeatable)")
	f.StringVar(&c.Resume, "resume", "", "continue from a checkpoint: a checkpoint directory, or \"latest\" in run.output_dir/checkpoints")
	f.Lookup("resume").NoOptDefVal = "latest"
	f.BoolVarP(&c.Quiet, "quiet", "q", false, "do not print the resolved config")
	f.BoolVar(&c.AllowConfigChange, "allow-config-change", false, "resume even though the config changes what is trained (estimator, workflow, agents, models, optimizer…) since the checkpoint; the changes are logged in the run directory")
	f.BoolVar(&c.Force, "force", false, "resume from a checkpoint older than the run's newest, dropping the later steps' checkpoints and logs; on a fresh run, replace the logs of an earlier run that left no checkpoint")
	f.Uint64Var(&c.seed, "seed", 0, "the run's seed (sets run.seed; the same as --set run.seed=N)")
	f.IntVar(&c.PrintSamples, "print-samples", 0, "print this many samples of every step to the console: the prompt's tail, the response, its reward and advantage")
	f.BoolVar(&c.dryRun, "dry-run", false, "print the resolved config and the run's plan and exit without loading weights (as train check)")
	f.IntVar(&c.nproc, "nproc", 1, "data parallel: run this many ranks on this node, one per GPU (several nodes: start each rank with RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT set, as torchrun does)")
}

func (c *trainCmd) run(cmd *cobra.Command, _ []string) error {
	if cmd.Flags().Changed("seed") {
		c.Sets = append(c.Sets, "run.seed="+strconv.FormatUint(c.seed, 10))
	}
	switch {
	case c.PrintSamples < 0:
		return fmt.Errorf("--print-samples: must be >= 0, got %d", c.PrintSamples)
	case checkNproc(c.nproc) != nil:
		return checkNproc(c.nproc) // strict.go
	case c.nproc > 1 && os.Getenv("WORLD_SIZE") != "":
		return fmt.Errorf("--nproc %d inside a rank (WORLD_SIZE=%s is set): start the ranks either with --nproc or with the environment variables, not both", c.nproc, os.Getenv("WORLD_SIZE"))
	case c.dryRun:
		return (&run.Check{Config: c.Config, Sets: c.Sets, Ranks: c.nproc}).Run(cmd.OutOrStdout())
	case c.nproc > 1:
		// what every rank would refuse is refused here, once, before any starts
		if err := c.Train.Validate(c.nproc); err != nil {
			return err
		}
		return launch(c.nproc, withoutNproc(commandArgs), cmd.OutOrStdout(), cmd.ErrOrStderr())
	}
	return c.Train.Run(cmd.OutOrStdout())
}

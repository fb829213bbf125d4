package run

// checkpointarg.go — what `eval --checkpoint` and `export --checkpoint`
// name: a checkpoint directory, or a run directory (or its checkpoints/),
// whose newest checkpoint is used and named; and the check that a config
// given beside a checkpoint describes the team the checkpoint trained.
//
// What it is not: --resume's choice of checkpoint (resume.go, state.go).

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"troupe/ckpt"
	"troupe/config"
)

// openCheckpointArg opens the checkpoint path names. A run directory's
// newest checkpoint is opened, and note says so ("" otherwise).
func openCheckpointArg(path string) (cp *ckpt.Checkpoint, note string, err error) {
	if _, err := os.Stat(filepath.Join(path, ckpt.ManifestName)); errors.Is(err, fs.ErrNotExist) {
		for _, root := range []string{filepath.Join(path, "checkpoints"), path} {
			if entries, err := ckpt.List(root); err == nil && len(entries) > 0 {
				cp, err := ckpt.Latest(root)
				if err != nil {
					return nil, "", err
				}
				return cp, fmt.Sprintf("%s is a run directory: using its newest checkpoint, %s (step %d)", path, cp.Dir, cp.Step), nil
			}
		}
	}
	cp, err = ckpt.Open(path)
	return cp, "", err
}

// sameTeam refuses a config whose trained models or agents are not the
// checkpoint's: its weights would be looked for under names the checkpoint
// does not have (and reported as a missing model or tokenizer).
func sameTeam(cp *ckpt.Checkpoint, cfg *config.Config, flag string) error {
	saved, err := config.LoadSaved(cp.Path(configFile), nil)
	if err != nil {
		return err
	}
	have, want := teamOf(saved), teamOf(cfg)
	if have.models == want.models && have.agents == want.agents {
		return nil
	}
	return fmt.Errorf("%s %s trained models %s (agents %s; workflow %s, environment %s), but the config's team is models %s (agents %s; workflow %s, environment %s): evaluate the checkpoint with its own config (leave out --config), or pass a checkpoint of this config's run",
		flag, cp.Dir, have.models, have.agents, saved.Workflow.Name, saved.Env.Name, want.models, want.agents, cfg.Workflow.Name, cfg.Env.Name)
}

type teamNames struct{ models, agents string }

func teamOf(cfg *config.Config) teamNames {
	var models, agents []string
	for _, tr := range cfg.Trained() {
		models = append(models, tr.Name)
	}
	for _, a := range cfg.Agents {
		agents = append(agents, a.Name)
	}
	slices.Sort(models)
	slices.Sort(agents)
	return teamNames{strings.Join(models, ", "), strings.Join(agents, ", ")}
}

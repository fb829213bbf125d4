package run

// resume.go — where a run's config comes from (--config, or the checkpoint
// it resumes: which one is start.go's), and the guards that keep a fresh or
// resumed run from mixing its files with another run's.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"troupe/ckpt"
	"troupe/config"
	"troupe/internal/cmdline"
	"troupe/internal/metrics"
)

// loadConfig reads --config (or the config of the checkpoint --resume
// names) with the --set overrides, and this rank's view of the checkpoint
// the run starts from (start.go settles it with the other ranks; then
// startConfig settles the config).
func (c *Train) loadConfig() (*startView, *config.Config, error) {
	if c.Config == "" && c.Resume == "" {
		return nil, nil, fmt.Errorf("no config: pass --config run.yaml (see configs/), or --resume=DIR to continue a run (the = is needed: --resume alone continues run.output_dir)")
	}
	var cfg *config.Config
	var err error
	if c.Config != "" {
		if cfg, err = config.Load(c.Config, c.Sets); err != nil {
			return nil, nil, err
		}
	}
	v := &startView{}
	runDir := ""
	if c.Resume != "" {
		outputDir := ""
		if cfg != nil {
			outputDir = cfg.Run.OutputDir
		}
		cp, err := findCheckpoint(c.Resume, outputDir)
		if err != nil {
			return nil, nil, err
		}
		v.Explicit, v.ExplicitStep, runDir = cp.Dir, cp.Step, runDirOf(cp)
	} else {
		runDir = cfg.Run.OutputDir
	}
	v.Job = jobCheckpoints(runDir) // torchrun started the group again: continue the job
	if cfg == nil {
		if cfg, err = config.LoadSaved(filepath.Join(v.Explicit, configFile), c.Sets); err != nil {
			return nil, nil, fmt.Errorf("resume: %w", err)
		}
	}
	return v, cfg, nil
}

// startConfig is the config of a run that starts from cp: the
// checkpoint's own when no --config was given; with the config's changes
// since the checkpoint checked (--allow-config-change).
func (c *Train) startConfig(cp *checkpointRef, cfg *config.Config) (*config.Config, error) {
	if cp == nil {
		return cfg, nil
	}
	var err error
	if c.Config == "" {
		if cfg, err = config.LoadSaved(filepath.Join(cp.Dir, configFile), c.Sets); err != nil {
			return nil, fmt.Errorf("resume: %w", err)
		}
	}
	if c.changes, err = config.CheckResume(filepath.Join(cp.Dir, configFile), cfg, c.AllowConfigChange, "--allow-config-change"); err != nil {
		return nil, fmt.Errorf("resume: %s: %w", cp.Dir, err)
	}
	return cfg, nil
}

// checkpointName names a checkpoint for the ranks' agreement
// (dist/agree.go): its step and a hash of its manifest, the same on every
// node that sees the same checkpoint, wherever the run directory is mounted.
// "" for a fresh start.
func checkpointName(cp *checkpointRef) string {
	if cp == nil {
		return ""
	}
	return fmt.Sprintf("the checkpoint of step %d (manifest %s)", cp.Step, fileSum(filepath.Join(cp.Dir, ckpt.ManifestName)))
}

// fileSum is the first 16 hex digits of a file's SHA-256, "?" when unreadable.
func fileSum(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "?"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "?"
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// refuseOverwrite keeps a fresh run from mixing its checkpoints and logs
// with an earlier run's in the same output directory: checkpoints are
// refused always, logs (metrics, samples, TensorBoard events that hold a
// step) unless force says to replace them.
func refuseOverwrite(dir string, force bool) error {
	entries, err := ckpt.List(filepath.Join(dir, "checkpoints"))
	if err != nil || len(entries) == 0 {
		if logs := earlierLogs(dir); len(logs) > 0 && !force {
			return fmt.Errorf("run.output_dir %s holds the logs of an earlier run (%s) and no checkpoint; a fresh run would replace them: pass --force to replace them, or start this run elsewhere with --set run.output_dir=DIR", dir, strings.Join(logs, ", "))
		}
		return nil
	}
	return fmt.Errorf("run.output_dir %s already holds checkpoints of an earlier run (newest: step %d); continue that run with `%s`, or start this one elsewhere with --set run.output_dir=DIR, or delete the directory", dir, entries[len(entries)-1].Step, cmdline.Resume(dir))
}

// runDirOf is the run directory a checkpoint belongs to
// (<run>/checkpoints/step-N); resumeHere checks the layout first.
func runDirOf(cp *checkpointRef) string { return filepath.Dir(filepath.Dir(cp.Dir)) }

// resumeHere points the run at the directory its checkpoint lives in, so a
// copied run continues in the copy and never writes into the original; it
// returns a note when that differs from the config's run.output_dir.
func resumeHere(cp *checkpointRef, cfg *config.Config) string {
	if filepath.Base(filepath.Dir(cp.Dir)) != "checkpoints" {
		// a checkpoint moved out of its run: the config says where to write
		return fmt.Sprintf("resume: %s is not inside a run's checkpoints/ directory; writing to run.output_dir %s", cp.Dir, cfg.Run.OutputDir)
	}
	dir := runDirOf(cp)
	if sameFile(dir, cfg.Run.OutputDir) {
		return ""
	}
	was := cfg.Run.OutputDir
	cfg.Run.OutputDir = dir
	return fmt.Sprintf("resume: writing to %s, the run the checkpoint belongs to (the config's run.output_dir is %s)", dir, was)
}

// refuseRewind keeps a resume from a checkpoint older than the newest in
// root (the run's checkpoints/) from silently dropping the later steps:
// their checkpoints and export are deleted before the first new step
// (rundir.go), their metrics lines, samples and events truncated.
func refuseRewind(cp *checkpointRef, root string, force bool) error {
	entries, err := ckpt.List(root)
	if err != nil || len(entries) == 0 || force {
		return nil
	}
	newest := entries[len(entries)-1]
	if newest.Step <= cp.Step {
		return nil
	}
	later := fmt.Sprintf("steps %d–%d", cp.Step+1, newest.Step)
	if newest.Step == cp.Step+1 {
		later = fmt.Sprintf("step %d", newest.Step)
	}
	return fmt.Errorf("resume: %s is at step %d but the run already has a checkpoint at step %d (%s); resuming from the older one would delete the newer checkpoints and the export and drop %s from the logs. Pass --force to do that, or copy the run directory (cp -a) and resume the copy", cp.Dir, cp.Step, newest.Step, newest.Dir, later)
}

// earlierLogs names the log files in dir that hold a logged step.
func earlierLogs(dir string) []string {
	var logs []string
	for _, name := range []string{"metrics.jsonl", "samples.jsonl"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && st.Size() > 0 {
			logs = append(logs, name)
		}
	}
	events, _ := filepath.Glob(filepath.Join(dir, "events.out.tfevents.*"))
	for _, p := range events {
		if steps, err := metrics.EventSteps(p); err != nil || len(steps) > 0 {
			logs = append(logs, filepath.Base(p))
		}
	}
	return logs
}

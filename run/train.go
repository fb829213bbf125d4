package run

// train.go — Train: RL training from a YAML config (the root command). The loop is a
// straight line per step:
//
//	tasks → rollout (sample every agent, score) → advantages → update each
//	trained model → metrics → eval / checkpoint on their cadence
//
// All randomness derives from run.seed and the step index (rollout seeds,
// mini-batch order, data order through the saved iterator position), so a
// run resumed from a checkpoint continues exactly as an uninterrupted one.

import (
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"troupe/ckpt"
	"troupe/config"
	"troupe/internal/gpu"
	"troupe/internal/metrics"
	"troupe/rollout"
	"troupe/torch"
)

// Train is the root command's options: a run from a YAML config with its
// --set overrides, or the continuation of a checkpoint.
type Train struct {
	Config string
	Sets   []string
	Resume string
	Quiet  bool
	Force  bool
	// PrintSamples is how many rows of each step to print to the console
	// (console.go).
	PrintSamples int
	// AllowConfigChange resumes even though the config changes what is
	// trained since the checkpoint; the changes are logged in the run
	// directory.
	AllowConfigChange bool

	changes []config.ConfigChange // the resumed config's changes since the checkpoint
}

// Run trains from the config (or the checkpoint) the options name, printing
// progress to w. The caller runs it on a goroutine locked to its OS thread.
func (c *Train) Run(w io.Writer) (err error) {
	defer torch.Recover(&err)
	ignoreBrokenPipe()                            // brokenpipe.go: `train | tee log` and Ctrl-C still checkpoints
	out := &lockedWriter{w: quietOnBrokenPipe(w)} // the signal handler writes too
	launcherGone, stopWatch, err := watchLauncher()
	if err != nil {
		return err
	}
	defer stopWatch()
	cp, cfg, err := c.loadConfig()
	if err != nil {
		return err
	}
	dp, err := joinFromEnv(usesCUDA(cfg))
	if err != nil {
		return err
	}
	defer dp.close()
	if err := dp.check(cfg); err != nil {
		return err
	}
	if err := dp.checkSameConfig(cfg); err != nil {
		return err
	}
	dp.placeOnLocalDevice(cfg)
	if !dp.lead() {
		out.w = io.Discard // rank 0 speaks for the run; errors still reach stderr
	}
	if !c.Quiet {
		resolved, _ := cfg.Marshal()
		fmt.Fprintf(out, "# resolved config\n%s\n", resolved)
	}
	if cp == nil {
		if err := refuseOverwrite(cfg.Run.OutputDir); err != nil {
			return err
		}
	} else {
		if note := resumeHere(cp, cfg); note != "" {
			fmt.Fprintln(out, note)
		}
		if dp.lead() {
			if err := refuseRewind(cp, filepath.Join(cfg.Run.OutputDir, "checkpoints"), c.Force); err != nil {
				return err
			}
		}
	}
	if err := os.MkdirAll(cfg.Run.OutputDir, 0o755); err != nil {
		return fmt.Errorf("run.output_dir %s: cannot create it (%v); set run.output_dir (--set run.output_dir=DIR) to a directory you can write", cfg.Run.OutputDir, err)
	}
	if dp.lead() {
		if _, err := writeRunConfig(cfg); err != nil {
			return err
		}
	}
	if cp != nil && dp.lead() && len(c.changes) > 0 {
		fmt.Fprintf(out, "resume: %d config changes since the checkpoint, logged in %s\n", len(c.changes), filepath.Join(cfg.Run.OutputDir, config.ResumeLogName))
		if err := config.LogResumeChanges(cfg.Run.OutputDir, cp.Dir, cp.Step, c.changes); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "troupe %s, libtorch %s, %d threads\n", Version, torch.VersionString(), torch.NumThreads())
	if dp != nil {
		fmt.Fprintf(out, "data parallel: %d ranks; this is rank %d; each rolls out %d of the %d tasks per step\n", dp.world, dp.rank, cfg.Batch.PromptsPerStep/dp.world, cfg.Batch.PromptsPerStep)
	}
	from := ""
	if cp != nil {
		from = cp.Dir
	}
	beat := startHeartbeat(out, "loading the models")
	t, err := buildTeam(cfg, true, from, dp)
	beat()
	if err != nil {
		return err
	}
	defer t.free()
	for _, tr := range t.trained {
		m := t.models[tr.Name]
		fmt.Fprintf(out, "model %s (agents %s) from %s: %s, %s on %v\n", tr.Name, strings.Join(tr.Agents, ", "), tr.Model.Path, m.Config.Describe(), m.DType(), m.Device())
		if a := m.Adapter(); a != nil {
			fmt.Fprintf(out, "  trains a LoRA adapter on the frozen base: r %d, alpha %g on %s, %d parameters (the base has %d)\n",
				a.Config.Rank, a.Config.Alpha, strings.Join(a.Config.Targets, ","), a.NumParams(), a.Base().NumParams())
		}
	}
	iter, err := rollout.NewTaskIterator(t.train, rollout.DeriveSeed(cfg.Run.Seed, seedData), cfg.Batch.Shuffle)
	if err != nil {
		return err
	}
	start := 0
	if cp != nil {
		var note string
		if start, note, err = restore(cp.Dir, t, iter, dp); err != nil {
			return err
		}
		fmt.Fprintf(out, "resumed from %s at step %d\n", cp.Dir, start)
		if note != "" {
			fmt.Fprintf(out, "note: %s\n", note)
		}
	}
	next := 0 // metrics lines from this step on are replaced (all of them for a fresh run)
	if cp != nil {
		next = start + 1
	}
	// rank 0 alone writes the run's files
	files := cfg
	log := metrics.Discard()
	var report metrics.ResumeReport
	if dp.lead() {
		if log, report, err = metrics.OpenJSONL(filepath.Join(cfg.Run.OutputDir, "metrics.jsonl"), next); err != nil {
			return err
		}
	} else {
		c := *cfg
		c.Run.TensorBoard = false
		files = &c
	}
	defer log.Close()
	if report.Dropped > 0 {
		fmt.Fprintf(out, "metrics: dropped %d lines of steps ≥ %d from an earlier run\n", report.Dropped, start)
	}
	tb, tbReport, err := openBoard(files, next)
	if err != nil {
		return err
	}
	defer tb.Close()
	if tbReport.Dropped > 0 {
		fmt.Fprintf(out, "tensorboard: dropped %d events of steps ≥ %d from an earlier run\n", tbReport.Dropped, start)
	}
	samples := &sampleLog{}
	if dp.lead() {
		if samples, err = openSampleLog(cfg, next); err != nil {
			return err
		}
	}
	defer samples.Close()
	var monitorLog io.Writer = out
	if len(cudaDevices(t)) == 0 {
		monitorLog = nil // a CPU run has no GPU to miss
	}
	monitor := gpu.Open(monitorLog)
	defer monitor.Close()
	stop, stopSignals := interrupts(out, launcherGone)
	defer stopSignals()
	progress := metrics.NewProgress(out, start, cfg.Run.Steps, time.Now)
	var zero zeroSignal

	if cfg.Eval.AtStart && start == 0 {
		values, err := evalStep(out, t, 0, dp)
		if err != nil {
			return err
		}
		now := time.Now()
		if err := log.Write(metrics.Record{Step: 0, Time: now, Values: values}); err != nil {
			return err
		}
		if err := tb.write(0, now, values, nil, nil); err != nil {
			return err
		}
	}
	for step := start; step < cfg.Run.Steps; step++ {
		began := time.Now()
		t.sampler.Progress = rolloutProgress(out, step+1, cfg.Run.Steps)
		resetPeaks(t)
		// rollout: every agent of every episode, batched per model, scored
		tasks := iter.Next(cfg.Batch.PromptsPerStep)
		lo, hi := dp.part(len(tasks)) // data parallel: this rank's slice
		ro, err := t.sampler.RunPart(t.workflow, tasks[lo:hi], cfg.Batch.N, rollout.DeriveSeed(cfg.Run.Seed, seedRollout, uint64(step)), lo)
		t.sampler.Progress = nil // evaluation uses the sampler too
		if err != nil {
			return fmt.Errorf("step %d: rollout: %w", step, err)
		}
		dp.maybeExit(step + 1)
		if ro.Samples, err = dp.gatherSamples(ro.Samples); err != nil {
			return fmt.Errorf("step %d: %w", step, err)
		}
		rolled := time.Now()
		rolloutPeaks := readPeaks(t, "rollout")
		t.releaseEngines()
		resetPeaks(t)
		// advantages: one per row, by the configured estimator
		res, err := t.estimator.Compute(advantageRows(ro.Samples))
		if err != nil {
			return fmt.Errorf("step %d: advantages: %w", step, err)
		}
		zero.check(out, step+1, ro.Samples, res.Advantages)
		printSamples(out, step+1, c.PrintSamples, ro.Samples, res.Advantages)
		// update: each trained model on its agents' rows, under its own settings
		values := rewardMetrics(ro)
		maps.Copy(values, res.Metrics())
		gradNorms := map[string]float64{}
		for _, tr := range t.trainers {
			seqs := sequences(ro.Samples, res, tr.Agents())
			if len(seqs) == 0 {
				continue
			}
			beat := startHeartbeat(out, fmt.Sprintf("step %d/%d update of model %s (%d rows)", step+1, cfg.Run.Steps, tr.Model(), len(seqs)))
			pm, err := tr.Update(seqs, step)
			beat()
			if err != nil {
				return fmt.Errorf("step %d: update of model %q: %w", step, tr.Model(), err)
			}
			maps.Copy(values, pm)
			for _, a := range tr.Agents() {
				gradNorms[a] = pm["policy/"+a+"/grad_norm"]
			}
		}
		// metrics: the log line, the console line
		addAliases(values)
		maps.Copy(values, monitor.Sample())
		addMemory(values, t)
		maps.Copy(values, rolloutPeaks)
		maps.Copy(values, readPeaks(t, "update"))
		addEngineStats(values, t)
		now := time.Now()
		values["time/rollout_s"] = rolled.Sub(began).Seconds()
		values["time/update_s"] = now.Sub(rolled).Seconds()
		values["time/step_s"] = now.Sub(began).Seconds()
		values["throughput/tokens_per_s"] = float64(responseTokens(ro.Samples)) / max(rolled.Sub(began).Seconds(), 1e-9)
		done := step + 1 // metrics, checkpoints and the console count completed steps
		progress.Report(metrics.StepSummary{Step: done, Reward: values["reward/mean"], GradNorm: gradNorms, Tokens: responseTokens(ro.Samples)})
		if dp != nil && (done%weightCheckEvery == 0 || done == cfg.Run.Steps) {
			if err := dp.checkSameWeights(t, done); err != nil {
				return err
			}
		}
		// eval on its cadence, into the same record
		if every := cfg.Eval.Every; every > 0 && (done%every == 0 || done == cfg.Run.Steps) {
			ev, err := evalStep(out, t, done, dp)
			if err != nil {
				return err
			}
			maps.Copy(values, ev)
		}
		if err := log.Write(metrics.Record{Step: done, Time: now, Values: values}); err != nil {
			return err
		}
		if err := tb.write(done, now, values, ro, res.Advantages); err != nil {
			return err
		}
		if err := samples.write(done, ro.Samples, res.Advantages); err != nil {
			return err
		}
		// checkpoint on its cadence, at the end, and on a signal
		interrupted := false
		select {
		case sig := <-stop:
			interrupted = true
			fmt.Fprintf(out, "received %v after step %d\n", sig, done)
		default:
		}
		if interrupted, err = dp.anyTrue(interrupted); err != nil { // every rank stops after the same step
			return fmt.Errorf("step %d: %w", done, err)
		}
		saveNow := (cfg.Checkpoint.Every > 0 && done%cfg.Checkpoint.Every == 0) || done == cfg.Run.Steps || (interrupted && cfg.Checkpoint.OnSignal)
		if saveNow && dp.lead() {
			dir, err := save(t, iter, done, dp)
			if err != nil {
				return fmt.Errorf("step %d: checkpoint: %w", done, err)
			}
			fmt.Fprintf(out, "checkpoint: %s\n", dir)
		}
		if interrupted {
			return fmt.Errorf("interrupted after step %d; continue with --resume", done)
		}
	}
	if !dp.lead() {
		return nil
	}
	if err := finish(out, t); err != nil {
		return err
	}
	return nil
}

// responseTokens counts the generated tokens of rows.
func responseTokens(rows []rollout.Sample) int {
	n := 0
	for _, s := range rows {
		n += len(s.ResponseTokens)
	}
	return n
}

// loadConfig reads --config (or the resumed checkpoint's config) with the
// --set overrides, and finds the checkpoint to resume from.
func (c *Train) loadConfig() (*checkpointRef, *config.Config, error) {
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
	if c.Resume == "" {
		return nil, cfg, nil
	}
	outputDir := ""
	if cfg != nil {
		outputDir = cfg.Run.OutputDir
	}
	cp, err := findCheckpoint(c.Resume, outputDir)
	if err != nil {
		return nil, nil, err
	}
	if cfg == nil {
		if cfg, err = config.LoadSaved(filepath.Join(cp.Dir, configFile), c.Sets); err != nil {
			return nil, nil, fmt.Errorf("resume: %w", err)
		}
	}
	if c.changes, err = config.CheckResume(filepath.Join(cp.Dir, configFile), cfg, c.AllowConfigChange, "--allow-config-change"); err != nil {
		return nil, nil, fmt.Errorf("resume: %s: %w", cp.Dir, err)
	}
	return cp, cfg, nil
}

// refuseOverwrite keeps a fresh run from mixing its checkpoints and metrics
// with an earlier run's in the same output directory.
func refuseOverwrite(dir string) error {
	entries, err := ckpt.List(filepath.Join(dir, "checkpoints"))
	if err != nil || len(entries) == 0 {
		return nil
	}
	return fmt.Errorf("run.output_dir %s already holds checkpoints of an earlier run (newest: step %d); continue it with --resume, or choose another run.output_dir (--set run.output_dir=...), or delete the directory", dir, entries[len(entries)-1].Step)
}

// evalSummary is the run's held-out accuracy at its first and last
// evaluation ("" without two evaluations).
func evalSummary(jsonl string) string {
	recs, err := metrics.ReadJSONL(jsonl)
	if err != nil {
		return ""
	}
	var steps []int
	var acc []float64
	for _, r := range recs {
		if v, ok := r.Values["eval/accuracy"]; ok {
			steps, acc = append(steps, r.Step), append(acc, v)
		}
	}
	if len(acc) < 2 {
		return ""
	}
	n := len(acc) - 1
	return fmt.Sprintf("held-out accuracy: %.3f after step %d → %.3f after step %d (%+.1f points)", acc[0], steps[0], acc[n], steps[n], 100*(acc[n]-acc[0]))
}

// lockedWriter serialises writes from the run and its signal handler.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// forceQuit ends the process on a second interrupt (a variable for tests).
var forceQuit = func() { os.Exit(130) }

// interrupts delivers the first SIGINT or SIGTERM on the returned channel:
// the run finishes its step, saves a checkpoint and stops. A second one
// quits at once; checkpoints are written atomically, so the newest complete
// one stays usable (an unfinished save is cleaned up by the next run). The
// close of gone (a rank's launcher died, launcher.go) stops the run like a
// first signal, and never quits at once.
func interrupts(out io.Writer, gone <-chan struct{}) (<-chan os.Signal, func()) {
	sigs := make(chan os.Signal, 2)
	stop := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		first := true
		for {
			select {
			case <-done:
				return
			case <-gone:
				gone = nil
				if first {
					first = false
					fmt.Fprintf(out, "the launcher of this rank is gone: finishing this step and saving a checkpoint\n")
					stop <- LauncherDeathSignal
				}
			case sig := <-sigs:
				if first {
					first = false
					fmt.Fprintf(out, "%v: finishing this step and saving a checkpoint; interrupt again to quit now\n", sig)
					stop <- sig
					continue
				}
				fmt.Fprintf(out, "%v again: quitting now; the newest complete checkpoint is intact\n", sig)
				forceQuit()
			}
		}
	}()
	return stop, func() { signal.Stop(sigs); close(done) }
}

// rolloutProgress prints how a long rollout is going: nothing for its first
// 10 seconds, then a line every 10 seconds.
func rolloutProgress(out io.Writer, step, steps int) func(rollout.RolloutProgress) {
	const every = 10 * time.Second
	var last time.Duration
	return func(p rollout.RolloutProgress) {
		if p.Elapsed < every || p.Elapsed-last < every {
			return
		}
		last = p.Elapsed
		fmt.Fprintf(out, "  step %d/%d rollout: %d/%d episodes done, %d rows, %d tokens, %.0f tok/s, %s\n", step, steps,
			p.EpisodesDone, p.Episodes, p.Rows, p.ResponseTokens, float64(p.ResponseTokens)/p.Elapsed.Seconds(), metrics.FormatDuration(p.Elapsed))
	}
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
// their metrics lines, samples and events are truncated and their
// checkpoints and export replaced as the run goes on.
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
	return fmt.Errorf("resume: %s is at step %d but the run already has a checkpoint at step %d (%s); resuming from the older one would drop %s from the logs and replace the newer checkpoints. Pass --force to do that, or copy the run directory (cp -a) and resume the copy", cp.Dir, cp.Step, newest.Step, newest.Dir, later)
}

// finish exports the trained models and plots the metrics.
func finish(out io.Writer, t *team) error {
	cfg := t.cfg
	if cfg.Export.AtEnd {
		for _, tr := range t.trained {
			if note := ckpt.NarrowingNote(t.models[tr.Name].DType(), cfg.Export.DType); note != "" {
				fmt.Fprintf(out, "export: warning: model %q: %s\n", tr.Name, note)
			}
		}
		dirs, err := exportAll(t, filepath.Join(cfg.Run.OutputDir, "export"))
		if err != nil {
			return err
		}
		for _, d := range dirs {
			fmt.Fprintf(out, "export: %s\n", d)
		}
	}
	jsonl := filepath.Join(cfg.Run.OutputDir, "metrics.jsonl")
	if line := evalSummary(jsonl); line != "" {
		fmt.Fprintln(out, line)
	}
	png := filepath.Join(cfg.Run.OutputDir, "metrics.png")
	if err := metrics.PlotJSONL(jsonl, png, DefaultCharts, metrics.PlotOptions{}); err != nil {
		fmt.Fprintf(out, "plot: %v\n", err)
	} else {
		fmt.Fprintf(out, "metrics: %s (plot %s)\n", jsonl, png)
	}
	return nil
}

// Version is the program's version, printed at the start of a run.
var Version = "dev"

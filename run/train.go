package run

// train.go — Train: RL training from a YAML config (the root command). Run
// opens the run (config, data-parallel group, team, task iterator, resumed
// state, logs), evaluates at the start if asked, runs the steps (step.go)
// and finishes with the export and the plot.
//
// All randomness derives from run.seed and the step index (rollout seeds,
// mini-batch order, data order through the saved iterator position), so a
// run resumed from a checkpoint continues exactly as an uninterrupted one.
//
// What it is not: the step itself (step.go), checkpoints (state.go) or the
// choice of config and checkpoint (resume.go).

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"troupe/ckpt"
	"troupe/config"
	"troupe/dist"
	"troupe/internal/cmdline"
	"troupe/internal/dirlock"
	"troupe/internal/gpu"
	"troupe/internal/metrics"
	"troupe/rollout"
	"troupe/torch"
)

// Version is the program's version, printed at the start of a run.
var Version = "dev"

// Train is the root command's options: a run from a YAML config with its
// --set overrides, or the continuation of a checkpoint.
type Train struct {
	Config string
	Sets   []string
	Resume string
	Quiet  bool
	Force  bool
	// AllowConfigChange resumes even though the config changes what is
	// trained since the checkpoint; the changes are logged in the run
	// directory.
	AllowConfigChange bool
	// PrintSamples is how many rows of each step to print to the console
	// (notes.go).
	PrintSamples int

	changes    []config.ConfigChange // the resumed config's changes since the checkpoint
	relaunched bool                  // torchrun started the group again; it resumes from its job's newest checkpoint
}

// trainRun is an open run: what every step reads and writes.
type trainRun struct {
	out      *lockedWriter
	cfg      *config.Config
	dp       *dist.Group
	t        *team
	iter     *rollout.TaskIterator
	start    int // the first step to run (the checkpoint's step when resuming)
	log      *metrics.JSONL
	tb       *board
	samples  *sampleLog
	monitor  *gpu.Monitor
	stop     <-chan os.Signal
	progress *metrics.Progress
	zero     zeroSignal      // the zero-advantage warning, once (notes.go)
	printN   int             // rows of each step to print (Train.PrintSamples)
	closers  []func()        // run in reverse order by close
	lock     *dirlock.Lock   // run.output_dir's (rank 0; rundir.go)
	saved    int             // the step of the newest checkpoint this run wrote or resumed from (-1: none)
	lanes    []*torch.Thread // run.concurrent_updates: the update lanes' torch threads (overlap.go)
	// run.policy_lag: 1 (overlaprollout.go): the rollout thread, the
	// rollout it ran beside the last update, and the word that stops it
	rollThread  *torch.Thread
	pending     *nextRollout
	haltRollout atomic.Bool
}

// Run trains from the config (or the checkpoint) the options name, printing
// progress to w. The caller runs it on a goroutine locked to its OS thread.
func (c *Train) Run(w io.Writer) (err error) {
	defer torch.Recover(&err)
	ignoreBrokenPipe()                                                                  // brokenpipe.go: `train | tee log` and Ctrl-C still checkpoints
	r := &trainRun{out: &lockedWriter{w: quietOnBrokenPipe(w)}, printN: c.PrintSamples} // the signal handler writes too
	defer r.close()
	defer func() { r.dp.Leave(err) }() // before the group closes: no rank waits for this one (dist/watch.go)
	if err := r.open(c); err != nil {
		return err
	}
	cfg := r.cfg
	if r.start > 0 && r.start >= cfg.Run.Steps && r.dp.Lead() { // a finished run, resumed
		fmt.Fprintf(r.out, "resume: the run has done its %d steps (run.steps); nothing to train. To train on, raise run.steps: %s\n",
			cfg.Run.Steps, cmdline.Train("--resume="+cfg.Run.OutputDir, "--set", fmt.Sprintf("run.steps=%d", 2*cfg.Run.Steps)))
		if exported(r.t) {
			return nil // its export is there: nothing is replaced
		}
	}
	if cfg.Eval.AtStart && r.start == 0 {
		values, err := evalStep(r.out, r.t, 0, r.dp)
		if errors.Is(err, rollout.ErrStopped) {
			return interrupted("interrupted in the evaluation before the first step; nothing was trained or saved: start the run again with the same command")
		}
		if err != nil {
			return err
		}
		now := time.Now()
		if err := r.log.Write(metrics.Record{Step: 0, Time: now, Values: values}); err != nil {
			return err
		}
		if err := r.tb.write(0, now, values, nil, nil); err != nil {
			return err
		}
	}
	for step := r.start; step < cfg.Run.Steps; step++ {
		if err := r.step(step); err != nil {
			return r.dp.Explain(err, step+1) // a lost rank or host is named (dist/peers.go)
		}
	}
	if err := r.checkRunDir(cfg.Run.Steps); err != nil { // rundir.go: the export goes into the locked directory or nowhere
		return err
	}
	if !r.dp.Lead() {
		return nil
	}
	if err := finish(r.out, r.t); err != nil {
		return err
	}
	return r.movedRunDir(cfg.Run.Steps) // moved while exporting: not a success
}

// open does everything before the first step; close undoes it.
func (r *trainRun) open(c *Train) error {
	out := r.out
	launcherGone, stopWatch, err := dist.WatchLauncher() // a rank of --nproc stops with its launcher
	if err != nil {
		return err
	}
	r.closers = append(r.closers, stopWatch)
	view, cfg, err := c.loadConfig()
	if err != nil {
		return err
	}
	dp, err := joinGroup(cfg)
	if err != nil {
		return err
	}
	r.dp = dp
	r.closers = append(r.closers, dp.Close)
	cp, start, err := settleStart(dp, *view) // start.go: rank 0 chooses the checkpoint, every rank follows
	if err != nil {
		return err
	}
	if cfg, err = c.startConfig(cp, cfg); err != nil {
		return err
	}
	r.cfg, c.relaunched = cfg, start.Relaunched
	resolved, err := cfg.Marshal()
	if err != nil {
		return err
	}
	if err := dp.Agree(Version, resolved, checkpointName(cp)); err != nil { // first: the checks below assume one config
		return err
	}
	if err := checkRanks(cfg, dp.World()); err != nil { // preflight.go: train check --nproc refuses alike
		return err
	}
	placeOnLocalDevice(dp, cfg)
	if !dp.Lead() {
		out.w = io.Discard // rank 0 speaks for the run; errors still reach stderr
	}
	switch {
	case c.relaunched && len(start.Bad) > 0:
		fmt.Fprintf(out, "torchrun started the group again (job %s): its newest checkpoint does not verify, so it resumes from the newest that does, %s; passed over (and replaced as the run saves again): %s\n",
			os.Getenv(dist.LauncherRunEnv), cp.Dir, strings.Join(start.Bad, "; "))
	case c.relaunched:
		fmt.Fprintf(out, "torchrun started the group again (job %s): resuming from its newest checkpoint, %s\n", os.Getenv(dist.LauncherRunEnv), cp.Dir)
	case dp.Restart() > 0 && cp == nil:
		fmt.Fprintf(out, "torchrun restart %d: the job has no checkpoint yet; starting from the first step\n", dp.Restart())
	}
	if start.Note != "" {
		fmt.Fprintln(out, start.Note)
	}
	if cp == nil { // before the resolved config, not after its hundreds of lines
		// rank 0 checks and every rank learns its answer: a rank that
		// checked by itself could find rank 0's own lock once it holds it,
		// and one that refused alone would leave the others waiting in
		// claimRunDir's exchange
		var refused error
		if dp.Lead() {
			refused = refuseFreshRun(cfg.Run.OutputDir, c.Force)
		}
		if err := dp.FromLead(refused); err != nil {
			return err
		}
	}
	if !c.Quiet {
		resolved, _ := cfg.Marshal()
		fmt.Fprintf(out, "# resolved config\n%s\n", resolved)
	}
	if cp != nil {
		if note := resumeHere(cp, cfg); note != "" {
			fmt.Fprintln(out, note)
		}
	}
	// rundir.go: one writer per run directory. A restart that passed over
	// checkpoints that do not verify drops them, as --force would
	if err := r.claimRunDir(cp, c.Force || len(start.Bad) > 0); err != nil {
		return err
	}
	fmt.Fprintf(out, "troupe %s, libtorch %s, %d threads\n", Version, torch.VersionString(), torch.NumThreads())
	if dp != nil {
		fmt.Fprintf(out, "data parallel: %d ranks; this is rank %d; each rolls out %d of the %d tasks per step\n", dp.World(), dp.Rank(), cfg.Batch.PromptsPerStep/dp.World(), cfg.Batch.PromptsPerStep)
	}
	from := ""
	if cp != nil {
		from = cp.Dir
	}
	beat := startHeartbeat(out, "loading the models")
	cpuMemory := torch.TrackCPUMemory() // CPU tensors from here on count in memory/cpu/… (stepmetrics.go)
	t, err := buildTeam(cfg, true, from, dp)
	beat()
	if err != nil {
		return err
	}
	t.cpuMemory = cpuMemory
	r.t = t
	r.closers = append(r.closers, t.free)
	if l := cfg.RunLength(); l != "" {
		fmt.Fprintf(out, "run length counted from run.epochs (saved with every checkpoint): %s\n", l)
	}
	t.printNotes(out) // tasks the data's reading set aside (preflight.go)
	for _, tr := range t.trained {
		m := t.models[tr.Name]
		fmt.Fprintf(out, "model %s (agents %s) from %s: %s, %s on %v\n", tr.Name, strings.Join(tr.Agents, ", "), tr.Model.Path, m.Config.Describe(), m.DType(), m.Device())
		if a := m.Adapter(); a != nil {
			fmt.Fprintf(out, "  trains a LoRA adapter on the frozen base: r %d, alpha %g on %s, %d parameters (the base has %d)\n",
				a.Config.Rank, a.Config.Alpha, strings.Join(a.Config.Targets, ","), a.NumParams(), a.Base().NumParams())
		}
	}
	for _, line := range shardLines(t) {
		fmt.Fprintln(out, line)
	}
	for _, line := range policyLagWarnings(cfg) { // overlaprollout.go
		fmt.Fprintln(out, line)
	}
	if r.iter, err = t.taskIterator(); err != nil {
		return err
	}
	r.saved = -1
	if cp != nil {
		var note string
		if r.start, note, err = restore(cp.Dir, t, r.iter, dp); err != nil {
			return err
		}
		r.saved = r.start
		fmt.Fprintf(out, "resumed from %s at step %d\n", cp.Dir, r.start)
		if note != "" {
			fmt.Fprintf(out, "note: %s\n", note)
		}
	}
	// every check passed: only now is anything of the run directory
	// replaced or recorded (a refused start leaves it as it was)
	if err := r.abandonLater(cp); err != nil { // rundir.go: what --force drops
		return err
	}
	next := 0 // metrics lines from this step on are replaced (all of them for a fresh run)
	if cp != nil {
		next = r.start + 1
	}
	if err := r.openLogs(next); err != nil {
		return err
	}
	if dp.Lead() {
		if _, err := writeRunConfig(cfg); err != nil {
			return err
		}
	}
	if cp != nil && dp.Lead() && len(c.changes) > 0 {
		fmt.Fprintf(out, "resume: %d config changes since the checkpoint, logged in %s\n", len(c.changes), filepath.Join(cfg.Run.OutputDir, config.ResumeLogName))
		if err := config.LogResumeChanges(cfg.Run.OutputDir, cp.Dir, cp.Step, c.changes); err != nil {
			return err
		}
	}
	var monitorLog io.Writer = out
	if !slices.ContainsFunc(memoryDevices(t), torch.Device.IsCUDA) {
		monitorLog = nil // a CPU run has no GPU to miss
	}
	r.monitor = gpu.Open(monitorLog)
	r.closers = append(r.closers, func() { r.monitor.Close() })
	stop, stopping, stopSignals := interrupts(out, launcherGone)
	r.stop = stop
	// a rollout or evaluation ends within a round of a signal (console.go),
	// and the rollout beside an update when the update fails (overlaprollout.go)
	t.sampler.Stop = func() bool { return stopping() || r.haltRollout.Load() }
	// last to go: a rank that failed is often stopped by its launcher
	// (torchrun's SIGTERM) while it tears down, and must live to print why
	r.closers = append([]func(){stopSignals}, r.closers...)
	r.progress = metrics.NewProgress(out, r.start, cfg.Run.Steps, time.Now)
	return nil
}

// openLogs opens metrics.jsonl, the TensorBoard events and the samples log,
// dropping what an earlier run wrote from step next on. Rank 0 alone writes
// the run's files.
func (r *trainRun) openLogs(next int) (err error) {
	cfg, out := r.cfg, r.out
	files := cfg
	r.log = metrics.Discard()
	var report metrics.ResumeReport
	if r.dp.Lead() {
		if r.log, report, err = metrics.OpenJSONL(filepath.Join(cfg.Run.OutputDir, "metrics.jsonl"), next); err != nil {
			return err
		}
	} else {
		c := *cfg
		c.Run.TensorBoard = false
		files = &c
	}
	r.closers = append(r.closers, func() { r.log.Close() })
	if report.Dropped > 0 {
		fmt.Fprintf(out, "metrics: dropped %d lines of steps ≥ %d from an earlier run\n", report.Dropped, next)
	}
	tb, tbReport, err := openBoard(files, next)
	if err != nil {
		return err
	}
	r.tb = tb
	r.closers = append(r.closers, func() { r.tb.Close() })
	if tbReport.Dropped > 0 {
		fmt.Fprintf(out, "tensorboard: dropped %d events of steps ≥ %d from an earlier run\n", tbReport.Dropped, next)
	}
	r.samples = &sampleLog{}
	if r.dp.Lead() {
		if r.samples, err = openSampleLog(cfg, next); err != nil {
			return err
		}
	}
	r.closers = append(r.closers, func() { r.samples.Close() })
	return nil
}

func (r *trainRun) close() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
}

// exported says whether export.at_end is off, or every trained model's
// export is in the run directory.
func exported(t *team) bool {
	if !t.cfg.Export.AtEnd {
		return true
	}
	for _, tr := range t.trained {
		if !fileExists(filepath.Join(t.cfg.Run.OutputDir, "export", tr.Name, "config.json")) && !fileExists(filepath.Join(t.cfg.Run.OutputDir, "export", tr.Name, "adapter_config.json")) {
			return false
		}
	}
	return true
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
	exportStep := 0 // the export holds the last step's models
	if cfg.Export.AtEnd {
		exportStep = cfg.Run.Steps
	}
	if line := evalSummary(cfg.Run.OutputDir, exportStep); line != "" {
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

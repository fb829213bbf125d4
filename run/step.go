package run

// step.go — one RL step, top to bottom:
//
//	rollout  the step's tasks, every agent of every episode, batched per model, scored
//	         (with run.policy_lag: 1, sampled beside the last step's update)
//	rows     the rows of every rank, gathered (data parallel)
//	advantages  one per row, by the configured estimator
//	update   each trained model on its agents' rows, under its own settings
//	         (with run.policy_lag: 1, the next step's rollout beside it)
//	metrics  the log line, the console line, evaluation on its cadence
//	checkpoint  on its cadence, at the end, and on a signal
//
// The metrics line is written before the checkpoint, so that a checkpoint
// never names a step whose line is missing (a resume rewrites the lines
// after the checkpoint's step).
//
// What it is not: the setup of the run (train.go) or the pieces each phase
// calls (rows.go, stepmetrics.go, state.go).

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"troupe/dist"
	"troupe/internal/metrics"
	"troupe/rollout"
)

// step runs step index step (0-based; the logs count completed steps).
func (r *trainRun) step(step int) error {
	cfg, t, dp, out := r.cfg, r.t, r.dp, r.out
	began := time.Now()

	// rollout: the step's rows — sampled now, every agent of every episode,
	// batched per model, scored; or, with run.policy_lag: 1, by the rollout
	// beside the last step's update (overlaprollout.go)
	resetPeaks(t)
	rows, err := r.takeRows(step)
	if err != nil {
		return err
	}
	if rows.cut { // a signal stopped the rollout: the weights are still the last step's (nextcommand.go)
		return r.dropStep(step, rows.drawn)
	}
	ro := rows.ro
	rolled := time.Now()
	rolloutPeaks := readPeaks(t, "rollout")
	t.releaseEngines()
	resetPeaks(t)

	// advantages: one per row, by the configured estimator
	res, err := t.estimator.Compute(advantageRows(ro.Samples))
	if err != nil {
		return fmt.Errorf("step %d: advantages: %w", step+1, err)
	}
	r.zero.check(r.out, step+1, ro.Samples, res.Advantages) // notes.go
	printSamples(r.out, step+1, r.printN, ro.Samples, res.Advantages)

	// update: each trained model on its agents' rows, under its own settings;
	// with run.concurrent_updates the models on different devices at the same time (overlap.go);
	// with run.policy_lag: 1 the next step's rollout beside it (overlaprollout.go)
	values := rewardMetrics(ro)
	maps.Copy(values, res.Metrics())
	gradNorms := map[string]float64{}
	next, err := r.startNextRollout(step)
	if err != nil {
		return err
	}
	updates, laneWait := r.updateModels(step, ro.Samples, res)
	updated := time.Now()
	if err := r.awaitNextRollout(next, slices.ContainsFunc(updates, func(u modelUpdate) bool { return u.err != nil })); err != nil {
		return fmt.Errorf("step %d: %w", step+1, err)
	}
	for i, u := range updates {
		if u.err != nil {
			return fmt.Errorf("step %d: %w", step+1, u.err)
		}
		if u.metrics == nil { // no rows for this model this step
			continue
		}
		maps.Copy(values, u.metrics)
		for _, a := range t.trainers[i].Agents() {
			gradNorms[a] = u.metrics["policy/"+a+"/grad_norm"]
		}
	}

	// metrics: the log line, the console line
	addAliases(values)
	maps.Copy(values, r.monitor.Sample())
	addMemory(values, t)
	maps.Copy(values, rolloutPeaks)
	maps.Copy(values, readPeaks(t, "update"))
	addEngineStats(values, t)
	now := time.Now()
	values["time/rollout_s"] = rows.seconds
	values["time/update_s"] = updated.Sub(rolled).Seconds()
	values["time/step_s"] = now.Sub(began).Seconds()
	overlapTimes(values, r, rows, next, laneWait)
	values["throughput/tokens_per_s"] = float64(responseTokens(ro.Samples)) / max(rows.seconds, 1e-9)
	done := step + 1 // metrics, checkpoints and the console count completed steps
	r.progress.Report(metrics.StepSummary{Step: done, Reward: values["reward/mean"], GradNorm: gradNorms, Tokens: responseTokens(ro.Samples)})
	if dp != nil && (done%weightCheckEvery == 0 || done == cfg.Run.Steps) {
		if err := checkSameWeights(dp, t, done); err != nil {
			return err
		}
	}
	// eval on its cadence, into the same record
	if evaluates(cfg.Eval.Every, done, cfg.Run.Steps) {
		if err := t.refreshEngineCopies(done); err != nil { // run.policy_lag: 1: evaluation reads the engine copies
			return fmt.Errorf("step %d: engine copy: %w", done, err)
		}
		ev, err := evalStep(out, t, done, dp)
		switch {
		case errors.Is(err, rollout.ErrStopped): // a signal: the step is logged and saved without it
			fmt.Fprintf(out, "eval after %d steps: stopped by the signal\n", done)
		case err != nil:
			return err
		}
		maps.Copy(values, ev)
	}
	// the logs and the checkpoint go into the directory this run locked, or nowhere (rundir.go)
	if err := r.checkRunDir(done); err != nil {
		return err
	}
	if err := r.log.Write(metrics.Record{Step: done, Time: now, Values: values}); err != nil {
		return err
	}
	if err := r.tb.write(done, now, values, ro, res.Advantages); err != nil {
		return err
	}
	if err := r.samples.write(done, ro.Samples, res.Advantages); err != nil {
		return err
	}

	// checkpoint on its cadence, at the end, and on a signal
	interrupted := false
	select {
	case sig := <-r.stop:
		interrupted = true
		fmt.Fprintf(out, "received %v after step %d\n", sig, done)
	default:
	}
	if interrupted, err = dp.AnyTrue(interrupted); err != nil { // every rank stops after the same step
		return fmt.Errorf("step %d: %w", done, err)
	}
	saveNow := (cfg.Checkpoint.Every > 0 && done%cfg.Checkpoint.Every == 0) || (done == cfg.Run.Steps && cfg.Checkpoint.AtEnd) ||
		(interrupted && cfg.Checkpoint.OnSignal)
	if saveNow && (dp.Lead() || t.sharded()) { // sharded state is gathered by every rank
		dir, err := save(t, r.dataState(), done, dp, r.lock)
		if err != nil {
			if moved := r.movedRunDir(done); moved != nil { // moved while saving: say that, not the write that failed
				return moved
			}
			return fmt.Errorf("step %d: checkpoint: %w", done, err)
		}
		if dp.Lead() {
			fmt.Fprintf(out, "checkpoint: %s\n", dir)
		}
		r.saved = done
	}
	if interrupted {
		return interruptedError(cfg.Run.OutputDir, done, saveNow, dp.World()) // nextcommand.go
	}
	return nil
}

// sampleNow draws step's tasks and rolls them out on the calling goroutine:
// this rank's slice, then every rank's rows, in rank order.
func (r *trainRun) sampleNow(step int) (stepRows, error) {
	cfg, t, dp := r.cfg, r.t, r.dp
	began := time.Now()
	t.sampler.Progress = rolloutProgress(r.out, step+1, cfg.Run.Steps)
	drawn := r.iter.State() // to draw the step's tasks again if a signal drops it
	tasks := r.iter.Next(cfg.Batch.PromptsPerStep)
	lo, hi := dp.Part(len(tasks)) // data parallel: this rank's slice
	t.forgetPrefixes()            // from an empty prefix cache, as a resumed run's first rollout (overlaprollout.go)
	ro, err := t.sampler.RunPart(t.workflow, tasks[lo:hi], cfg.Batch.N, rollout.DeriveSeed(cfg.Run.Seed, seedRollout, uint64(step)), lo)
	t.sampler.Progress = nil // evaluation uses the sampler too
	cut := errors.Is(err, rollout.ErrStopped)
	if err != nil && !cut {
		return stepRows{}, fmt.Errorf("step %d: rollout: %w", step+1, err)
	}
	if cut, err = dp.AnyTrue(cut); err != nil { // every rank drops the step together
		return stepRows{}, fmt.Errorf("step %d: %w", step+1, err)
	}
	if cut {
		return stepRows{drawn: drawn, cut: true}, nil
	}
	dp.Fault(step + 1) // the tests' failures at a known point (dist/faults.go)
	if ro.Samples, err = dist.GatherJSON(dp, ro.Samples, "the rollout rows"); err != nil {
		return stepRows{}, fmt.Errorf("step %d: %w", step+1, err)
	}
	return stepRows{ro: ro, drawn: drawn, seconds: time.Since(began).Seconds()}, nil
}

// responseTokens counts the generated tokens of rows.
func responseTokens(rows []rollout.Sample) int {
	n := 0
	for _, s := range rows {
		n += len(s.ResponseTokens)
	}
	return n
}

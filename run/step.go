package run

// step.go — one RL step, top to bottom:
//
//	rollout  the step's tasks, every agent of every episode, batched per model, scored
//	rows     the rows of every rank, gathered (data parallel)
//	advantages  one per row, by the configured estimator
//	update   each trained model on its agents' rows, under its own settings
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
	"fmt"
	"maps"
	"time"

	"troupe/internal/metrics"
	"troupe/rollout"
)

// step runs step index step (0-based; the logs count completed steps).
func (r *trainRun) step(step int) error {
	cfg, t, dp, out := r.cfg, r.t, r.dp, r.out
	began := time.Now()

	// rollout: every agent of every episode, batched per model, scored
	t.sampler.Progress = rolloutProgress(out, step+1, cfg.Run.Steps)
	resetPeaks(t)
	tasks := r.iter.Next(cfg.Batch.PromptsPerStep)
	lo, hi := dp.part(len(tasks)) // data parallel: this rank's slice
	ro, err := t.sampler.RunPart(t.workflow, tasks[lo:hi], cfg.Batch.N, rollout.DeriveSeed(cfg.Run.Seed, seedRollout, uint64(step)), lo)
	t.sampler.Progress = nil // evaluation uses the sampler too
	if err != nil {
		return fmt.Errorf("step %d: rollout: %w", step+1, err)
	}
	dp.maybeExit(step + 1)

	// rows: every rank's, in rank order
	if ro.Samples, err = dp.gatherSamples(ro.Samples); err != nil {
		return fmt.Errorf("step %d: %w", step+1, err)
	}
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

	// update: each trained model on its agents' rows, under its own settings
	values := rewardMetrics(ro)
	maps.Copy(values, res.Metrics())
	gradNorms := map[string]float64{}
	for _, tr := range t.trainers {
		seqs := sequences(ro.Samples, res, tr.Agents(), t.sameTemperature(tr))
		if len(seqs) == 0 {
			continue
		}
		beat := startHeartbeat(r.out, fmt.Sprintf("step %d/%d update of model %s (%d rows)", step+1, r.cfg.Run.Steps, tr.Model(), len(seqs)))
		pm, err := tr.Update(seqs, step)
		beat()
		if err != nil {
			return fmt.Errorf("step %d: update of model %q: %w", step+1, tr.Model(), err)
		}
		maps.Copy(values, pm)
		for _, a := range tr.Agents() {
			gradNorms[a] = pm["policy/"+a+"/grad_norm"]
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
	values["time/rollout_s"] = rolled.Sub(began).Seconds()
	values["time/update_s"] = now.Sub(rolled).Seconds()
	values["time/step_s"] = now.Sub(began).Seconds()
	values["throughput/tokens_per_s"] = float64(responseTokens(ro.Samples)) / max(rolled.Sub(began).Seconds(), 1e-9)
	done := step + 1 // metrics, checkpoints and the console count completed steps
	r.progress.Report(metrics.StepSummary{Step: done, Reward: values["reward/mean"], GradNorm: gradNorms, Tokens: responseTokens(ro.Samples)})
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
	if interrupted, err = dp.anyTrue(interrupted); err != nil { // every rank stops after the same step
		return fmt.Errorf("step %d: %w", done, err)
	}
	saveNow := (cfg.Checkpoint.Every > 0 && done%cfg.Checkpoint.Every == 0) || (done == cfg.Run.Steps && cfg.Checkpoint.AtEnd) ||
		(interrupted && cfg.Checkpoint.OnSignal)
	if saveNow && (dp.lead() || t.sharded()) { // sharded state is gathered by every rank
		dir, err := save(t, r.iter, done, dp)
		if err != nil {
			return fmt.Errorf("step %d: checkpoint: %w", done, err)
		}
		if dp.lead() {
			fmt.Fprintf(out, "checkpoint: %s\n", dir)
		}
	}
	if interrupted {
		return interruptedError(cfg.Run.OutputDir, done, saveNow, dp.worldSize()) // nextcommand.go
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

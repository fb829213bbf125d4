package run

// overlaprollout.go — the rollout half of a step with run.policy_lag: 1:
// the engine weight copies the rollouts decode from, and the next step's
// rollout on a torch thread of its own beside this step's update
// (docs/overlap.md).
//
// Step k, in order: its rows are the ones the rollout beside step k−1's
// update sampled, or, on the first step after a start or a resume and
// after a step that evaluated, sampled now from the copies as they are
// (step.go, sampleNow); then the copies are refreshed to the model's
// weights θ_k (the only point where the two halves touch the same memory,
// while neither runs); then step k+1's tasks are drawn from the iterator on
// the calling goroutine and rolled out from the copies on the rollout
// thread, with the seed the synchronous step k+1 would use, while step
// k's update runs; the step waits for both. The last step and a step
// that evaluates start no rollout: evaluation reads the copies, refreshed
// to θ_{k+1} first, and the next step samples from them now.
//
// What a step reads and trains on is fixed by the step index and the
// config, never by timing, so the halves run one after the other
// (serialHalves, the tests' reference) give the same bits. A checkpoint
// after step k holds the copies' weights θ_k beside the model's θ_{k+1}
// (none when they are equal) and the data position before the pending
// rollout's draw: a resume rolls it out again from the copies, the same
// rows. A signal stops the pending rollout within a round and lets the
// update finish; a failure of the update stops the rollout; a failure of
// the rollout lets the update finish and fails the step; either way the
// pending rollout is dropped, its tasks drawn again by the next run.
//
// What it is not: the update half (overlap.go), the synchronous rollout
// (step.go) or the copy itself (model/enginecopy.go).

import (
	"errors"
	"fmt"
	"time"

	"troupe/config"
	"troupe/model"
	"troupe/optim"
	"troupe/rollout"
	"troupe/torch"
)

// stepRows are the rows a step trains on and how they were sampled.
type stepRows struct {
	ro      *rollout.Rollout
	drawn   rollout.IteratorState // the data position before their tasks were drawn
	cut     bool                  // a signal stopped the rollout: no rows
	seconds float64               // the rollout's own duration
	lag     int                   // updates between the weights sampled from and those trained
}

// nextRollout is the next step's rollout, running beside an update.
type nextRollout struct {
	step    int                   // the step whose rows it samples
	drawn   rollout.IteratorState // the data position before its draw
	done    <-chan error          // the rollout thread's result
	rows    stepRows              // its rows, once done
	err     error                 // its failure (not a signal's stop)
	ended   time.Time             // when it ended
	waited  float64               // seconds it waited for the update (time/rollout_wait_s)
	delayed float64               // seconds the update waited for it (time/update_wait_s)
}

// serialHalves lets a test run the next step's rollout to its end before
// the update starts: the reference the overlapped step must equal.
var serialHalves = false

// rolloutFault lets a test fail the rollout of a step beside an update, or
// hold it until stopped (the sampler's stop word) says true.
var rolloutFault = func(step int, stopped func() bool) error { return nil }

// makeEngineCopies gives every trained model an engine weight copy.
func (t *team) makeEngineCopies() error {
	t.copies = map[string]*model.Model{}
	for _, tr := range t.trained {
		c, err := t.models[tr.Name].EngineCopy()
		if err != nil {
			return fmt.Errorf("model %q: %w", tr.Name, err)
		}
		t.copies[tr.Name] = c
	}
	return nil
}

// decoder is the model trained model name's rollouts decode from: its
// engine copy, or the model itself.
func (t *team) decoder(name string) *model.Model {
	if c, ok := t.copies[name]; ok {
		return c
	}
	return t.models[name]
}

// refreshEngineCopies copies every trained model's weights into its engine
// copy, in place; at is the updates those weights had.
func (t *team) refreshEngineCopies(at int) error {
	for name, c := range t.copies {
		if err := c.RefreshFrom(t.models[name]); err != nil {
			return fmt.Errorf("model %q: %w", name, err)
		}
	}
	t.copyAt = at
	return nil
}

// forgetPrefixes drops what the engines cached of earlier prompts — an
// evaluation's, or the last rollout's of a model no update changed since
// — so a rollout starts from an empty prefix cache, as the first rollout
// of a resumed run does: with a cache its rows' log-probs would differ
// from the resumed run's in the last bits (TestResumeAfterAnEvaluatingStep,
// TestPolicyLagAroundEvaluation). The rollout beside an update needs no
// call: the refresh of the copies drops their engines' caches.
func (t *team) forgetPrefixes() {
	for _, e := range t.engines {
		e.ForgetPrefixes()
	}
}

// takeRows gives step its rows: the pending rollout's, or sampled now.
func (r *trainRun) takeRows(step int) (stepRows, error) {
	if p := r.pending; p != nil {
		r.pending = nil
		if p.step != step {
			return stepRows{}, fmt.Errorf("step %d: the pending rollout is step %d's", step+1, p.step+1)
		}
		return p.rows, nil
	}
	rows, err := r.sampleNow(step)
	if len(r.t.copies) > 0 {
		rows.lag = step - r.t.copyAt
	}
	return rows, err
}

// dataState is the data position a checkpoint after the current step
// holds: before the pending rollout's draw, so a resume draws its tasks
// again.
func (r *trainRun) dataState() rollout.IteratorState {
	if r.pending != nil {
		return r.pending.drawn
	}
	return r.iter.State()
}

// startNextRollout refreshes the engine copies to the weights step trains
// and starts step+1's rollout from them on the rollout thread; nil without
// run.policy_lag, on the last step and on a step that evaluates.
func (r *trainRun) startNextRollout(step int) (*nextRollout, error) {
	cfg, t := r.cfg, r.t
	next := step + 1
	if len(t.copies) == 0 || next >= cfg.Run.Steps || evaluates(cfg.Eval.Every, next, cfg.Run.Steps) {
		return nil, nil
	}
	if err := t.refreshEngineCopies(step); err != nil {
		return nil, fmt.Errorf("step %d: engine copy: %w", step+1, err)
	}
	if r.rollThread == nil {
		r.rollThread = torch.NewThread()
		r.closers = append(r.closers, func() { r.haltRollout.Store(true); r.rollThread.Close() })
	}
	n := &nextRollout{step: next, drawn: r.iter.State()}
	tasks := r.iter.Next(cfg.Batch.PromptsPerStep)
	seed := rollout.DeriveSeed(cfg.Run.Seed, seedRollout, uint64(next))
	t.sampler.Progress = rolloutProgress(r.out, next+1, cfg.Run.Steps)
	n.done = r.rollThread.Go(func() error {
		defer func() { n.ended = time.Now() }()
		began := time.Now()
		if err := rolloutFault(next, t.sampler.Stop); err != nil {
			return err
		}
		ro, err := t.sampler.RunPart(t.workflow, tasks, cfg.Batch.N, seed, 0)
		t.releaseEngines()
		if err != nil {
			return err
		}
		n.rows = stepRows{ro: ro, drawn: n.drawn, seconds: time.Since(began).Seconds(), lag: next - t.copyAt}
		return nil
	})
	if serialHalves {
		n.err = <-n.done
		n.done = nil
	}
	return n, nil
}

// awaitNextRollout waits for the rollout beside step's update, stopping it
// first when the update failed, and keeps its rows for the next step. A
// rollout a signal or the failed update stopped is dropped (its tasks are
// drawn again); one that failed fails the step.
func (r *trainRun) awaitNextRollout(n *nextRollout, updateFailed bool) error {
	if n == nil {
		return nil
	}
	updated := time.Now()
	if n.done != nil {
		if updateFailed {
			r.haltRollout.Store(true)
		}
		n.err = <-n.done
		r.haltRollout.Store(false)
	}
	r.t.sampler.Progress = nil // evaluation uses the sampler too
	n.waited = max(updated.Sub(n.ended).Seconds(), 0)
	n.delayed = max(n.ended.Sub(updated).Seconds(), 0)
	if n.err != nil || updateFailed {
		if err := r.iter.Restore(n.drawn); err != nil {
			return err
		}
		if n.err != nil && !errors.Is(n.err, rollout.ErrStopped) {
			return fmt.Errorf("rollout of step %d beside the update: %w", n.step+1, n.err)
		}
		return nil
	}
	r.pending = n
	return nil
}

// policyLagWarnings are the trained models that run.policy_lag: 1 trains
// on rows of the previous weights without correcting for them.
func policyLagWarnings(cfg *config.Config) []string {
	if cfg.Run.PolicyLag == 0 {
		return nil
	}
	var out []string
	for _, tr := range cfg.Trained() {
		if cfg.Settings(tr).RolloutIS == optim.RolloutISOff {
			out = append(out, fmt.Sprintf("warning: model %q: run.policy_lag 1 trains on rows sampled one update earlier, and optim.rollout_is is off, so nothing weighs them for it; set optim.rollout_is: token (or sequence) to correct the lag (docs/overlap.md)", tr.Name))
		}
	}
	return out
}

// evaluates says whether the step that completes done steps evaluates.
func evaluates(every, done, steps int) bool {
	return every > 0 && (done%every == 0 || done == steps)
}

// overlapTimes records, with run.policy_lag: 1, the lag of the step's rows
// and how long each half waited for the other; with
// run.concurrent_updates, how long the update lanes waited for the slowest.
func overlapTimes(values map[string]float64, r *trainRun, rows stepRows, n *nextRollout, laneWait float64) {
	updateWait := laneWait
	if r.cfg.Run.PolicyLag > 0 {
		values["time/policy_lag"] = float64(rows.lag)
		values["time/rollout_wait_s"] = 0
		if n != nil {
			values["time/rollout_wait_s"] = n.waited
			updateWait += n.delayed
		}
	}
	if r.cfg.Run.ConcurrentUpdates || r.cfg.Run.PolicyLag > 0 {
		values["time/update_wait_s"] = updateWait
	}
}

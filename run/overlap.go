package run

// overlap.go — the update half of a step: each trained model on its agents'
// rows, and, with run.concurrent_updates, the team's models on different
// devices at the same time (docs/overlap.md).
//
// Without it (the default) the models update one after another on
// the calling (torch) goroutine, in config order, stopping at the first
// failure: the synchronous step. With it the models are grouped
// into lanes by their device; each lane is a torch.Thread of the run's,
// made at the first step, whose models update one after another in config
// order, and the lanes run at the same time. Each update touches only its
// own model, optimizer and rows, and each lane's work runs in the same
// order on one locked thread, so the results are the synchronous step's bit
// for bit (TestUpdateLanesEqualTheSynchronousStep). A failure in one lane
// lets the others finish their model (an update is not cut half way) and
// the step fails with the first failing model in config order; nothing is
// saved of that step, so the last checkpoint stays the newest.
//
// Data parallel: the trained models share the ranks' one process group,
// whose collectives every rank must issue in the same order; there the
// models update one after another whatever concurrent_updates says.
//
// What it is not: the rollout (step.go) or the update itself
// (policy/trainer.go).

import (
	"fmt"
	"time"

	"troupe/advantage"
	"troupe/policy"
	"troupe/rollout"
	"troupe/torch"
)

// modelUpdate is one trained model's update in a step.
type modelUpdate struct {
	metrics policy.Metrics // nil: the model had no rows this step
	err     error
	lane    int     // the lane it ran in (0 without lanes)
	seconds float64 // its lane's busy time, this model's update included
}

// laneOf names the lane a trained model updates in: its device. A
// variable so a test can put models of one device in lanes of their own.
var laneOf = func(t *team, tr *policy.Trainer) string {
	return t.models[tr.Model()].Device().String()
}

// updateFault lets a test fail one model's update at a known step.
var updateFault = func(step int, model string) error { return nil }

// updateModels updates every trained model of the team on the step's rows,
// and returns one result per trainer, in config order, with the seconds
// the lanes spent waiting for the slowest one (0 without lanes).
func (r *trainRun) updateModels(step int, rows []rollout.Sample, res advantage.Result) ([]modelUpdate, float64) {
	t := r.t
	out := make([]modelUpdate, len(t.trainers))
	if !r.cfg.Run.ConcurrentUpdates || r.dp != nil {
		for i, tr := range t.trainers {
			out[i].metrics, out[i].err = r.updateModel(step, tr, rows, res)
			if out[i].err != nil {
				return out[:i+1], 0
			}
		}
		return out, 0
	}
	names, members := []string{}, map[string][]int{}
	for i, tr := range t.trainers {
		k := laneOf(t, tr)
		if _, ok := members[k]; !ok {
			names = append(names, k)
		}
		members[k] = append(members[k], i)
	}
	for len(r.lanes) < len(names) {
		th := torch.NewThread()
		r.lanes = append(r.lanes, th)
		r.closers = append(r.closers, th.Close)
	}
	busy := make([]float64, len(names))
	done := make([]<-chan error, len(names))
	for l, k := range names {
		done[l] = r.lanes[l].Go(func() error {
			began := time.Now()
			defer func() { busy[l] = time.Since(began).Seconds() }()
			for _, i := range members[k] {
				out[i].lane = l
				if out[i].metrics, out[i].err = r.updateModel(step, t.trainers[i], rows, res); out[i].err != nil {
					return nil
				}
			}
			return nil
		})
	}
	for l, k := range names {
		if err := <-done[l]; err != nil { // a panic that is not libtorch's: the lane's first model names it
			out[members[k][0]].err = err
		}
	}
	slowest, waited := 0.0, 0.0
	for _, b := range busy {
		slowest = max(slowest, b)
	}
	for i := range out {
		out[i].seconds = busy[out[i].lane]
	}
	for _, b := range busy {
		waited += slowest - b
	}
	return out, waited
}

// updateModel updates one trained model on its agents' rows (nil metrics
// when it has none this step).
func (r *trainRun) updateModel(step int, tr *policy.Trainer, rows []rollout.Sample, res advantage.Result) (policy.Metrics, error) {
	t := r.t
	if err := updateFault(step, tr.Model()); err != nil {
		return nil, fmt.Errorf("update of model %q: %w", tr.Model(), err)
	}
	seqs := sequences(rows, res, tr.Agents(), t.sameTemperature(tr))
	if tr.Settings().LossPadding { // CoMLRL's MAGRPO loss over pad tokens (policy/padding.go)
		var err error
		if seqs, err = paddedSequences(rows, res, tr.Agents(), t.padToken(tr.Model())); err != nil {
			return nil, fmt.Errorf("model %q: %w", tr.Model(), err)
		}
	}
	if len(seqs) == 0 {
		return nil, nil
	}
	beat := startHeartbeat(r.out, fmt.Sprintf("step %d/%d update of model %s (%d rows)", step+1, r.cfg.Run.Steps, tr.Model(), len(seqs)))
	pm, err := tr.Update(seqs, step)
	beat()
	if err != nil {
		return nil, fmt.Errorf("update of model %q: %w", tr.Model(), err)
	}
	return pm, nil
}

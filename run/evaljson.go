package run

// evaljson.go — `train eval --json`: the evaluation as one JSON object on
// stdout, for scripts. The metrics carry the keys a training run logs in
// metrics.jsonl (eval/accuracy, eval/pass_at_4, …); a value that is not a
// number (NaN, ±Inf) is null.

import (
	"encoding/json"
	"fmt"
	"io"
	"math"

	"troupe/ckpt"
	"troupe/config"
	"troupe/rollout"
)

// EvalResult is what `train eval --json` prints.
type EvalResult struct {
	Checkpoint     string              `json:"checkpoint,omitempty"` // the checkpoint evaluated, if any
	Step           int                 `json:"step"`                 // its step (0: the config's models)
	Models         map[string]string   `json:"models"`               // model name → the path of its weights
	Tasks          int                 `json:"tasks"`
	SamplesPerTask int                 `json:"samples_per_task"`
	Metrics        map[string]*float64 `json:"metrics"`
}

func writeEvalJSON(out io.Writer, cfg *config.Config, cp *ckpt.Checkpoint, m rollout.EvalMetrics) error {
	r := EvalResult{Models: map[string]string{}, Tasks: m.Tasks, SamplesPerTask: m.SamplesPerTask, Metrics: map[string]*float64{}}
	for _, tr := range cfg.Trained() {
		r.Models[tr.Name] = tr.Model.Path
		if cp != nil {
			r.Models[tr.Name] = cp.Path(ckpt.ModelStateDir(tr.Name))
		}
	}
	if cp != nil {
		r.Checkpoint, r.Step = cp.Dir, cp.Step
	}
	for k, v := range evalMetrics(m) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			r.Metrics[k] = nil
			continue
		}
		r.Metrics[k] = &v
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("eval --json: %w", err)
	}
	_, err = fmt.Fprintf(out, "%s\n", data)
	return err
}

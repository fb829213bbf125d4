package run

import (
	"testing"

	"troupe/config"
)

// A greedy evaluation (temperature 0) exports do_sample false with no
// sampling parameters, whatever top_p and top_k hold (their defaults are
// 0.95 and 0 in some configs): the export at the end of such a run used to
// fail after training had finished.
func TestExportOptionsOfGreedyEvaluation(t *testing.T) {
	var cfg config.Config
	cfg.Eval.Sampling.Temperature, cfg.Eval.Sampling.TopP, cfg.Eval.Sampling.TopK = 0, 0.95, 20
	o := exportOptions(&cfg)
	if err := o.Validate(); err != nil {
		t.Fatalf("greedy evaluation: %v", err)
	}
	if g := o.Generation; g.DoSample || g.Temperature != 0 || g.TopP != 0 || g.TopK != 0 {
		t.Fatalf("greedy evaluation exports %+v, want do_sample false and nothing else", g)
	}
	cfg.Eval.Sampling.Temperature = 0.6
	if g := exportOptions(&cfg).Generation; !g.DoSample || g.Temperature != 0.6 || g.TopP != 0.95 || g.TopK != 20 {
		t.Fatalf("sampled evaluation exports %+v", g)
	}
}

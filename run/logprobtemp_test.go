package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/config"
)

// The update scores its rows at the temperature optim.logprob_temperature
// names: CoMLRL's MAGRPO loss takes log_softmax of the raw logits whatever
// the agents sampled at (comlrl/trainers/reinforce/magrpo.py,
// _compute_loss_with_gradients), so auto gives 1 under loss: magrpo and
// the sampling temperature under the clipped loss; sampling and raw choose.
func TestLogProbTemperatureFollowsTheLoss(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	initTiny(t, base, 5)
	yaml := strings.ReplaceAll(strings.ReplaceAll(tinyConfigYAML, "OUT", filepath.Join(dir, "out")), "MODEL", base)
	cfgPath := filepath.Join(dir, "run.yaml")
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		sets []string
		want float64
	}{
		{"clipped-auto", nil, 0.7},
		{"clipped-raw", []string{"optim.logprob_temperature=raw"}, 1},
		{"magrpo-auto", []string{"optim.loss=magrpo", "optim.loss_agg=seq-mean-token-sum"}, 1},
		{"magrpo-sampling", []string{"optim.loss=magrpo", "optim.loss_agg=seq-mean-token-sum", "optim.logprob_temperature=sampling"}, 0.7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Load(cfgPath, append([]string{"sampling.temperature=0.7"}, tc.sets...))
			if err != nil {
				t.Fatal(err)
			}
			team, err := buildTeam(cfg, true, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer team.free()
			if len(team.trainers) == 0 {
				t.Fatal("no trainers built")
			}
			for _, tr := range team.trainers {
				if got := tr.Temperature(); got != tc.want {
					t.Errorf("model %s: log-probs at T %g, want %g", tr.Model(), got, tc.want)
				}
			}
		})
	}
}

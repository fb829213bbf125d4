package optim

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestDefaultSettingsAreDrMASMath(t *testing.T) {
	s := DefaultSettings()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	// algorithms.md §6, Dr. MAS math column
	want := map[string]any{
		"lr": 1e-6, "lr_schedule": "constant", "clip_low": 0.2, "clip_high": 0.2, "dual_clip": 3.0,
		"updates_per_step": 1, "entropy_coef": 0.0, "kl_coef": 0.0, "beta1": 0.9, "beta2": 0.999,
		"weight_decay": 0.01, "grad_clip": 1.0, "loss": "clipped", "loss_agg": "token-mean",
	}
	var got map[string]any
	raw, err := yaml.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		g := got[k]
		if gi, ok := g.(int); ok { // yaml decodes 1.0 as int 1
			if _, wantFloat := v.(float64); wantFloat {
				g = float64(gi)
			}
		}
		if g != v {
			t.Errorf("default %s = %v (%T), want %v", k, got[k], got[k], v)
		}
	}
	if s.NeedsReference() {
		t.Error("defaults need a reference model, but KL is off")
	}
}

func TestValidateNamesKeyValueAndFix(t *testing.T) {
	cases := []struct {
		edit func(*Settings)
		want string
	}{
		{func(s *Settings) { s.LR = -1e-6 }, "lr: must be >= 0 and finite, got -1e-06"},
		{func(s *Settings) { s.Beta1 = 1 }, "beta1: must be in [0, 1), got 1"},
		{func(s *Settings) { s.Beta2 = -0.1 }, "beta2: must be in [0, 1), got -0.1"},
		{func(s *Settings) { s.Eps = 0 }, "eps: must be > 0"},
		{func(s *Settings) { s.WeightDecay = -0.01 }, "weight_decay: must be >= 0"},
		{func(s *Settings) { s.GradClip = -1 }, "grad_clip: must be >= 0"},
		{func(s *Settings) { s.LRSchedule = "linear" }, `lr_schedule: must be one of constant, cosine, got "linear"`},
		{func(s *Settings) { s.WarmupSteps = -1 }, "warmup_steps: must be >= 0, got -1"},
		{func(s *Settings) { s.MinLRRatio = 1.5 }, "min_lr_ratio: must be in [0, 1], got 1.5"},
		{func(s *Settings) { s.LRSchedule, s.WarmupSteps, s.TotalSteps = "cosine", 10, 10 }, "total_steps: lr_schedule cosine needs total_steps > warmup_steps (10), got 10"},
		{func(s *Settings) { s.Loss = "ppo" }, `loss: must be one of clipped, magrpo, got "ppo"`},
		{func(s *Settings) { s.LossAgg = "token-sum" }, `loss_agg: must be one of token-mean, seq-mean-token-sum, seq-mean-token-mean, seq-mean-token-sum-norm, got "token-sum"`},
		{func(s *Settings) { s.LossAgg = SeqMeanTokenSumNorm }, "dr_grpo_length: loss_agg seq-mean-token-sum-norm divides by a constant length, got 0; set it"},
		{func(s *Settings) { s.ClipLow = 1 }, "clip_low: must be in [0, 1), got 1"},
		{func(s *Settings) { s.ClipHigh = -0.2 }, "clip_high: must be >= 0"},
		{func(s *Settings) { s.DualClip = 1 }, "dual_clip: must be > 1, or 0 to turn it off, got 1"},
		{func(s *Settings) { s.EntropyCoef = -0.001 }, "entropy_coef: must be >= 0"},
		{func(s *Settings) { s.KLCoef = -1 }, "kl_coef: must be >= 0"},
		{func(s *Settings) { s.KLEstimator = "k2" }, `kl_estimator: must be one of k1, k3, low_var_kl, got "k2"`},
		{func(s *Settings) { s.MicroBatchSize = 0 }, "micro_batch_size: must be >= 1 sequence, got 0"},
		{func(s *Settings) { s.UpdatesPerStep = 0 }, "updates_per_step: must be >= 1 mini-batch, got 0"},
	}
	for _, c := range cases {
		s := DefaultSettings()
		c.edit(&s)
		err := s.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("got %v, want prefix %q", err, c.want)
		}
	}
	nan := DefaultSettings()
	nan.LR = zero() / zero()
	if nan.Validate() == nil {
		t.Error("lr NaN accepted")
	}
	ok := DefaultSettings()
	ok.LR, ok.DualClip, ok.GradClip = 0, 0, 0 // frozen model, dual clip off, no grad clip
	if err := ok.Validate(); err != nil {
		t.Errorf("lr 0, dual_clip 0, grad_clip 0 refused: %v", err)
	}
}

func zero() float64 { return 0 }

func TestOverridesMirrorSettings(t *testing.T) {
	st, ot := reflect.TypeOf(Settings{}), reflect.TypeOf(Overrides{})
	if st.NumField() != ot.NumField() {
		t.Fatalf("Settings has %d fields, Overrides %d", st.NumField(), ot.NumField())
	}
	for i := 0; i < st.NumField(); i++ {
		sf, of := st.Field(i), ot.Field(i)
		if sf.Name != of.Name || sf.Tag.Get("yaml") != of.Tag.Get("yaml") || reflect.PointerTo(sf.Type) != of.Type {
			t.Errorf("field %d: Settings %s %v %q, Overrides %s %v %q", i, sf.Name, sf.Type, sf.Tag.Get("yaml"), of.Name, of.Type, of.Tag.Get("yaml"))
		}
	}
}

func TestOverridesApply(t *testing.T) {
	lr, clip, mbs, agg := 2e-6, 0.28, 4, SeqMeanTokenMean
	o := Overrides{LR: &lr, ClipHigh: &clip, MicroBatchSize: &mbs, LossAgg: &agg}
	base := DefaultSettings()
	got := o.Apply(base)
	want := base
	want.LR, want.ClipHigh, want.MicroBatchSize, want.LossAgg = lr, clip, mbs, agg
	if got != want {
		t.Fatalf("Apply:\n got %+v\nwant %+v", got, want)
	}
	if base != DefaultSettings() {
		t.Fatal("Apply changed its base")
	}
	if k := strings.Join(o.Keys(), ","); k != "lr,loss_agg,clip_high,micro_batch_size" {
		t.Fatalf("Keys = %s", k)
	}
	// the same from YAML: pointer fields decode only what is present
	var fromYAML Overrides
	if err := yaml.Unmarshal([]byte("lr: 2.0e-6\nclip_high: 0.28\nmicro_batch_size: 4\nloss_agg: seq-mean-token-mean\n"), &fromYAML); err != nil {
		t.Fatal(err)
	}
	if fromYAML.Apply(base) != want {
		t.Fatalf("YAML overrides give %+v", fromYAML.Apply(base))
	}
}

func TestSettingsDiffListsEveryKeyWithBothValues(t *testing.T) {
	a, b := DefaultSettings(), DefaultSettings()
	if d := SettingsDiff(a, b); d != nil {
		t.Fatalf("equal settings differ: %v", d)
	}
	b.LR, b.ClipHigh, b.KLEstimator = 2e-6, 0.28, KLK1
	got := strings.Join(SettingsDiff(a, b), ", ")
	if want := `lr (1e-06 vs 2e-06), clip_high (0.2 vs 0.28), kl_estimator ("k3" vs "k1")`; got != want {
		t.Fatalf("diff = %s\nwant   %s", got, want)
	}
}

func TestLearningRateSchedules(t *testing.T) {
	s := DefaultSettings()
	s.LR = 1e-5
	for _, step := range []int{0, 1, 100} {
		near(t, "constant", s.LearningRate(step), 1e-5, 1e-15)
	}
	s.WarmupSteps = 4
	for step, want := range []float64{2.5e-6, 5e-6, 7.5e-6, 1e-5, 1e-5} {
		near(t, "constant with warmup", s.LearningRate(step), want, 1e-12)
	}
	// cosine: warmup 10, total 110, floor 0.1·lr; halfway (step 60) is 0.55·lr
	s.LRSchedule, s.WarmupSteps, s.TotalSteps, s.MinLRRatio = ScheduleCosine, 10, 110, 0.1
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		step int
		want float64
	}{{0, 1e-6}, {9, 1e-5}, {10, 1e-5}, {35, 1e-5 * (0.1 + 0.9*0.5*(1+0.7071067811865476))}, {60, 5.5e-6}, {110, 1e-6}, {500, 1e-6}} {
		near(t, "cosine", s.LearningRate(c.step), c.want, 1e-12)
	}
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol*(1+math.Abs(want)) {
		t.Fatalf("%s = %.15g, want %.15g (tol %g)", what, got, want, tol)
	}
}

// The defaults are the Dr. MAS reference scripts' (examples/drmas_trainer/
// run_math.sh and run_search.sh): micro-batches of 4 sequences per agent,
// lr 1e-6, one update per step for math.
func TestDefaultsAreDrMASScripts(t *testing.T) {
	d := DefaultSettings()
	if d.MicroBatchSize != 4 || d.LR != 1e-6 || d.UpdatesPerStep != 1 {
		t.Fatalf("defaults: micro_batch_size %d lr %g updates_per_step %d, want the reference scripts' 4, 1e-06, 1", d.MicroBatchSize, d.LR, d.UpdatesPerStep)
	}
}

package policy

// Update-step tests on a tiny random Qwen3 (vocab 300, hidden 32, 2 layers,
// 4 heads, 2 KV heads, head_dim 8, intermediate 64) on the CPU in float32
// (bfloat16 where the test says so).

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"troupe/internal/cpulevel"
	"troupe/optim"

	"troupe/model"
	"troupe/torch"
)

func tinyConfig() model.Config {
	return model.Config{Family: model.Qwen3, VocabSize: 300, HiddenSize: 32, IntermediateSize: 64, NumLayers: 2,
		NumHeads: 4, NumKVHeads: 2, HeadDim: 8, RopeTheta: 10000, RMSNormEps: 1e-6, MaxPositions: 128,
		InitializerRange: 0.02}
}

func tinyModel(t *testing.T, seed uint64, dt torch.DType) *model.Model {
	t.Helper()
	m, err := model.New(tinyConfig(), seed, model.Options{DType: dt, Device: torch.CPU})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Free)
	return m
}

// trainSettings are the defaults with a learning rate that moves a tiny
// model visibly in a few steps.
func trainSettings() optim.Settings {
	s := optim.DefaultSettings()
	s.LR = 3e-3
	s.MicroBatchSize = 1
	return s
}

func newTrainer(t *testing.T, cfg TrainerConfig) *Trainer {
	t.Helper()
	tr, err := NewTrainer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Free)
	return tr
}

func group(model string, s optim.Settings, agents ...string) optim.Group {
	return optim.Group{Model: model, Agents: agents, Settings: s}
}

// contrast is the fixed batch: one response with a positive advantage, one
// with a negative one, after the same prompt.
func contrast(agent string) []Sequence {
	return []Sequence{
		{Agent: agent, Prompt: []int{1, 2, 3}, Response: []int{10, 11, 12, 13}, Advantage: 1},
		{Agent: agent, Prompt: []int{1, 2, 3}, Response: []int{20, 21, 22}, Advantage: -1},
	}
}

// responseLogProb is Σ log π(response | prompt) of each row, without grad.
func responseLogProb(t *testing.T, m *model.Model, seqs []Sequence) []float64 {
	t.Helper()
	s := torch.NewScope()
	defer s.Close()
	b, err := Pack(seqs, m.Device())
	if err != nil {
		t.Fatal(err)
	}
	var lp *torch.Tensor
	torch.NoGrad(func() { lp, _, err = b.LogProbs(m, model.LogProbOptions{}) })
	if err != nil {
		t.Fatal(err)
	}
	return lp.SumDim(1, false).Float64s()
}

// snapshot copies every weight to Go.
func snapshot(m *model.Model) [][]float32 {
	var out [][]float32
	for _, p := range m.Parameters() {
		out = append(out, p.Float32s())
	}
	return out
}

func identical(a, b [][]float32) bool {
	for i := range a {
		for j := range a[i] {
			if math.Float32bits(a[i][j]) != math.Float32bits(b[i][j]) {
				return false
			}
		}
	}
	return true
}

// distance is the 2-norm of b − a over every weight.
func distance(a, b [][]float32) float64 {
	var ss float64
	for i := range a {
		for j := range a[i] {
			d := float64(b[i][j]) - float64(a[i][j])
			ss += d * d
		}
	}
	return math.Sqrt(ss)
}

func update(t *testing.T, tr *Trainer, seqs []Sequence, step int) Metrics {
	t.Helper()
	m, err := tr.Update(seqs, step)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestUpdateRaisesPositiveAndLowersNegative(t *testing.T) {
	checkLeaks(t)
	for _, loss := range []string{optim.LossClipped, optim.LossMAGRPO} {
		m := tinyModel(t, 1, torch.Float32)
		s := trainSettings()
		s.Loss = loss
		if loss == optim.LossMAGRPO {
			s.LossAgg = optim.SeqMeanTokenSum // MAGRPO's −mean A·Σ log π
		}
		tr := newTrainer(t, TrainerConfig{Group: group("m", s, "solver"), Policy: m, Temperature: 1})
		seqs := contrast("solver")
		before := responseLogProb(t, m, seqs)
		for step := 0; step < 4; step++ {
			update(t, tr, seqs, step)
		}
		after := responseLogProb(t, m, seqs)
		t.Logf("%s: log π(positive) %.4f → %.4f, log π(negative) %.4f → %.4f", loss, before[0], after[0], before[1], after[1])
		if !(after[0] > before[0]+0.1) || !(after[1] < before[1]-0.1) {
			t.Fatalf("%s: positive %.4f → %.4f (must rise), negative %.4f → %.4f (must fall)", loss, before[0], after[0], before[1], after[1])
		}
	}
}

func TestFirstMiniBatchRatioIsExactlyOne(t *testing.T) {
	cpulevel.Each(t) // also at the lesser CPU levels
	checkLeaks(t)
	for _, lr := range []float64{3e-3, 0} {
		m := tinyModel(t, 2, torch.Float32)
		s := trainSettings()
		s.LR, s.UpdatesPerStep, s.MicroBatchSize = lr, 2, 2
		tr := newTrainer(t, TrainerConfig{Group: group("m", s, "a"), Policy: m, Temperature: 0.7})
		seqs := append(contrast("a"), []Sequence{
			{Agent: "a", Prompt: []int{7, 8}, Response: []int{30, 31, 32, 33, 34}, Advantage: 0.5},
			{Agent: "a", Prompt: []int{9, 9, 9, 9}, Response: []int{40}, Advantage: -0.25},
			{Agent: "a", Prompt: []int{4}, Response: []int{50, 51}, Advantage: 2},
		}...)
		differs := map[int]bool{}
		calls := 0
		tr.onMicroBatch = func(mini, micro int, logp, old, mask *torch.Tensor) {
			calls++
			a, b := logp.Float32s(), old.Float32s()
			for i := range a {
				if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
					differs[mini] = true
				}
			}
		}
		met := update(t, tr, seqs, 0)
		if calls != 3 { // mini-batches of 3 and 2 rows, micro-batches of at most 2
			t.Fatalf("lr %g: %d micro-batches, want 3", lr, calls)
		}
		if differs[0] {
			t.Fatalf("lr %g: on the first mini-batch the training forward's log-probs differ from the old ones; the ratio must be exactly 1", lr)
		}
		if lr > 0 && !differs[1] {
			t.Fatalf("lr %g: the second mini-batch's log-probs equal the old ones although the model took a step", lr)
		}
		if lr == 0 {
			// no parameter moved: every mini-batch sees ratio 1, so nothing is clipped
			for _, k := range []string{"approx_kl", "clip_frac_low", "clip_frac_high", "dual_clip_frac"} {
				if v := met[MetricKey("a", k)]; v != 0 {
					t.Fatalf("lr 0: %s = %g, want exactly 0", k, v)
				}
			}
		}
	}
}

func TestSeparateModelsMoveByTheirOwnLearningRates(t *testing.T) {
	checkLeaks(t)
	base := trainSettings()
	slow, fast, frozen := base, base, base
	slow.LR, fast.LR, frozen.LR = 1e-3, 1e-2, 0
	fast.ClipHigh = 0.28 // separate models may differ in any setting
	groups, err := optim.Assign([]optim.AgentSpec{
		{Name: "solver", Model: "solver-model", Settings: slow},
		{Name: "verifier", Model: "verifier-model", Settings: fast},
		{Name: "critic", Model: "critic-model", Settings: frozen},
	})
	if err != nil {
		t.Fatal(err)
	}
	var moved []float64
	for _, g := range groups {
		m := tinyModel(t, 3, torch.Float32) // the same initial weights for all three
		before := snapshot(m)
		tr := newTrainer(t, TrainerConfig{Group: g, Policy: m, Temperature: 1})
		met := update(t, tr, contrast(g.Agents[0]), 0)
		if got := met[MetricKey(g.Agents[0], "lr")]; got != g.Settings.LR {
			t.Fatalf("%s: metric lr %g, want %g", g.Model, got, g.Settings.LR)
		}
		after := snapshot(m)
		if g.Settings.LR == 0 {
			if !identical(before, after) {
				t.Fatalf("%s: lr 0 changed the weights", g.Model)
			}
			continue
		}
		moved = append(moved, distance(before, after))
	}
	// AdamW's first step moves each weight by about lr·sign(grad) (+ lr·wd·w),
	// so the distance scales with the learning rate
	ratio := moved[1] / moved[0]
	t.Logf("distance moved: lr 1e-3 %.5g, lr 1e-2 %.5g, ratio %.4f", moved[0], moved[1], ratio)
	if ratio < 9.5 || ratio > 10.5 {
		t.Fatalf("the lr-1e-2 model moved %.4g× as far as the lr-1e-3 one, want about 10×", ratio)
	}
}

func TestSharedModelTrainsSeveralAgents(t *testing.T) {
	checkLeaks(t)
	m := tinyModel(t, 4, torch.Float32)
	s := trainSettings()
	groups, err := optim.Assign([]optim.AgentSpec{{Name: "solver", Model: "qwen", Settings: s}, {Name: "verifier", Model: "qwen", Settings: s}})
	if err != nil {
		t.Fatal(err)
	}
	tr := newTrainer(t, TrainerConfig{Group: groups[0], Policy: m, Temperature: 1})
	seqs := append(contrast("solver"), Sequence{Agent: "verifier", Prompt: []int{5, 6}, Response: []int{60, 61}, Advantage: 0.25})
	met := update(t, tr, seqs, 0)
	key := func(a, k string) float64 { return met[MetricKey(a, k)] }
	if key("solver", "grad_norm") != key("verifier", "grad_norm") || !(key("solver", "grad_norm") > 0) {
		t.Fatalf("grad_norm solver %g, verifier %g: a shared model has one norm", key("solver", "grad_norm"), key("verifier", "grad_norm"))
	}
	checks := map[string]float64{
		"solver/tokens": 7, "verifier/tokens": 2, "solver/rows": 2, "verifier/rows": 1,
		"solver/adv_mean": 0, "solver/adv_std": 1, "verifier/adv_mean": 0.25, "verifier/adv_std": 0,
		"solver/updates": 1, "solver/skipped_steps": 0, "solver/approx_kl": 0, "solver/clip_frac_high": 0,
		// ratio 1 on the only mini-batch: per token −A, token-mean over the agent's tokens
		"solver/loss": -(4*1.0 + 3*-1.0) / 7, "verifier/loss": -0.25, "verifier/pg_loss": -0.25,
	}
	for k, want := range checks {
		parts := strings.SplitN(k, "/", 2)
		near(t, k, key(parts[0], parts[1]), want, 1e-6)
	}
	// a random tiny model is nearly uniform over its 300 tokens
	if e := key("solver", "entropy"); !(e > 5.5 && e <= math.Log(300)+1e-4) {
		t.Fatalf("entropy %g, want just below log 300 = %.4f", e, math.Log(300))
	}
	if _, ok := met[MetricKey("solver", "kl_ref")]; ok {
		t.Fatal("kl_ref reported with the KL term off")
	}
	// a row of an agent the model does not train is refused
	if _, err := tr.Update([]Sequence{{Agent: "planner", Prompt: []int{1}, Response: []int{2}}}, 1); err == nil || !strings.Contains(err.Error(), `agent "planner" is not trained by this model`) {
		t.Fatalf("unknown agent: %v", err)
	}
}

func TestNonFiniteGradNormSkipsTheStep(t *testing.T) {
	checkLeaks(t)
	s := trainSettings()
	m := tinyModel(t, 5, torch.Float32)
	tr := newTrainer(t, TrainerConfig{Group: group("m", s, "a"), Policy: m, Temperature: 1})
	before := snapshot(m)
	huge := contrast("a")
	huge[0].Advantage, huge[1].Advantage = 1e30, -1e30 // squares overflow float32: the norm is +Inf
	met := update(t, tr, huge, 0)
	if n := met[MetricKey("a", "grad_norm")]; !math.IsInf(n, 1) && !math.IsNaN(n) {
		t.Fatalf("grad_norm %g, want non-finite", n)
	}
	if met[MetricKey("a", "skipped_steps")] != 1 || met[MetricKey("a", "updates")] != 0 || tr.State().SkippedSteps != 1 {
		t.Fatalf("skipped_steps %g, updates %g, state %+v; want 1, 0", met[MetricKey("a", "skipped_steps")], met[MetricKey("a", "updates")], tr.State())
	}
	if !identical(before, snapshot(m)) {
		t.Fatal("a skipped step changed the weights")
	}
	// nothing of the skipped step survives: the next step equals a fresh trainer's
	update(t, tr, contrast("a"), 1)
	fresh := tinyModel(t, 5, torch.Float32)
	ftr := newTrainer(t, TrainerConfig{Group: group("m", s, "a"), Policy: fresh, Temperature: 1})
	update(t, ftr, contrast("a"), 1)
	if !identical(snapshot(m), snapshot(fresh)) {
		t.Fatal("after a skipped step, the next update differs from a fresh trainer's")
	}
}

func TestUpdateLeaksNoTensors(t *testing.T) {
	m := tinyModel(t, 6, torch.Float32)
	ref := tinyModel(t, 6, torch.Float32)
	s := trainSettings()
	s.KLCoef, s.EntropyCoef, s.UpdatesPerStep = 0.1, 0.01, 2
	tr := newTrainer(t, TrainerConfig{Group: group("m", s, "a"), Policy: m, Reference: ref, Temperature: 1})
	before := torch.LiveTensors() // the optimizer state lives in the shim, not in Go handles
	for step := 0; step < 3; step++ {
		update(t, tr, contrast("a"), step)
	}
	if _, err := tr.Update([]Sequence{{Agent: "b", Prompt: []int{1}, Response: []int{2}}}, 3); err == nil {
		t.Fatal("want an error")
	}
	// a libtorch failure in the middle of a micro-batch becomes an error, and
	// everything the step made is still freed
	tr.onMicroBatch = func(mini, micro int, logp, old, mask *torch.Tensor) {
		logp.Matmul(mask) // (2,T)·(2,T): a shape error from libtorch
	}
	if _, err := tr.Update(contrast("a"), 3); err == nil || !strings.Contains(err.Error(), "torch: matmul") {
		t.Fatalf("a torch panic inside the update gave error %v", err)
	}
	if after := torch.LiveTensors(); after != before {
		t.Fatalf("live tensors %d before the updates, %d after", before, after)
	}
}

func TestKLToReference(t *testing.T) {
	checkLeaks(t)
	s := trainSettings()
	s.KLCoef = 0.1
	m := tinyModel(t, 7, torch.Float32)
	if _, err := NewTrainer(TrainerConfig{Group: group("m", s, "a"), Policy: m}); err == nil || !strings.Contains(err.Error(), "kl_coef is 0.1 but no reference model") {
		t.Fatalf("missing reference: %v", err)
	}
	ref := tinyModel(t, 7, torch.Float32) // the initial weights
	noKL := trainSettings()
	if _, err := NewTrainer(TrainerConfig{Group: group("m", noKL, "a"), Policy: m, Reference: ref}); err == nil || !strings.Contains(err.Error(), "kl_coef is 0") {
		t.Fatalf("needless reference: %v", err)
	}
	for _, est := range []string{optim.KLK3, optim.KLK1} {
		s.KLEstimator = est
		m := tinyModel(t, 7, torch.Float32)
		tr := newTrainer(t, TrainerConfig{Group: group("m", s, "a"), Policy: m, Reference: ref, Temperature: 1})
		if kl := update(t, tr, contrast("a"), 0)[MetricKey("a", "kl_ref")]; kl != 0 {
			t.Fatalf("%s: kl_ref %g at step 0 with the reference equal to the policy, want exactly 0", est, kl)
		}
		update(t, tr, contrast("a"), 1)
		kl := update(t, tr, contrast("a"), 2)[MetricKey("a", "kl_ref")]
		t.Logf("%s: kl_ref after two steps %.3g", est, kl)
		if est == optim.KLK3 && !(kl > 0) {
			t.Fatalf("k3 kl_ref %g after the policy moved, want > 0", kl)
		}
		if est == optim.KLK1 && kl == 0 {
			t.Fatal("k1 kl_ref is still 0 after the policy moved")
		}
	}
}

func TestResumeIsExact(t *testing.T) {
	checkLeaks(t)
	s := trainSettings()
	s.UpdatesPerStep, s.LRSchedule, s.WarmupSteps, s.TotalSteps = 2, optim.ScheduleCosine, 1, 3
	seqs := append(contrast("a"), Sequence{Agent: "a", Prompt: []int{8}, Response: []int{70, 71, 72}, Advantage: 0.5})

	// uninterrupted: steps 0, 1, 2
	whole := tinyModel(t, 8, torch.Float32)
	wtr := newTrainer(t, TrainerConfig{Group: group("m", s, "a"), Policy: whole, Temperature: 1, Seed: 9})
	for step := 0; step < 3; step++ {
		update(t, wtr, seqs, step)
	}

	// interrupted after step 0: weights, optimizer state and counters saved
	first := tinyModel(t, 8, torch.Float32)
	ftr := newTrainer(t, TrainerConfig{Group: group("m", s, "a"), Policy: first, Temperature: 1, Seed: 9})
	update(t, ftr, seqs, 0)
	scope := torch.NewScope()
	defer scope.Close()
	var weights []*torch.Tensor
	var states []torch.AdamWState
	for i, p := range first.Parameters() {
		weights = append(weights, p.Detach().Clone())
		st := ftr.Optimizer().State(i)
		states = append(states, torch.AdamWState{Step: st.Step, ExpAvg: st.ExpAvg.Clone(), ExpAvgSq: st.ExpAvgSq.Clone()})
	}
	counters := ftr.State()

	// resumed: a fresh process loads them and runs steps 1, 2
	resumed := tinyModel(t, 80, torch.Float32) // other initial weights, overwritten below
	torch.NoGrad(func() {
		for i, p := range resumed.Parameters() {
			p.CopyFrom(weights[i])
		}
	})
	rtr := newTrainer(t, TrainerConfig{Group: group("m", s, "a"), Policy: resumed, Temperature: 1, Seed: 9})
	for i, st := range states {
		rtr.Optimizer().LoadState(i, st)
	}
	rtr.Restore(counters)
	for step := 1; step < 3; step++ {
		update(t, rtr, seqs, step)
	}
	if !identical(snapshot(whole), snapshot(resumed)) {
		t.Fatal("resumed run differs from the uninterrupted one")
	}
	if rtr.State() != wtr.State() || wtr.State().OptimizerSteps != 6 {
		t.Fatalf("counters: resumed %+v, uninterrupted %+v (want 6 optimizer steps)", rtr.State(), wtr.State())
	}
}

func TestBFloat16TrainsThroughFloat32MasterWeights(t *testing.T) {
	checkLeaks(t)
	m := tinyModel(t, 10, torch.BFloat16)
	s := trainSettings()
	tr := newTrainer(t, TrainerConfig{Group: group("m", s, "a"), Policy: m, Temperature: 1})
	seqs := contrast("a")
	before := responseLogProb(t, m, seqs)
	for step := 0; step < 4; step++ {
		update(t, tr, seqs, step)
	}
	after := responseLogProb(t, m, seqs)
	t.Logf("bf16: log π(positive) %.4f → %.4f, log π(negative) %.4f → %.4f", before[0], after[0], before[1], after[1])
	if !(after[0] > before[0]+0.1) || !(after[1] < before[1]-0.1) {
		t.Fatalf("bf16: positive %.4f → %.4f, negative %.4f → %.4f", before[0], after[0], before[1], after[1])
	}
	s32 := torch.NewScope()
	defer s32.Close()
	st := tr.Optimizer().State(0)
	if st.Master == nil || st.Master.DType() != torch.Float32 || st.ExpAvg.DType() != torch.Float32 {
		t.Fatalf("bf16 parameter state: master %v, exp_avg %v; want float32 master and moments", st.Master, st.ExpAvg)
	}
	// the bf16 weight is the master rounded to bf16
	w, master := m.Parameters()[0].Float32s(), st.Master.ToDType(torch.BFloat16).Float32s()
	for i := range w {
		if w[i] != master[i] {
			t.Fatalf("weight[%d] %g is not the bf16 rounding of its master %g", i, w[i], master[i])
		}
	}
	f := tinyModel(t, 10, torch.Float32)
	ftr := newTrainer(t, TrainerConfig{Group: group("m", s, "a"), Policy: f, Temperature: 1})
	update(t, ftr, seqs, 0)
	if ftr.Optimizer().State(0).Master != nil {
		t.Fatal("a float32 model keeps a master copy")
	}
}

func TestNewTrainerRefusals(t *testing.T) {
	m := tinyModel(t, 11, torch.Float32)
	bad := trainSettings()
	bad.MicroBatchSize = 0
	cases := []struct {
		cfg  TrainerConfig
		want string
	}{
		{TrainerConfig{Group: group("m", bad, "a"), Policy: m}, `model "m": micro_batch_size: must be >= 1`},
		{TrainerConfig{Group: group("m", trainSettings()), Policy: m}, "no agents"},
		{TrainerConfig{Group: group("m", trainSettings(), "a")}, "no policy model"},
		{TrainerConfig{Group: group("m", trainSettings(), "a"), Policy: m, Temperature: -1}, "temperature must be >= 0"},
	}
	for _, c := range cases {
		if _, err := NewTrainer(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
	}
}

func TestUpdateWithoutRowsLeavesTheModel(t *testing.T) {
	checkLeaks(t)
	m := tinyModel(t, 12, torch.Float32)
	tr := newTrainer(t, TrainerConfig{Group: group("m", trainSettings(), "a", "b"), Policy: m, Temperature: 1})
	before := snapshot(m)
	met := update(t, tr, nil, 0)
	if !identical(before, snapshot(m)) || met[MetricKey("a", "rows")] != 0 || met[MetricKey("b", "updates")] != 0 {
		t.Fatalf("an update without rows changed the model or reported work: %v", met)
	}
}

// With one optimizer step per update the old log-probs come from the grad
// forward itself (Update): the weights after the step, the metrics and the
// entropy must be bit for bit those of the separate no-grad pass, for
// packed and padded layouts, with and without an entropy bonus, in float32
// and bf16.
func TestOneStepUpdateEqualsTheOldLogProbPass(t *testing.T) {
	cpulevel.Each(t) // also at the lesser CPU levels
	checkLeaks(t)
	seqs := append(contrast("a"), []Sequence{
		{Agent: "a", Prompt: []int{7, 8}, Response: []int{30, 31, 32, 33, 34}, Advantage: 0.5},
		{Agent: "a", Prompt: []int{9, 9, 9, 9}, Response: []int{40}, Advantage: -0.25},
		{Agent: "a", Prompt: []int{4}, Response: []int{50, 51}, Advantage: 2},
	}...)
	for _, dt := range []torch.DType{torch.Float32, torch.BFloat16} {
		for _, pad := range []bool{false, true} {
			for _, entropy := range []float64{0, 0.01} {
				name := fmt.Sprintf("%v pad=%v entropy=%g", dt, pad, entropy)
				run := func(oldPass bool) ([][]float32, Metrics) {
					m := tinyModel(t, 3, dt)
					s := trainSettings()
					s.MicroBatchSize, s.EntropyCoef = 2, entropy
					tr := newTrainer(t, TrainerConfig{Group: group("m", s, "a"), Policy: m, Temperature: 0.7})
					tr.pad, tr.oldPass = pad, oldPass
					met := update(t, tr, seqs, 0)
					var ws [][]float32
					for _, p := range tr.params {
						scoped(func() { ws = append(ws, p.ToDType(torch.Float32).Float32s()) })
					}
					return ws, met
				}
				fused, fm := run(false)
				separate, sm := run(true)
				for i := range fused {
					for j := range fused[i] {
						if math.Float32bits(fused[i][j]) != math.Float32bits(separate[i][j]) {
							t.Fatalf("%s: parameter %d[%d] %g after the one-step update, %g with the no-grad pass", name, i, j, fused[i][j], separate[i][j])
						}
					}
				}
				for k, v := range sm {
					if math.Float64bits(fm[k]) != math.Float64bits(v) {
						t.Fatalf("%s: metric %s %g, with the no-grad pass %g", name, k, fm[k], v)
					}
				}
			}
		}
	}
}

package policy

// Loss tests against references written out here in scalar float64 Go, one
// token at a time, independently of the tensor code: the per-token formulas
// of algorithms.md §5–6, each aggregation mode as explicit per-token
// weights, and the analytic derivative of every term. Tensors are float64 so
// the tolerance can be 1e-12; gradients are also checked by central finite
// differences of the tensor loss itself.

import (
	"math"
	"testing"
	"troupe/optim"

	"troupe/torch"
)

// lossCase is a (B, T) = (4, 5) micro-batch that visits every branch of the
// clipped loss with ε_low 0.2, ε_high 0.28, dual clip 3.
type lossCase struct {
	logp, old, ref, ent [][]float64
	adv                 []float64
	mask                [][]bool
}

const (
	testClipLow  = 0.2
	testClipHigh = 0.28
	testDual     = 3.0
)

func newLossCase() lossCase {
	// ratios per token; 0 marks a masked-out position (prompt or pad) that
	// holds arbitrary finite values
	ratios := [][]float64{
		{0, 1.5, 0.7, 1.1, 0},     // A > 0: clipped high, below the low bound (unclipped), inside
		{0.5, 4.0, 2.0, 0.9, 1.0}, // A < 0: clipped low, dual clip, above the high bound (unclipped), inside, exactly 1
		{0, 0, 0, 1.3, 0.6},       // A > 0, two tokens: high-clipped, below-low (unclipped)
		{0, 0, 0.95, 0, 0},        // A = 0
	}
	c := lossCase{adv: []float64{1.5, -0.8, 0.5, 0}}
	for b, row := range ratios {
		var lp, old, ref, ent []float64
		var m []bool
		for t, r := range row {
			l := -0.2 - 0.37*float64(b) - 0.21*float64(t) // arbitrary log-probs in (−3, 0)
			lp = append(lp, l)
			ent = append(ent, 0.5+0.1*float64(b*5+t))
			ref = append(ref, l+0.3*math.Sin(float64(b*5+t))) // |ref − logp| < 0.3
			if r == 0 {
				old = append(old, l-0.9) // masked-out: finite garbage
				m = append(m, false)
				continue
			}
			old = append(old, l-math.Log(r))
			m = append(m, true)
		}
		c.logp, c.old, c.ref, c.ent, c.mask = append(c.logp, lp), append(c.old, old), append(c.ref, ref), append(c.ent, ent), append(c.mask, m)
	}
	// two tokens whose k3 estimate leaves [−10, 10]: ref − logp = 3 and −15
	c.ref[0][3] = c.logp[0][3] + 3
	c.ref[1][0] = c.logp[1][0] - 15
	return c
}

// refClipped is the clipped loss of one token and its derivative by log π.
func refClipped(logp, old, a, clipLow, clipHigh, dual float64) (loss, grad float64, low, high, dualOn bool) {
	r := math.Exp(logp - old)
	unclipped, bounded := -a*r, -a*math.Min(math.Max(r, 1-clipLow), 1+clipHigh)
	loss, grad = unclipped, -a*r // d(−A·e^(logp−old))/dlogp
	if bounded > unclipped {
		loss, grad = bounded, 0
		low, high = a < 0, a > 0
	}
	if a < 0 && dual > 0 && loss > -a*dual {
		loss, grad, dualOn = -a*dual, 0, true
	}
	return loss, grad, low, high, dualOn
}

// refKL is one token's KL estimate and its derivative by log π.
func refKL(logp, ref float64, estimator string) (kl, grad float64) {
	if estimator == optim.KLK1 {
		return logp - ref, 1
	}
	d := ref - logp
	kl, grad = math.Exp(d)-d-1, -math.Exp(d)+1
	if kl > 10 || kl < -10 {
		return math.Max(-10, math.Min(10, kl)), 0
	}
	return kl, grad
}

// refWeights is d(aggregate)/d(per-token loss) for each mode.
func refWeights(mask [][]bool, mode string, length int) [][]float64 {
	B := float64(len(mask))
	var total float64
	counts := make([]float64, len(mask))
	for b, row := range mask {
		for _, m := range row {
			if m {
				counts[b]++
				total++
			}
		}
	}
	w := make([][]float64, len(mask))
	for b, row := range mask {
		w[b] = make([]float64, len(row))
		for t, m := range row {
			if !m {
				continue
			}
			switch mode {
			case optim.TokenMean:
				w[b][t] = 1 / total
			case optim.SeqMeanTokenSum:
				w[b][t] = 1 / B
			case optim.SeqMeanTokenMean:
				w[b][t] = 1 / (B * counts[b])
			case optim.SeqMeanTokenSumNorm:
				w[b][t] = 1 / (B * float64(length))
			}
		}
	}
	return w
}

func flat(rows [][]float64) []float64 {
	var out []float64
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}

func tensor2(rows [][]float64) *torch.Tensor {
	return torch.FromFloat64(flat(rows), int64(len(rows)), int64(len(rows[0])))
}

func boolTensor(rows [][]bool) *torch.Tensor {
	var out []bool
	for _, r := range rows {
		out = append(out, r...)
	}
	return torch.FromBool(out, int64(len(rows)), int64(len(rows[0])))
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol*(1+math.Abs(want)) {
		t.Fatalf("%s = %.15g, want %.15g (tol %g)", what, got, want, tol)
	}
}

func nearAll(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.IsNaN(got[i]) || math.Abs(got[i]-want[i]) > tol*(1+math.Abs(want[i])) {
			t.Fatalf("%s[%d] = %.15g, want %.15g (tol %g)", what, i, got[i], want[i], tol)
		}
	}
}

// checkLeaks fails the test if it leaves more live tensors than it found.
func checkLeaks(t *testing.T) {
	t.Helper()
	before := torch.LiveTensors()
	t.Cleanup(func() {
		if after := torch.LiveTensors(); after != before {
			t.Errorf("live tensors: %d before the test, %d after", before, after)
		}
	})
}

func scoped(fn func()) {
	s := torch.NewScope()
	defer s.Close()
	fn()
}

func TestClippedLossHandValues(t *testing.T) {
	checkLeaks(t)
	scoped(func() {
		// A = 1, ρ = 1.5 and 0.7, ε = 0.2: per token max(−1.5, −1.2) = −1.2 and
		// max(−0.7, −0.8) = −0.7; token-mean −0.95.
		logp := torch.FromFloat64([]float64{math.Log(1.5), math.Log(0.7)}, 1, 2)
		old := torch.Zeros([]int64{1, 2}, torch.Float64, torch.CPU)
		adv := torch.FromFloat64([]float64{1}, 1, 1)
		loss, _, _ := ClippedLoss(logp, old, adv, 0.2, 0.2, 3)
		nearAll(t, "per-token", loss.Float64s(), []float64{-1.2, -0.7}, 1e-12)
		mask := torch.Ones([]int64{1, 2}, torch.Bool, torch.CPU)
		near(t, "token-mean", Aggregate(loss, mask, optim.TokenMean, 0).Item(), -0.95, 1e-12)
		// A = −1, ρ = 4: max(4, 1.2) = 4 without dual clip, min(4, 3) = 3 with it.
		logp = torch.FromFloat64([]float64{math.Log(4)}, 1, 1)
		old = torch.Zeros([]int64{1, 1}, torch.Float64, torch.CPU)
		adv = torch.FromFloat64([]float64{-1}, 1, 1)
		on, _, ind := ClippedLoss(logp, old, adv, 0.2, 0.2, 3)
		off, _, _ := ClippedLoss(logp, old, adv, 0.2, 0.2, 0)
		near(t, "dual clip on", on.Item(), 3, 1e-12)
		near(t, "dual clip off", off.Item(), 4, 1e-12)
		if !ind.Dual.Bools()[0] {
			t.Fatal("dual clip indicator not set for A < 0, ρ = 4 > c = 3")
		}
	})
}

func TestClippedLossPerTokenAndIndicators(t *testing.T) {
	checkLeaks(t)
	c := newLossCase()
	scoped(func() {
		adv := torch.FromFloat64(c.adv, int64(len(c.adv)), 1)
		loss, ratio, ind := ClippedLoss(tensor2(c.logp), tensor2(c.old), adv, testClipLow, testClipHigh, testDual)
		got, gotRatio := loss.Float64s(), ratio.Float64s()
		low, high, dual := ind.Low.Bools(), ind.High.Bools(), ind.Dual.Bools()
		T := len(c.logp[0])
		var seen [3]int
		for b := range c.logp {
			for tt := range c.logp[b] {
				i := b*T + tt
				want, _, wl, wh, wd := refClipped(c.logp[b][tt], c.old[b][tt], c.adv[b], testClipLow, testClipHigh, testDual)
				near(t, "loss", got[i], want, 1e-12)
				near(t, "ratio", gotRatio[i], math.Exp(c.logp[b][tt]-c.old[b][tt]), 1e-12)
				if low[i] != wl || high[i] != wh || dual[i] != wd {
					t.Fatalf("token (%d,%d): indicators low/high/dual = %v/%v/%v, want %v/%v/%v", b, tt, low[i], high[i], dual[i], wl, wh, wd)
				}
				if c.mask[b][tt] {
					for k, on := range []bool{wl, wh, wd} {
						if on {
							seen[k]++
						}
					}
				}
			}
		}
		if seen != [3]int{1, 2, 1} { // the case is built to hit each branch
			t.Fatalf("masked tokens clipped low/high/dual: %v, want [1 2 1]", seen)
		}
	})
}

// lossUnderTest evaluates Loss on the case with logp and entropy as leaves
// and returns the loss and both gradients.
func lossUnderTest(c lossCase, s optim.Settings) (loss float64, dLogp, dEntropy []float64) {
	scoped(func() {
		logp := tensor2(c.logp).SetRequiresGrad(true)
		ent := tensor2(c.ent).SetRequiresGrad(true)
		out := Loss(LossInput{
			LogProbs: logp, OldLogProbs: tensor2(c.old), RefLogProbs: tensor2(c.ref), Entropy: ent,
			Advantages: torch.FromFloat64(c.adv, int64(len(c.adv)), 1), Mask: boolTensor(c.mask),
		}, s)
		out.Loss.Backward()
		loss = out.Loss.Item()
		dLogp = logp.Grad().Float64s()
		if g := ent.Grad(); g != nil {
			dEntropy = g.Float64s()
		} else {
			dEntropy = make([]float64, len(dLogp))
		}
	})
	return loss, dLogp, dEntropy
}

// refLoss is the loss and its gradients computed token by token.
func refLoss(c lossCase, s optim.Settings) (loss float64, dLogp, dEntropy []float64) {
	w := refWeights(c.mask, s.LossAgg, s.DrGRPOLength)
	for b := range c.logp {
		for t := range c.logp[b] {
			var pg, g float64
			if s.Loss == optim.LossMAGRPO {
				pg, g = -c.adv[b]*c.logp[b][t], -c.adv[b]
			} else {
				pg, g, _, _, _ = refClipped(c.logp[b][t], c.old[b][t], c.adv[b], s.ClipLow, s.ClipHigh, s.DualClip)
			}
			var kl, klGrad float64
			if s.KLCoef > 0 {
				kl, klGrad = refKL(c.logp[b][t], c.ref[b][t], s.KLEstimator)
			}
			total := pg + s.KLCoef*kl - s.EntropyCoef*c.ent[b][t]
			loss += w[b][t] * total
			dLogp = append(dLogp, w[b][t]*(g+s.KLCoef*klGrad))
			dEntropy = append(dEntropy, -w[b][t]*s.EntropyCoef)
		}
	}
	return loss, dLogp, dEntropy
}

func testSettings(mode string) optim.Settings {
	s := optim.DefaultSettings()
	s.ClipLow, s.ClipHigh, s.DualClip = testClipLow, testClipHigh, testDual
	s.LossAgg = mode
	if mode == optim.SeqMeanTokenSumNorm {
		s.DrGRPOLength = 7
	}
	return s
}

var allModes = []string{optim.TokenMean, optim.SeqMeanTokenSum, optim.SeqMeanTokenMean, optim.SeqMeanTokenSumNorm}

func TestLossEveryAggregationMode(t *testing.T) {
	checkLeaks(t)
	c := newLossCase()
	for _, mode := range allModes {
		s := testSettings(mode)
		got, gLogp, _ := lossUnderTest(c, s)
		want, wLogp, _ := refLoss(c, s)
		near(t, mode+" loss", got, want, 1e-12)
		nearAll(t, mode+" dL/dlogp", gLogp, wLogp, 1e-12)
	}
}

func TestLossModesDiffer(t *testing.T) {
	// the case must tell the modes apart, or the mode test could pass with one formula
	c := newLossCase()
	seen := map[float64]string{}
	for _, mode := range allModes {
		v, _, _ := lossUnderTest(c, testSettings(mode))
		if other, dup := seen[v]; dup {
			t.Fatalf("modes %s and %s give the same loss %g on the test case", other, mode, v)
		}
		seen[v] = mode
	}
}

func TestLossKLAndEntropyTerms(t *testing.T) {
	checkLeaks(t)
	c := newLossCase()
	for _, est := range []string{optim.KLK1, optim.KLK3, optim.KLLowVarKL} {
		for _, mode := range []string{optim.TokenMean, optim.SeqMeanTokenMean} {
			s := testSettings(mode)
			s.KLCoef, s.KLEstimator, s.EntropyCoef = 0.05, est, 0.01
			got, gLogp, gEnt := lossUnderTest(c, s)
			want, wLogp, wEnt := refLoss(c, s)
			what := est + "/" + mode
			near(t, what+" loss", got, want, 1e-12)
			nearAll(t, what+" dL/dlogp", gLogp, wLogp, 1e-12)
			nearAll(t, what+" dL/dentropy", gEnt, wEnt, 1e-12)
		}
	}
}

func TestKLPenaltyValuesAndClamp(t *testing.T) {
	checkLeaks(t)
	scoped(func() {
		// d = ref − logp = 0.5: k3 = e^0.5 − 1.5; d = 3: e³ − 4 = 16.09 → 10; d = −15: 14 → 10
		logp := torch.FromFloat64([]float64{-1, -2, -1}, 1, 3)
		ref := torch.FromFloat64([]float64{-0.5, 1, -16}, 1, 3)
		nearAll(t, "k3", KLPenalty(logp, ref, optim.KLK3).Float64s(), []float64{math.Exp(0.5) - 1.5, 10, 10}, 1e-12)
		nearAll(t, "k1", KLPenalty(logp, ref, optim.KLK1).Float64s(), []float64{-0.5, -3, 15}, 1e-12)
		nearAll(t, "low_var_kl", KLPenalty(logp, ref, optim.KLLowVarKL).Float64s(), []float64{math.Exp(0.5) - 1.5, 10, 10}, 1e-12)
	})
}

func TestMAGRPOLossIsMinusAdvantageTimesLogProbSum(t *testing.T) {
	checkLeaks(t)
	c := newLossCase()
	s := testSettings(optim.SeqMeanTokenSum)
	s.Loss = optim.LossMAGRPO
	got, gLogp, _ := lossUnderTest(c, s)
	// −mean_b A_b · Σ_t log π, written out
	var want float64
	var wantGrad []float64
	B := float64(len(c.logp))
	for b := range c.logp {
		var sum float64
		for t, m := range c.mask[b] {
			g := 0.0
			if m {
				sum += c.logp[b][t]
				g = -c.adv[b] / B
			}
			wantGrad = append(wantGrad, g)
		}
		want -= c.adv[b] * sum / B
	}
	near(t, "magrpo loss", got, want, 1e-12)
	nearAll(t, "magrpo dL/dlogp", gLogp, wantGrad, 1e-12)
	// no ratio: the old log-probs do not matter
	c.old[1][1] += 5
	again, _, _ := lossUnderTest(c, s)
	if again != got {
		t.Fatalf("magrpo loss depends on the old log-probs: %g then %g", got, again)
	}
}

func TestLossGradientByFiniteDifferences(t *testing.T) {
	checkLeaks(t)
	c := newLossCase()
	s := testSettings(optim.SeqMeanTokenMean)
	s.KLCoef, s.KLEstimator, s.EntropyCoef = 0.1, optim.KLK3, 0.02
	_, grad, _ := lossUnderTest(c, s)
	const h = 1e-6
	T := len(c.logp[0])
	for b := range c.logp {
		for tt := range c.logp[b] {
			orig := c.logp[b][tt]
			c.logp[b][tt] = orig + h
			up, _, _ := lossUnderTest(c, s)
			c.logp[b][tt] = orig - h
			down, _, _ := lossUnderTest(c, s)
			c.logp[b][tt] = orig
			fd := (up - down) / (2 * h)
			// kinks (clip bounds, clamp) are at least 1e-3 away from every test point
			if math.Abs(fd-grad[b*T+tt]) > 1e-7 {
				t.Fatalf("dL/dlogp(%d,%d): autograd %.10g, finite difference %.10g", b, tt, grad[b*T+tt], fd)
			}
		}
	}
}

func TestRatioOneMakesClippedEqualUnclipped(t *testing.T) {
	// With old = log π exactly (the first mini-batch of a step) every ratio is
	// exactly 1, so the clipped loss and its gradient are the unclipped ones.
	checkLeaks(t)
	c := newLossCase()
	for b := range c.old {
		copy(c.old[b], c.logp[b])
	}
	for _, mode := range allModes {
		s := testSettings(mode)
		clipped, gClipped, _ := lossUnderTest(c, s)
		scoped(func() {
			logp := tensor2(c.logp).SetRequiresGrad(true)
			ratio := logp.Sub(tensor2(c.old)).Exp()
			unclipped := Aggregate(torch.FromFloat64(c.adv, 4, 1).Neg().Mul(ratio), boolTensor(c.mask), mode, s.DrGRPOLength)
			unclipped.Backward()
			if v := unclipped.Item(); v != clipped {
				t.Fatalf("%s: clipped loss %.17g, unclipped %.17g; at ratio 1 they must be equal", mode, clipped, v)
			}
			nearAll(t, mode+" gradient", gClipped, logp.Grad().Float64s(), 1e-15)
		})
	}
}

func TestAggregateRefusesUnknownMode(t *testing.T) {
	checkLeaks(t)
	scoped(func() {
		x := torch.Zeros([]int64{1, 2}, torch.Float64, torch.CPU)
		m := torch.Ones([]int64{1, 2}, torch.Bool, torch.CPU)
		var err error
		func() {
			defer torch.Recover(&err)
			Aggregate(x, m, "token-sum", 0)
		}()
		if err == nil {
			t.Fatal("Aggregate accepted loss_agg token-sum")
		}
	})
}

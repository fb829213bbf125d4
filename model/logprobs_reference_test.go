package model

// logprobs_reference_test.go — the update's log-prob head (TokenLogProbs:
// the chunked projection of torch/csrc/fused.cc) against transformers: on
// the hf_reference.py fixtures, every next-token log-prob and entropy of
// the padded batch, at temperature 1 and 0.7, in float32 and bfloat16,
// against the same quantities computed here in float64 from transformers'
// float32 logits.
//
// Tolerances: float32, refF32Tol (1e-4, as on the logits) on log-probs and
// entropies. bfloat16: a log-prob z_y/T − lse(z/T) moves by at most twice
// the largest change of a logit divided by T (lse moves by at most the
// largest change), so twice bf16bound_test.go's logit bound over T. The
// bf16 entropies are logged only: rounding alone allows them more than
// their size.

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"troupe/internal/cpulevel"
	"troupe/internal/pyref"
	"troupe/torch"
)

func TestTokenLogProbsMatchTransformers(t *testing.T) {
	root := pyref.HFFixtures(t)
	cpulevel.Each(t, pyref.HFFixturesEnv+"="+root) // bf16 GEMMs differ by level
	dev := refDevice(t)
	for _, dir := range refModelDirs(t, root) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			ref := readRefFile(t, filepath.Join(dir, refFixtureFile))
			seqs := ref.seqs(t, "input_ids", "lengths")
			for _, dt := range []torch.DType{torch.Float32, torch.BFloat16} {
				m := loadRefModel(t, dir, Options{DType: dt, Device: dev})
				V := m.Config.VocabSize
				logits := ref.logits(t, "logits", seqs, V)
				scale := 0.0
				for _, z := range logits {
					scale = math.Max(scale, math.Abs(float64(z)))
				}
				for _, temp := range []float64{1, 0.7} {
					wantLP, wantEnt := refNextTokenLogProbs(logits, seqs, V, temp)
					gotLP, gotEnt := headLogProbs(t, m, seqs, temp)
					dLP, dEnt := maxDiff(gotLP, wantLP), maxDiff(gotEnt, wantEnt)
					tol := refF32Tol
					if dt == torch.BFloat16 {
						b, r := bf16LogitBound(m.Config, scale)
						tol = 2 * b / temp
						t.Logf("%v T=%g: log-probs max |Δ| %.3g (bound %.3g from %d roundings), entropies max |Δ| %.3g (logged only)", dt, temp, dLP, tol, r, dEnt)
						dEnt = 0
					} else {
						t.Logf("%v T=%g: log-probs max |Δ| %.3g, entropies %.3g (tolerance %g)", dt, temp, dLP, dEnt, tol)
					}
					if !(dLP <= tol) || !(dEnt <= tol) {
						t.Errorf("%v on %v at T=%g: log-probs max |Δ| %.3g, entropies %.3g from transformers' (tolerance %.3g)", dt, dev, temp, dLP, dEnt, tol)
					}
				}
			}
		})
	}
}

// refNextTokenLogProbs computes, from transformers' logits at every real
// token (N, V), each position's log-prob of the next token and its entropy,
// at temperature temp, in float64, in the order of seqs' positions that
// have a next token.
func refNextTokenLogProbs(logits []float32, seqs [][]int, V int, temp float64) (lp, ent []float64) {
	off := 0
	for _, s := range seqs {
		for i := 0; i+1 < len(s); i++ {
			row := logits[(off+i)*V : (off+i+1)*V]
			mx := math.Inf(-1)
			for _, z := range row {
				mx = math.Max(mx, float64(z)/temp)
			}
			sum := 0.0
			for _, z := range row {
				sum += math.Exp(float64(z)/temp - mx)
			}
			lse := mx + math.Log(sum)
			h := 0.0
			for _, z := range row {
				q := float64(z)/temp - lse
				h -= math.Exp(q) * q
			}
			lp = append(lp, float64(row[s[i+1]])/temp-lse)
			ent = append(ent, h)
		}
		off += len(s)
	}
	return lp, ent
}

// headLogProbs runs TokenLogProbs over seqs (right-padded, chunks of 5
// positions so that several run) and returns the log-probs and entropies
// at the positions that have a next token, in seqs' order.
func headLogProbs(t *testing.T, m *Model, seqs [][]int, temp float64) (lp, ent []float64) {
	t.Helper()
	s := torch.NewScope()
	defer s.Close()
	in, err := Pack(seqs, PadRight, m.Device())
	if err != nil {
		t.Fatal(err)
	}
	B, T := in.Shape()
	mask := make([]bool, B*T)
	for b, seq := range seqs {
		for i := 0; i+1 < len(seq); i++ {
			mask[int64(b)*T+int64(i)] = true
		}
	}
	dev := m.Device()
	var l, e *torch.Tensor
	torch.NoGrad(func() {
		l, e, err = m.TokenLogProbs(in, ShiftTargets(in), torch.FromBool(mask, B, T).ToDevice(dev), LogProbOptions{Temperature: temp, Entropy: true, Chunk: 5})
	})
	if err != nil {
		t.Fatal(err)
	}
	lps, ents := l.Float64s(), e.Float64s()
	for i, on := range mask {
		if on {
			lp, ent = append(lp, lps[i]), append(ent, ents[i])
		}
	}
	return lp, ent
}

// maxDiff is max |a − b| (+Inf on NaN or a length mismatch).
func maxDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		panic(fmt.Sprintf("%d values against %d", len(a), len(b)))
	}
	d := 0.0
	for i := range a {
		x := math.Abs(a[i] - b[i])
		if math.IsNaN(x) {
			return math.Inf(1)
		}
		d = math.Max(d, x)
	}
	return d
}

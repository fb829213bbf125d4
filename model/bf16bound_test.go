package model

// bf16bound_test.go — how far a bfloat16 forward may land from the float32
// one, derived from bfloat16 arithmetic rather than from a run on some
// machine: the tolerance of every bf16 logits comparison in this package.
//
// bfloat16 keeps 8 significant bits, so rounding to it (to nearest) moves a
// value by at most u = 2⁻⁸ of itself. A bf16 forward rounds each weight
// once (from the float32 checkpoint) and the output of every op; the sums
// inside its GEMMs run in float32 on every device and CPU
// (torch/csrc/nn.cc, attention.cc: TestBFloat16GEMMsSumInFloat32). To first
// order the relative errors of the roundings a value passes through add up
// (a product of R factors 1+δᵢ, |δᵢ| ≤ u, is 1+θ with |θ| ≤ R·u + O(u²);
// Higham, Accuracy and Stability of Numerical Algorithms, §3.1), and
// RMSNorm rescales every token, so a relative error of the hidden state
// stays relative from block to block instead of growing with its size. A
// logit then lies within R·u·S of its float32 value, with S the logits'
// scale (the largest |logit| of the reference) and R the number of
// roundings on the longest chain from the embedding to the logit:
//
//	embedding (weight)                          1
//	per layer, attention branch:
//	  input RMSNorm (cast back, weight, product) 3
//	  q projection (weight, output) [bias add]   2 [+1]
//	  q/k RMSNorm (Qwen3)                        [+3]
//	  RoPE (table, product, sum)                 3
//	  scores (product, × 1/√d)                   2
//	  softmax (cast back)                        1
//	  weights · values                           1
//	  o projection (weight, output) [bias add]   2 [+1]
//	  residual sum                               1
//	per layer, MLP branch:
//	  post RMSNorm                               3
//	  gate projection [bias add]                 2 [+1]
//	  SiLU, times up                             2
//	  down projection [bias add]                 2 [+1]
//	  residual sum                               1
//	final RMSNorm                                3
//	lm head (weight, output)                     2
//
// A plain two-layer model has R = 56 and R·u = 0.22. That is a worst case
// for rounding alone; bf16 runs land well inside it: troupe's at 1.2–2.7%
// of the largest logit on every fixture and at every CPU level (AVX-512,
// AVX2, the baseline), transformers' own at 1.2–2.3%, and 13% on the one
// fixture with 300 positions, where it rounds its rotary frequencies to
// bf16 with the model. The bound holds on any CPU because it counts
// roundings, not kernels. It catches an error in how the model computes —
// a norm, RoPE or mask that is wrong moves logits by their own size
// (TestBFloat16BoundCatchesWrongNormAndRoPE below) — while the float32
// comparisons (1e-4) catch formula errors far smaller. What it cannot
// catch is a GEMM summed in bf16 (K roundings instead of one: 1.7× the
// error on these models); torch's TestBFloat16GEMMsSumInFloat32 checks
// that exactly.

import (
	"path/filepath"
	"strings"
	"testing"

	"troupe/torch"
)

const bf16UnitRoundoff = 0x1p-8

// bf16Roundings counts the roundings on the longest chain of cfg's bf16
// forward, per the table above.
func bf16Roundings(cfg Config) int {
	bias := func(on bool) int {
		if on {
			return 1
		}
		return 0
	}
	attn := 3 + 2 + bias(cfg.AttentionBias) + 3 + 2 + 1 + 1 + 2 + bias(cfg.outputBias()) + 1
	if cfg.hasQKNorm() {
		attn += 3
	}
	mlp := 3 + 2 + bias(cfg.MLPBias) + 2 + 2 + bias(cfg.MLPBias) + 1
	return 1 + cfg.NumLayers*(attn+mlp) + 3 + 2
}

// bf16LogitBound is the largest |bf16 logit − float32 logit| that bf16
// rounding allows for cfg, logits of scale max |logit| (see the file
// header), and the rounding count it came from.
func bf16LogitBound(cfg Config, scale float64) (float64, int) {
	r := bf16Roundings(cfg)
	return float64(r) * bf16UnitRoundoff * scale, r
}

// TestBFloat16BoundCatchesWrongNormAndRoPE shows that the bound is not
// vacuous: on the committed reference.py fixtures (testdata/model), a
// bfloat16 model within it fails it once its norms lose their weights (as a
// norm that forgot the scale would compute) or once RoPE turns the other
// way (the sine's sign flipped, which negating every position does).
func TestBFloat16BoundCatchesWrongNormAndRoPE(t *testing.T) {
	for _, dir := range refModelDirs(t, refFixtureRoot) {
		ref := readRefFile(t, filepath.Join(dir, refFixtureFile))
		seqs := ref.seqs(t, "input_ids", "lengths")
		m := loadRefModel(t, dir, Options{DType: torch.BFloat16, Device: torch.CPU})
		V := m.Config.VocabSize
		want := ref.logits(t, "logits", seqs, V)
		check := func(name string, edit func(*Input), fits bool) {
			d := compareLogits(realTokenLogitsOf(t, m, seqs, PadRight, edit), want, seqs, V)
			tol, r := bf16LogitBound(m.Config, d.scale)
			switch {
			case fits && !(d.maxAbs <= tol):
				t.Errorf("%s %s: %v exceeds the bound %.3g (%d roundings)", filepath.Base(dir), name, d, tol, r)
			case !fits && d.maxAbs <= tol:
				t.Errorf("%s %s: %v within the bound %.3g (%d roundings): the bound cannot tell this break apart", filepath.Base(dir), name, d, tol, r)
			default:
				t.Logf("%s %s: %v (bound %.3g, %d roundings)", filepath.Base(dir), name, d, tol, r)
			}
		}
		check("as is", nil, true)
		check("RoPE turning the other way", func(in *Input) { in.Positions = in.Positions.Neg() }, false)
		torch.NoGrad(func() { // m is this iteration's own
			for _, p := range m.Params() {
				if strings.HasSuffix(p.Name, "norm.weight") {
					scoped(func() { p.T.CopyFrom(torch.Ones(p.T.Shape(), p.T.DType(), p.T.Device())) })
				}
			}
		})
		check("norms without their weights", nil, false)
	}
}

package policy

// transformers_test.go — one update step against transformers: the tiny
// random Qwen2, Qwen2.5, Qwen3 and Llama 3.2 (llama3 rope scaling, MLP
// biases) models of scripts/gpu/hf_reference.py
// (written at test time by the Python reference environment, internal/pyref,
// or read from TROUPE_HF_FIXTURES), each with a batch of four prompt +
// response rows, fixed advantages and fixed old log-probs. transformers'
// model computes the per-token log-probs, the clipped surrogate written in
// PyTorch (the formula, not this package's code) and its gradients; troupe
// loads the same weights and computes them with Batch.LogProbs, Loss and
// Backward, in the padded and the packed layout.
//
// Tolerances, float32: log-probs and the loss within 1e-5 absolute (the
// log-probs are about −5, so ~2e-6 relative; measured differences are
// ~1e-6); every parameter's gradient within 1e-4 of its largest entry (the
// float32 sums run in a different order; measured ≤ 9e-6). A gradient that
// skips a norm gain, a bias or a clip branch is off by O(1) of the largest
// entry.

import (
	"math"
	"path/filepath"
	"testing"

	"troupe/internal/pyref"
	"troupe/model"
	"troupe/optim"
	"troupe/torch"
)

const (
	hfLogProbTol = 1e-5 // absolute, log-probs and loss
	hfGradRelTol = 1e-4 // × max |reference grad| of each parameter
)

func TestTrainStepMatchesTransformers(t *testing.T) {
	root := pyref.HFFixtures(t)
	files, err := filepath.Glob(filepath.Join(root, "*", "reference.safetensors"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no */reference.safetensors under %s (%v)", root, err)
	}
	for _, f := range files {
		dir := filepath.Dir(f)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			ref, err := pyref.ReadTensors(f)
			if err != nil {
				t.Fatal(err)
			}
			if ref.Floats["train_loss"] == nil {
				t.Fatalf("%s has no train_ tensors: regenerate it with hf_reference.py fixtures", f)
			}
			m, err := model.Load(dir, model.Options{DType: torch.Float32, Device: torch.CPU})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Free()
			m.SetRequiresGrad(true)
			set := optim.DefaultSettings()
			set.LossAgg, set.ClipLow, set.ClipHigh, set.DualClip = optim.TokenMean, 0.2, 0.28, 3
			for _, meta := range []struct{ key, want string }{{"train_clip_low", "0.2"}, {"train_clip_high", "0.28"}, {"train_dual_clip", "3.0"}} {
				if got := ref.Meta[meta.key]; got != meta.want {
					t.Fatalf("fixture %s = %q, this test sets %s", meta.key, got, meta.want)
				}
			}
			rows := hfTrainRows(t, ref)
			for _, layout := range []struct {
				name  string
				build func([]Sequence, torch.Device) (Batch, error)
			}{{"padded", Pad}, {"packed", Pack}} {
				checkTrainStep(t, layout.name, m, rows, layout.build, set, ref)
			}
		})
	}
}

// hfTrainRows cuts the fixture's train_ids into prompt and response rows
// with their advantages.
func hfTrainRows(t *testing.T, ref *pyref.Tensors) []Sequence {
	t.Helper()
	ids, shape := ref.Ints["train_ids"], ref.Shapes["train_ids"]
	lengths, prompts, adv := ref.Ints["train_lengths"], ref.Ints["train_prompt_lengths"], ref.Floats["train_advantages"]
	if len(shape) != 2 || len(lengths) != int(shape[0]) || len(prompts) != len(lengths) || len(adv) != len(lengths) {
		t.Fatalf("%s: train_ids %v, %d lengths, %d prompt lengths, %d advantages", ref.Path, shape, len(lengths), len(prompts), len(adv))
	}
	rows := make([]Sequence, len(lengths))
	for b := range rows {
		row := ids[int64(b)*shape[1] : int64(b)*shape[1]+lengths[b]]
		rows[b] = Sequence{Agent: "a", Advantage: float64(adv[b])}
		for i, id := range row {
			if int64(i) < prompts[b] {
				rows[b].Prompt = append(rows[b].Prompt, int(id))
			} else {
				rows[b].Response = append(rows[b].Response, int(id))
			}
		}
	}
	return rows
}

// checkTrainStep runs the log-probs, the loss and its backward in one layout
// and compares each with the fixture.
func checkTrainStep(t *testing.T, layout string, m *model.Model, rows []Sequence,
	build func([]Sequence, torch.Device) (Batch, error), set optim.Settings, ref *pyref.Tensors) {
	t.Helper()
	s := torch.NewScope()
	defer s.Close()
	b, err := build(rows, torch.CPU)
	if err != nil {
		t.Fatal(err)
	}
	lp, _, err := b.LogProbs(m, model.LogProbOptions{})
	if err != nil {
		t.Fatal(err)
	}
	shape := lp.Shape()
	want := ref.Floats["train_logprobs"]
	if ws := ref.Shapes["train_logprobs"]; len(ws) != 2 || ws[0] != shape[0] || ws[1] != shape[1] {
		t.Fatalf("%s: log-probs (B, T) = %v, fixture %v", layout, shape, ws)
	}
	if d, at := maxAbsDiff(lp.Float32s(), want); !(d <= hfLogProbTol) {
		t.Errorf("%s: per-token log-probs differ from transformers' by %.3g at (%d, %d) (tolerance %g)", layout, d, at/int(shape[1]), at%int(shape[1]), hfLogProbTol)
	} else {
		t.Logf("%s: per-token log-probs within %.2g of transformers'", layout, d)
	}
	old := torch.FromFloat32(ref.Floats["train_old_logprobs"], shape...)
	out := Loss(LossInput{LogProbs: lp, OldLogProbs: old, Advantages: b.Advantages, Mask: b.Mask}, set)
	out.Loss.Backward()
	loss, wantLoss := out.Loss.Item(), float64(ref.Floats["train_loss"][0])
	if d := math.Abs(loss - wantLoss); !(d <= hfLogProbTol) {
		t.Errorf("%s: loss %.7g, transformers + PyTorch %.7g (|Δ| %.3g > %g)", layout, loss, wantLoss, d, hfLogProbTol)
	}
	var worst float64
	var worstName string
	seen := 0
	for _, p := range m.Params() {
		g := p.T.Grad()
		wantGrad, ok := ref.Floats["grad."+p.Name]
		if !ok {
			t.Errorf("%s: troupe's parameter %s has no grad in the fixture", layout, p.Name)
			continue
		}
		seen++
		if g == nil {
			t.Errorf("%s: %s got no gradient", layout, p.Name)
			continue
		}
		d, _ := maxAbsDiff(g.Float32s(), wantGrad)
		rel := d / maxAbs(wantGrad)
		if !(rel <= hfGradRelTol) {
			t.Errorf("%s: grad of %s differs by %.3g of its largest entry %.3g (tolerance %g)", layout, p.Name, rel, maxAbs(wantGrad), hfGradRelTol)
		}
		if rel > worst || math.IsNaN(rel) {
			worst, worstName = rel, p.Name
		}
		p.T.ZeroGrad()
	}
	if n := countGrads(ref); seen != n {
		t.Errorf("%s: troupe has %d of the fixture's %d parameter grads", layout, seen, n)
	}
	t.Logf("%s: loss %.6f (transformers %.6f); %d parameter grads, worst %.2g of its largest entry (%s); %s clipped tokens",
		layout, loss, wantLoss, seen, worst, worstName, ref.Meta["train_clipped_tokens"])
}

// maxAbsDiff is max |got − want| and its index (+Inf on NaN or a length
// mismatch).
func maxAbsDiff(got, want []float32) (float64, int) {
	if len(got) != len(want) {
		return math.Inf(1), -1
	}
	var d float64
	at := 0
	for i := range got {
		x := math.Abs(float64(got[i]) - float64(want[i]))
		if math.IsNaN(x) {
			return math.Inf(1), i
		}
		if x > d {
			d, at = x, i
		}
	}
	return d, at
}

func maxAbs(v []float32) float64 {
	var m float64
	for _, x := range v {
		m = math.Max(m, math.Abs(float64(x)))
	}
	return m
}

func countGrads(ref *pyref.Tensors) int {
	n := 0
	for name := range ref.Floats {
		if len(name) > 5 && name[:5] == "grad." {
			n++
		}
	}
	return n
}

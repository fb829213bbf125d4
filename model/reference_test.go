package model

// reference_test.go — troupe's Qwen2/Qwen3 forward against references that
// share no code with it.
//
//  1. Always, on the CPU (and on CUDA too when TROUPE_CUDA=1): the tiny
//     models in testdata/model/<name>/ (written by
//     `go run ./scripts/model/gentiny`) and the logits that
//     scripts/model/reference.py — plain PyTorch written from the Hugging
//     Face definitions — computed for them (reference.safetensors beside
//     each model). float32 within 1e-4 absolute, bfloat16 within the bound
//     bf16 rounding allows (bf16bound_test.go), with right and left padding
//     (right padding alone would not notice a mask that ignores padding:
//     causal attention never reaches the pads after a sequence).
//  2. transformers itself: scripts/gpu/hf_reference.py writes tiny random
//     Qwen2, Qwen2.5 and Qwen3 models and their outputs into a temp dir
//     with the Python reference environment (internal/pyref; skipped where
//     it is not installed), or TROUPE_HF_FIXTURES=<dir> names fixtures
//     written earlier (on a GPU machine): logits (float32 ≤ 1e-4, bfloat16
//     within bf16bound_test.go's bound) and greedy generations token for
//     token, through Generate (left padding and the KV cache); on CUDA when
//     TROUPE_CUDA=1, else on the CPU. policy's
//     TestTrainStepMatchesTransformers reads the same fixtures' log-probs,
//     loss and gradients.
//
// What neither can see: a shift of every RoPE position by one constant,
// which leaves the attention scores unchanged (they depend on position
// differences only) and so is harmless; positions that disagree between
// prefill and cached decode are caught by TestKVCacheMatchesFullForward and
// by the greedy comparison in 2.
//
// What it is not: a test of the reference scripts (reference.py checks
// itself against float64 and unpadded runs before writing).
//
// Tolerances. float32: reference.py's float32 and float64 runs differ by
// ≤ 3e-6 on these models, whose logits reach ±3; 1e-4 leaves room for a
// different summation order (oneDNN, cuBLAS, fused attention) and is still
// ~1/30000 of the logit range — one weight off by 1% already breaks it (see
// TestPyTorchReferenceCatchesSmallErrors). bfloat16: R·u of the largest
// |logit|, u = 2⁻⁸ and R the roundings on the model's longest chain
// (bf16bound_test.go derives it; 0.22 for a plain two-layer model), the
// same on every CPU; TestBFloat16BoundCatchesWrongNormAndRoPE shows a wrong
// norm or RoPE exceeding it. reference.py's and transformers' own bf16 runs
// land 1–3% of the largest |logit| from their float32 runs (each fixture's
// metadata and the test log say how far), troupe's likewise.

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/internal/cpulevel"
	"troupe/internal/pyref"
	"troupe/torch"
)

const (
	refF32Tol         = 1e-4 // absolute, on logits
	refFixtureRoot    = "../testdata/model"
	refFixtureFile    = "reference.safetensors"
	refCUDAEnv        = "TROUPE_CUDA"
	refPerturbedDelta = 0.01
)

// refFile is a reference.safetensors: float tensors as float32, integer
// tensors as int64, each with its shape, and the string metadata.
type refFile struct {
	path   string
	floats map[string][]float32
	ints   map[string][]int64
	shapes map[string][]int64
	meta   map[string]string
}

func readRefFile(t *testing.T, path string) *refFile {
	t.Helper()
	x, err := pyref.ReadTensors(path)
	if err != nil {
		t.Fatal(err)
	}
	return &refFile{path: x.Path, floats: x.Floats, ints: x.Ints, shapes: x.Shapes, meta: x.Meta}
}

// seqs cuts the padded (B, T) id tensor idsKey into rows of lenKey's lengths.
func (r *refFile) seqs(t *testing.T, idsKey, lenKey string) [][]int {
	t.Helper()
	ids, lens, shape := r.ints[idsKey], r.ints[lenKey], r.shapes[idsKey]
	if ids == nil || lens == nil || len(shape) != 2 || int64(len(lens)) != shape[0] {
		t.Fatalf("%s: needs int64 tensors %s (B, T) and %s (B); has %v", r.path, idsKey, lenKey, r.shapes)
	}
	out := make([][]int, len(lens))
	for b, n := range lens {
		for _, id := range ids[int64(b)*shape[1] : int64(b)*shape[1]+n] {
			out[b] = append(out[b], int(id))
		}
	}
	return out
}

// logits returns the float tensor key, checked to be (N, V) with N the
// number of real tokens in seqs.
func (r *refFile) logits(t *testing.T, key string, seqs [][]int, vocab int) []float32 {
	t.Helper()
	n := 0
	for _, s := range seqs {
		n += len(s)
	}
	v, shape := r.floats[key], r.shapes[key]
	if v == nil || len(shape) != 2 || shape[0] != int64(n) || shape[1] != int64(vocab) {
		t.Fatalf("%s: tensor %s has shape %v, want (%d real tokens, vocab %d)", r.path, key, shape, n, vocab)
	}
	return v
}

// realTokenLogits runs m over seqs packed with pad and returns the logits
// at the real tokens, row by row: (N, V) as in the fixtures.
func realTokenLogits(t *testing.T, m *Model, seqs [][]int, pad Padding) []float32 {
	t.Helper()
	return realTokenLogitsOf(t, m, seqs, pad, nil)
}

// realTokenLogitsOf is realTokenLogits with edit, when not nil, applied to
// the packed input first (a test's deliberate break).
func realTokenLogitsOf(t *testing.T, m *Model, seqs [][]int, pad Padding, edit func(*Input)) []float32 {
	t.Helper()
	s := torch.NewScope()
	defer s.Close()
	in, err := Pack(seqs, pad, m.Device())
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&in)
	}
	lg, err := m.Logits(in)
	if err != nil {
		t.Fatal(err)
	}
	all := lg.Float32s() // (B, T, V)
	_, T := in.Shape()
	V := m.Config.VocabSize
	var out []float32
	for b, seq := range seqs {
		first := 0
		if pad == PadLeft {
			first = int(T) - len(seq)
		}
		row := all[b*int(T)*V:]
		out = append(out, row[first*V:(first+len(seq))*V]...)
	}
	return out
}

// refDiff summarises got − want over (N, V) logits of seqs.
type refDiff struct {
	maxAbs float64 // max |got − want|
	scale  float64 // max |want|
	where  string  // row, token and vocab id of the largest difference
}

func (d refDiff) rel() float64 { return d.maxAbs / d.scale }

func (d refDiff) String() string {
	return fmt.Sprintf("max |Δ| %.3g (%.2g of max |logit| %.3g) at %s", d.maxAbs, d.rel(), d.scale, d.where)
}

func compareLogits(got, want []float32, seqs [][]int, vocab int) refDiff {
	var d refDiff
	worst := 0
	for i := range want {
		d.scale = math.Max(d.scale, math.Abs(float64(want[i])))
		diff := math.Abs(float64(got[i]) - float64(want[i]))
		if diff > d.maxAbs || math.IsNaN(diff) {
			d.maxAbs, worst = diff, i
			if math.IsNaN(diff) {
				d.maxAbs = math.Inf(1)
			}
		}
	}
	tok, id := worst/vocab, worst%vocab
	for b, s := range seqs {
		if tok < len(s) {
			d.where = fmt.Sprintf("row %d token %d id %d (got %.6g, want %.6g)", b, tok, id, got[worst], want[worst])
			break
		}
		tok -= len(s)
	}
	return d
}

// refModelDirs lists the model folders under root that carry a fixture.
func refModelDirs(t *testing.T, root string) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(root, "*", refFixtureFile))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, m := range matches {
		dirs = append(dirs, filepath.Dir(m))
	}
	if len(dirs) == 0 {
		t.Fatalf("no %s under %s: regenerate with `go run ./scripts/model/gentiny && /usr/bin/python3 scripts/model/reference.py`", refFixtureFile, root)
	}
	return dirs
}

func loadRefModel(t *testing.T, dir string, opt Options) *Model {
	t.Helper()
	m, err := Load(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Free)
	return m
}

func TestForwardMatchesPyTorchReference(t *testing.T) {
	cpulevel.Each(t) // also at the lesser CPU levels
	dirs := refModelDirs(t, refFixtureRoot)
	if len(dirs) < 4 {
		t.Errorf("want the 4 fixture models of scripts/model/gentiny, found %d: %v", len(dirs), dirs)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			ref := readRefFile(t, filepath.Join(dir, refFixtureFile))
			seqs := ref.seqs(t, "input_ids", "lengths")
			type check struct {
				name string
				opt  Options
				pad  Padding
				tol  func(Config, refDiff) float64
			}
			f32Tol := func(Config, refDiff) float64 { return refF32Tol }
			bf16Tol := func(cfg Config, d refDiff) float64 { tol, _ := bf16LogitBound(cfg, d.scale); return tol }
			checks := []check{
				{"cpu/f32/right-padded", Options{DType: torch.Float32, Device: torch.CPU}, PadRight, f32Tol},
				{"cpu/f32/left-padded", Options{DType: torch.Float32, Device: torch.CPU}, PadLeft, f32Tol},
				{"cpu/bf16/right-padded", Options{DType: torch.BFloat16, Device: torch.CPU}, PadRight, bf16Tol},
			}
			if dev := refDevice(t); dev != torch.CPU {
				checks = append(checks,
					check{"cuda/f32/right-padded", Options{DType: torch.Float32, Device: dev}, PadRight, f32Tol},
					check{"cuda/f32/left-padded", Options{DType: torch.Float32, Device: dev}, PadLeft, f32Tol},
					check{"cuda/bf16/left-padded", Options{DType: torch.BFloat16, Device: dev}, PadLeft, bf16Tol})
			}
			for _, c := range checks {
				m := loadRefModel(t, dir, c.opt)
				want := ref.logits(t, "logits", seqs, m.Config.VocabSize)
				d := compareLogits(realTokenLogits(t, m, seqs, c.pad), want, seqs, m.Config.VocabSize)
				if tol := c.tol(m.Config, d); !(d.maxAbs <= tol) {
					t.Errorf("%s: %v exceeds the tolerance %.3g", c.name, d, tol)
				} else {
					t.Logf("%s: %v (tolerance %.3g; reference.py's own bf16 spread %s)", c.name, d, tol, ref.meta["bf16_vs_f32_max_abs"])
				}
			}
		})
	}
}

// TestPyTorchReferenceCatchesSmallErrors shows the comparison can fail: one
// weight changed by 1% (an RMSNorm gain, which multiplies one hidden channel
// of every token) must move the logits past the float32 tolerance.
func TestPyTorchReferenceCatchesSmallErrors(t *testing.T) {
	for _, c := range []struct{ model, param string }{
		{"qwen2-tiny", "model.layers.1.input_layernorm.weight"},
		{"qwen3-tiny", "model.layers.0.self_attn.k_norm.weight"},
	} {
		dir := filepath.Join(refFixtureRoot, c.model)
		ref := readRefFile(t, filepath.Join(dir, refFixtureFile))
		seqs := ref.seqs(t, "input_ids", "lengths")
		m := loadRefModel(t, dir, Options{DType: torch.Float32, Device: torch.CPU})
		found := false
		for _, p := range m.Params() {
			if p.Name != c.param {
				continue
			}
			found = true
			w := p.T.Float32s()
			w[0] *= 1 + refPerturbedDelta
			s := torch.NewScope()
			p.T.CopyFrom(torch.FromFloat32(w, p.T.Shape()...))
			s.Close()
		}
		if !found {
			t.Fatalf("%s: no parameter %s", c.model, c.param)
		}
		want := ref.logits(t, "logits", seqs, m.Config.VocabSize)
		d := compareLogits(realTokenLogits(t, m, seqs, PadRight), want, seqs, m.Config.VocabSize)
		if d.maxAbs <= refF32Tol {
			t.Errorf("%s with %s[0] × %g: %v, within the tolerance %g: the fixture cannot tell a perturbed model apart",
				c.model, c.param, 1+refPerturbedDelta, d, refF32Tol)
		} else {
			t.Logf("%s with %s[0] × %g: %v (> %g, caught)", c.model, c.param, 1+refPerturbedDelta, d, refF32Tol)
		}
	}
}

// ---- transformers fixtures (scripts/gpu/hf_reference.py) ----

// refDevice is CUDA(0) when TROUPE_CUDA=1 and a GPU is there, else the CPU.
func refDevice(t *testing.T) torch.Device {
	if os.Getenv(refCUDAEnv) != "1" {
		return torch.CPU
	}
	if !torch.CUDAAvailable() {
		t.Fatalf("%s=1 but libtorch sees no CUDA device (is LD_LIBRARY_PATH pointing at a shim built with scripts/gpu/build-shim.sh?)", refCUDAEnv)
	}
	return torch.CUDA(0)
}

// TestForwardMatchesTransformers compares troupe with fixtures written by
// transformers (see scripts/gpu/hf_reference.py for their layout): for each
// model folder, float32 and bfloat16 logits over a padded batch, and greedy
// generations of a batch of prompts.
func TestForwardMatchesTransformers(t *testing.T) {
	root := pyref.HFFixtures(t)
	cpulevel.Each(t, pyref.HFFixturesEnv+"="+root) // also at the lesser CPU levels, on these fixtures
	dev := refDevice(t)
	dirs := refModelDirs(t, root)
	if len(dirs) < 6 {
		t.Errorf("want the 6 models of hf_reference.py fixtures (Qwen2, Qwen2.5, Qwen3; tied and untied), found %d: %v", len(dirs), dirs)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			ref := readRefFile(t, filepath.Join(dir, refFixtureFile))
			seqs := ref.seqs(t, "input_ids", "lengths")
			prompts := ref.seqs(t, "prompt_ids", "prompt_lengths")
			for _, dt := range []torch.DType{torch.Float32, torch.BFloat16} {
				m := loadRefModel(t, dir, Options{DType: dt, Device: dev})
				V := m.Config.VocabSize
				want := ref.logits(t, "logits", seqs, V)
				d := compareLogits(realTokenLogits(t, m, seqs, PadRight), want, seqs, V)
				tol, ties := refF32Tol, refF32Tol
				if dt == torch.BFloat16 {
					var r int
					tol, r = bf16LogitBound(m.Config, d.scale)
					ties = 2 * tol // two logits, each off by up to tol, may swap places
					// transformers' own bf16 logits against its float32 ones, for the log
					hf := compareLogits(ref.logits(t, "logits_bf16", seqs, V), want, seqs, V)
					t.Logf("%v: transformers' own bf16 run: %v; the bound: %d roundings", dt, hf, r)
				}
				if !(d.maxAbs <= tol) {
					t.Errorf("%v logits on %v: %v exceeds the tolerance %.3g", dt, dev, d, tol)
				} else {
					t.Logf("%v logits on %v: %v (tolerance %.3g)", dt, dev, d, tol)
				}
				checkGreedy(t, m, ref, prompts, dt, ties)
			}
		})
	}
}

// checkGreedy generates greedily from prompts (one batch, left-padded
// inside Generate) and compares with transformers' greedy tokens, generated
// one prompt at a time in float32. Tokens must match one for one, except that
// a row may part ways where transformers' top two logits were within tol of
// each other (a near tie that the dtype cannot resolve: in bf16, twice the
// logit bound, which admits most partings of these small random models, so
// the float32 run is the strict one); the rest of that row is then not
// compared. In float32 such ties (< 1e-4) are not expected and are
// reported.
func checkGreedy(t *testing.T, m *Model, ref *refFile, prompts [][]int, dt torch.DType, tol float64) {
	t.Helper()
	want, shape := ref.ints["greedy_tokens"], ref.shapes["greedy_tokens"]
	margins := ref.floats["greedy_margins"]
	if want == nil || margins == nil || len(shape) != 2 || shape[0] != int64(len(prompts)) {
		t.Fatalf("%s: needs greedy_tokens and greedy_margins (%d prompts, N); has %v", ref.path, len(prompts), ref.shapes)
	}
	N := int(shape[1])
	reqs := make([]GenRequest, len(prompts))
	for i, p := range prompts {
		reqs[i] = GenRequest{Prompt: p, MaxNewTokens: N, Sampling: Sampling{Temperature: 0}}
	}
	got, err := m.Generate(reqs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	exact, ties := 0, []string{}
	for i, r := range got {
		row := want[i*N : (i+1)*N]
		if len(r.Tokens) != N {
			t.Errorf("%v greedy row %d: %d tokens, want %d (finish %v)", dt, i, len(r.Tokens), N, r.Finish)
			continue
		}
		k := 0
		for k < N && int64(r.Tokens[k]) == row[k] {
			k++
		}
		switch {
		case k == N:
			exact++
		case float64(margins[i*N+k]) < tol:
			ties = append(ties, fmt.Sprintf("row %d step %d (margin %.2g)", i, k, margins[i*N+k]))
		default:
			t.Errorf("%v greedy row %d parts from transformers at step %d: got %v, want %v (transformers' top-2 margin there %.3g ≥ %.3g)",
				dt, i, k, r.Tokens, row, margins[i*N+k], tol)
		}
	}
	if len(ties) == 0 {
		ties = []string{"none"}
	}
	t.Logf("%v greedy: %d/%d rows identical over %d tokens; near-tie partings: %s", dt, exact, len(prompts), N, strings.Join(ties, ", "))
}

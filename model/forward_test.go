package model

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/internal/cpulevel"
	"troupe/safetensors"
	"troupe/torch"
)

var families = []Family{Qwen2, Qwen3, Llama, Mistral}

// Decoding with the KV cache, step by step over a left-padded batch, gives
// the logits of a full forward over each whole sequence.
func TestKVCacheMatchesFullForward(t *testing.T) {
	noLeaks(t)
	for _, f := range families {
		t.Run(string(f), func(t *testing.T) {
			m := newTiny(t, f, 3, cpu32)
			seqs := [][]int{{5, 9, 2, 33, 17, 8, 40, 41}, {7, 1, 60, 12, 3}, {22, 23, 24, 25, 26, 27, 28}}
			prompt := []int{4, 2, 5}
			V := int64(m.Config.VocabSize)
			full := make([][]float32, len(seqs))
			for i, s := range seqs {
				full[i] = rowLogits(t, m, s)
			}
			cache, err := m.NewCache(len(seqs), 16)
			if err != nil {
				t.Fatal(err)
			}
			defer cache.Free()
			cache.reset()
			torch.NoGrad(func() {
				scoped(func() {
					prompts := make([][]int, len(seqs))
					for i, s := range seqs {
						prompts[i] = s[:prompt[i]]
					}
					in, _ := Pack(prompts, PadLeft, torch.CPU)
					B, P := in.Shape()
					cache.valid.Narrow(1, 0, P).CopyFrom(in.Valid)
					h := m.hidden(in.IDs, in.Positions, cache.valid.Narrow(1, 0, P), cache, route{})
					lg := torch.Linear(h, m.LMHead, nil).Float32s() // (B,P,V)
					for b := int64(0); b < B; b++ {
						// the last prompt position of row b sits in the last column
						got := lg[(b*P+P-1)*V : (b*P+P)*V]
						want := full[b][int64(prompt[b]-1)*V : int64(prompt[b])*V]
						if e := relErr(got, want); e > 1e-4 {
							t.Fatalf("prefill row %d: rel err %g", b, e)
						}
					}
					// decode the rest one token at a time (rows run out at different steps: feed
					// a pad token and ignore them afterwards)
					for step := 0; step < 5; step++ {
						ids := make([]int64, B)
						pos := make([]int64, B)
						for b := range seqs {
							p := prompt[b] + step
							if p < len(seqs[b]) {
								ids[b] = int64(seqs[b][p])
							}
							pos[b] = int64(p)
						}
						slot := cache.Len()
						cache.valid.Narrow(1, slot, 1).Fill(1)
						h := m.hidden(torch.FromInt64(ids, B, 1), torch.FromInt64(pos, B, 1), cache.valid.Narrow(1, 0, slot+1), cache, route{})
						lg := torch.Linear(h, m.LMHead, nil).Float32s() // (B,1,V)
						for b := range seqs {
							p := prompt[b] + step
							if p >= len(seqs[b]) {
								continue
							}
							got := lg[int64(b)*V : int64(b+1)*V]
							want := full[b][int64(p)*V : int64(p+1)*V]
							if e := relErr(got, want); e > 1e-4 {
								t.Fatalf("decode step %d row %d: rel err %g", step, b, e)
							}
						}
					}
				})
			})
		})
	}
}

// A sequence's log-probs are the same alone and inside a padded batch, with
// left or right padding.
func TestPaddingInvariance(t *testing.T) {
	noLeaks(t)
	for _, f := range families {
		t.Run(string(f), func(t *testing.T) {
			m := newTiny(t, f, 4, cpu32)
			seqs := [][]int{{1, 2, 3, 4, 5, 6, 7, 8, 9}, {10, 11, 12}, {13, 14, 15, 16, 17}}
			logps := func(batch [][]int, side Padding) [][]float32 {
				var out [][]float32
				scoped(func() {
					in, err := Pack(batch, side, torch.CPU)
					if err != nil {
						t.Fatal(err)
					}
					targets := ShiftTargets(in)
					// score every real token that has a successor
					mask := in.Valid.LogicalAnd(torch.Cat([]*torch.Tensor{in.Valid.Narrow(1, 1, in.Valid.Size(1)-1), torch.Zeros([]int64{in.Valid.Size(0), 1}, torch.Bool, torch.CPU)}, 1))
					lp, _, err := m.TokenLogProbs(in, targets, mask, LogProbOptions{Chunk: 7})
					if err != nil {
						t.Fatal(err)
					}
					all := lp.Float32s()
					_, T := in.Shape()
					for b, s := range batch {
						off := 0
						if side == PadLeft {
							off = int(T) - len(s)
						}
						out = append(out, all[int64(b)*T+int64(off):int64(b)*T+int64(off+len(s)-1)])
					}
				})
				return out
			}
			for i, s := range seqs {
				alone := logps([][]int{s}, PadRight)[0]
				for _, side := range []Padding{PadRight, PadLeft} {
					batched := logps(seqs, side)[i]
					if e := maxAbs(batched, alone); e > 1e-5 {
						t.Fatalf("sequence %d, padding %d: max abs diff %g", i, side, e)
					}
				}
				// and against log_softmax of the plain logits
				full := rowLogits(t, m, s)
				V := m.Config.VocabSize
				for p := 0; p < len(s)-1; p++ {
					row := full[p*V : (p+1)*V]
					mx := float32(math.Inf(-1))
					for _, v := range row {
						mx = max(mx, v)
					}
					z := 0.0
					for _, v := range row {
						z += math.Exp(float64(v - mx))
					}
					want := float64(row[s[p+1]]-mx) - math.Log(z)
					if math.Abs(float64(alone[p])-want) > 1e-5 {
						t.Fatalf("log-prob at %d: %g, want %g", p, alone[p], want)
					}
				}
			}
		})
	}
}

// Temperature and entropy in TokenLogProbs against values computed here.
func TestTokenLogProbsTemperatureEntropy(t *testing.T) {
	noLeaks(t)
	m := newTiny(t, Qwen3, 5, cpu32)
	seq := []int{3, 1, 4, 1, 5, 9}
	full := rowLogits(t, m, seq)
	V := m.Config.VocabSize
	scoped(func() {
		in, _ := Pack([][]int{seq}, PadRight, torch.CPU)
		mask := torch.FromBool([]bool{false, false, true, true, true, false}, 1, 6)
		lp, ent, err := m.TokenLogProbs(in, ShiftTargets(in), mask, LogProbOptions{Temperature: 0.7, Entropy: true})
		if err != nil {
			t.Fatal(err)
		}
		gotLP, gotEnt := lp.Float32s(), ent.Float32s()
		for p := 0; p < 6; p++ {
			if p < 2 || p == 5 {
				if gotLP[p] != 0 || gotEnt[p] != 0 {
					t.Fatalf("masked position %d must be 0", p)
				}
				continue
			}
			row := full[p*V : (p+1)*V]
			z, mx := 0.0, math.Inf(-1)
			for _, v := range row {
				mx = math.Max(mx, float64(v)/0.7)
			}
			for _, v := range row {
				z += math.Exp(float64(v)/0.7 - mx)
			}
			lse := mx + math.Log(z)
			h := 0.0
			for _, v := range row {
				q := float64(v)/0.7 - lse
				h -= math.Exp(q) * q
			}
			if math.Abs(float64(gotLP[p])-(float64(row[seq[p+1]])/0.7-lse)) > 1e-5 || math.Abs(float64(gotEnt[p])-h) > 1e-5 {
				t.Fatalf("position %d: logp %g entropy %g", p, gotLP[p], gotEnt[p])
			}
		}
	})
}

// Gradients reach every weight.
func TestGradientsReachEveryParameter(t *testing.T) {
	noLeaks(t)
	for _, f := range families {
		for _, tied := range []bool{false, true} {
			cfg := tinyConfig(f)
			cfg.TieEmbeddings = tied
			m, err := New(cfg, 6, cpu32)
			if err != nil {
				t.Fatal(err)
			}
			m.SetRequiresGrad(true)
			scoped(func() {
				in, _ := Pack([][]int{{1, 2, 3, 4}, {5, 6, 7}}, PadRight, torch.CPU)
				lp, ent, err := m.TokenLogProbs(in, ShiftTargets(in), in.Valid, LogProbOptions{Entropy: true})
				if err != nil {
					t.Fatal(err)
				}
				lp.Sum().Add(ent.Sum()).Backward()
				for _, p := range m.Params() {
					g := p.T.Grad()
					if g == nil {
						t.Fatalf("%s tied=%v: %s has no grad", f, tied, p.Name)
					}
					if g.Abs().Sum().Item() == 0 {
						t.Fatalf("%s tied=%v: %s has an all-zero grad", f, tied, p.Name)
					}
				}
			})
			m.Free()
		}
	}
}

// bf16 weights and compute agree with f32 within what bf16 rounding allows
// (bf16bound_test.go), and are not the f32 model in disguise.
func TestBFloat16ForwardAgrees(t *testing.T) {
	cpulevel.Each(t) // also at the lesser CPU levels
	noLeaks(t)
	for _, f := range families {
		m32 := newTiny(t, f, 7, cpu32)
		m16 := newTiny(t, f, 7, Options{DType: torch.BFloat16, Device: torch.CPU})
		if m16.Embed.DType() != torch.BFloat16 {
			t.Fatal("bf16 model has f32 weights")
		}
		seq := []int{8, 6, 7, 5, 3, 0, 9}
		a, b := rowLogits(t, m32, seq), rowLogits(t, m16, seq)
		scale := maxAbs(a, make([]float32, len(a)))
		tol, r := bf16LogitBound(m16.Config, scale)
		if e := maxAbs(b, a); e > tol || e == 0 {
			t.Fatalf("%s: bf16 vs f32 logits max |Δ| %.3g (want 0 < |Δ| ≤ %.3g: %d roundings of 2⁻⁸ × max |logit| %.3g)", f, e, tol, r, scale)
		} else {
			t.Logf("%s: bf16 vs f32 logits max |Δ| %.3g (%.2g of max |logit| %.3g; bound %.3g)", f, e, e/scale, scale, tol)
		}
	}
}

func TestSaveLoadRoundTripAndSharding(t *testing.T) {
	noLeaks(t)
	for _, f := range families {
		m := newTiny(t, f, 8, cpu32)
		seq := []int{1, 22, 3, 44, 5}
		want := rowLogits(t, m, seq)
		for _, shard := range []int64{0, 20_000} {
			dir := t.TempDir()
			if err := m.Save(dir, m.DType(), shard); err != nil {
				t.Fatal(err)
			}
			_, indexErr := os.Stat(filepath.Join(dir, "model.safetensors.index.json"))
			if (shard > 0) != (indexErr == nil) {
				t.Fatalf("shard limit %d: index present = %v", shard, indexErr == nil)
			}
			back, err := Load(dir, cpu32)
			if err != nil {
				t.Fatal(err)
			}
			// The round trip is exact in the weights. The logits are held to
			// a tight tolerance rather than bit equality: a BLAS may pick a
			// different kernel for a buffer at another alignment, and the
			// loaded weights live in fresh buffers.
			wantParams, gotParams := m.Params(), back.Params()
			if len(gotParams) != len(wantParams) {
				t.Fatalf("%s shard %d: %d weights after load, want %d", f, shard, len(gotParams), len(wantParams))
			}
			for i, p := range wantParams {
				q := gotParams[i]
				if q.Name != p.Name || !bytes.Equal(q.T.Bytes(), p.T.Bytes()) {
					t.Fatalf("%s shard %d: weight %s differs after save/load (got %s)", f, shard, p.Name, q.Name)
				}
			}
			if e := relErr(rowLogits(t, back, seq), want); e > 1e-6 {
				t.Fatalf("%s shard %d: logits rel err %g after save/load (want ≤ 1e-6)", f, shard, e)
			}
			back.Free()
		}
		// bf16 save and load into f32
		dir := t.TempDir()
		if err := m.Save(dir, torch.BFloat16, 0); err != nil {
			t.Fatal(err)
		}
		back, err := Load(dir, cpu32)
		if err != nil {
			t.Fatal(err)
		}
		if e := relErr(rowLogits(t, back, seq), want); e > 2e-2 {
			t.Fatalf("bf16 checkpoint: rel err %g", e)
		}
		back.Free()
	}
}

// Loading is strict: a missing tensor, an unexpected one and a shape
// mismatch are each refused naming the tensor (and both shapes).
func TestLoadIsStrict(t *testing.T) {
	noLeaks(t)
	m := newTiny(t, Qwen2, 9, cpu32)
	dir := t.TempDir()
	if err := m.Save(dir, m.DType(), 0); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.Open(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	var tensors []safetensors.Tensor
	for _, name := range f.Names() {
		info, _ := f.Info(name)
		data, _ := f.Bytes(name)
		tensors = append(tensors, safetensors.TensorFromBytes(name, info.DType, info.Shape, append([]byte(nil), data...)))
	}
	f.Close()
	rewrite := func(edit func([]safetensors.Tensor) []safetensors.Tensor) string {
		d := t.TempDir()
		cfg, _ := os.ReadFile(filepath.Join(dir, "config.json"))
		os.WriteFile(filepath.Join(d, "config.json"), cfg, 0o644)
		if err := safetensors.Write(filepath.Join(d, "model.safetensors"), edit(append([]safetensors.Tensor(nil), tensors...)), nil); err != nil {
			t.Fatal(err)
		}
		return d
	}
	const victim = "model.layers.1.self_attn.k_proj.weight"
	missing := rewrite(func(ts []safetensors.Tensor) []safetensors.Tensor {
		var out []safetensors.Tensor
		for _, x := range ts {
			if x.Name != victim {
				out = append(out, x)
			}
		}
		return out
	})
	extra := rewrite(func(ts []safetensors.Tensor) []safetensors.Tensor {
		return append(ts, safetensors.TensorFromBytes("model.layers.9.mlp.up_proj.weight", safetensors.F32, []int64{1}, make([]byte, 4)))
	})
	shape := rewrite(func(ts []safetensors.Tensor) []safetensors.Tensor {
		for i, x := range ts {
			if x.Name == victim {
				ts[i] = safetensors.TensorFromBytes(victim, safetensors.F32, []int64{8, 32}, make([]byte, 8*32*4))
			}
		}
		return ts
	})
	for name, c := range map[string]struct {
		dir  string
		want []string
	}{
		"missing":    {missing, []string{"missing tensor " + victim, "[16 32]"}},
		"unexpected": {extra, []string{"unexpected tensors", "model.layers.9.mlp.up_proj.weight"}},
		"shape":      {shape, []string{victim, "[8 32]", "[16 32]"}},
	} {
		_, err := Load(c.dir, cpu32)
		if err == nil {
			t.Fatalf("%s: load must fail", name)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("%s: error %q should mention %q", name, err, w)
			}
		}
	}
}

// The same seed gives the same weights; another seed does not.
func TestRandomInitIsSeeded(t *testing.T) {
	noLeaks(t)
	a := newTiny(t, Qwen3, 11, cpu32)
	b := newTiny(t, Qwen3, 11, cpu32)
	c := newTiny(t, Qwen3, 12, cpu32)
	seq := []int{1, 2, 3}
	la, lb, lc := rowLogits(t, a, seq), rowLogits(t, b, seq), rowLogits(t, c, seq)
	if maxAbs(la, lb) != 0 || maxAbs(la, lc) == 0 {
		t.Fatal("random init is not determined by the seed")
	}
	if n := a.NumParams(); n <= 0 {
		t.Fatal(n)
	}
}

package model

import (
	"testing"

	"troupe/torch"
)

// A packed batch gives, at every token, the logits of the same sequence run
// alone (the padded path), and its KV sink receives what a KV cache holds
// after a prefill of that sequence.
func TestPackedForwardEqualsPadded(t *testing.T) {
	noLeaks(t)
	for _, f := range families {
		t.Run(string(f), func(t *testing.T) {
			m := newTiny(t, f, 5, cpu32)
			seqs := [][]int{{1, 2, 3, 4, 5, 6, 7}, {8}, {9, 10, 11}, {12, 13, 14, 15, 16}}
			V := m.Config.VocabSize
			scoped(func() {
				p, err := PackSequences(seqs, torch.CPU)
				if err != nil {
					t.Fatal(err)
				}
				if p.Tokens() != 16 || p.MaxLen != 7 {
					t.Fatalf("packed %d tokens, max %d", p.Tokens(), p.MaxLen)
				}
				sunk := map[int][2]*torch.Tensor{}
				h, err := m.PackedHidden(p, func(layer int, k, v *torch.Tensor) {
					sunk[layer] = [2]*torch.Tensor{k.Clone().Untrack(), v.Clone().Untrack()} // the forward frees its own
				})
				if err != nil {
					t.Fatal(err)
				}
				logits := torch.Linear(h, m.LMHead, nil).Float32s()
				off := 0
				for i, s := range seqs {
					want := rowLogits(t, m, s)
					got := logits[off*V : (off+len(s))*V]
					if e := maxAbs(got, want); e > 1e-5 {
						t.Fatalf("sequence %d: packed logits differ from the padded forward by %g", i, e)
					}
					// the sink's keys and values equal a KV cache after prefilling s alone
					cache, err := m.NewCache(1, len(s))
					if err != nil {
						t.Fatal(err)
					}
					in, err := Pack([][]int{s}, PadLeft, torch.CPU)
					if err != nil {
						t.Fatal(err)
					}
					m.hidden(in.IDs, in.Positions, in.Valid, cache, route{})
					for layer := range m.Layers {
						for j, cached := range []*torch.Tensor{cache.layers[layer].k, cache.layers[layer].v} {
							want := cached.Squeeze(0).Transpose(0, 1).Contiguous().Float32s() // (T,KVH,Dh)
							got := sunk[layer][j].Narrow(0, int64(off), int64(len(s))).Contiguous().Float32s()
							if e := maxAbs(got, want); e > 1e-5 {
								t.Fatalf("sequence %d layer %d: sunk %s differs from the cache by %g", i, layer, []string{"k", "v"}[j], e)
							}
						}
					}
					cache.Free()
					off += len(s)
				}
				p.Free()
				for _, kv := range sunk {
					torch.FreeAll(kv[0], kv[1])
				}
			})
		})
	}
}

func TestPackSequencesRefusesEmpty(t *testing.T) {
	noLeaks(t)
	if _, err := PackSequences(nil, torch.CPU); err == nil {
		t.Error("empty batch accepted")
	}
	if _, err := PackSequences([][]int{{1}, {}}, torch.CPU); err == nil {
		t.Error("empty sequence accepted")
	}
}

// A no-grad packed forward (the engine's prefill) frees each block's
// intermediates before the next block runs: the live tensors seen from the
// key/value sink grow by about one per block (its output), not by every
// intermediate of every block so far — so prefill memory does not grow with
// depth.
func TestPrefillDoesNotAccumulateIntermediates(t *testing.T) {
	cfg := tinyConfig(Qwen2)
	cfg.NumLayers = 8
	m, err := New(cfg, 53, cpu32)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	p, err := PackSequences([][]int{{1, 2, 3, 4, 5}, {6, 7}}, torch.CPU)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Free()
	var live []int64
	torch.NoGrad(func() {
		h, err := m.PackedHidden(p, func(layer int, k, v *torch.Tensor) { live = append(live, torch.LiveTensors()) })
		if err != nil {
			t.Fatal(err)
		}
		h.Free()
	})
	growth := live[len(live)-1] - live[0]
	t.Logf("live tensors at each block's sink: %v", live)
	if growth > int64(2*(cfg.NumLayers-1)) {
		t.Fatalf("live tensors grew by %d over %d blocks: the blocks' intermediates are kept", growth, cfg.NumLayers)
	}
}

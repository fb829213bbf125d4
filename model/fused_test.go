package model

import (
	"strings"
	"testing"

	"troupe/torch"
)

// cachedLogits returns the (T, V) logits of one sequence prefilled through
// the KV cache: the generation forward, which runs the fused projections.
func cachedLogits(t *testing.T, m *Model, seq []int) []float32 {
	t.Helper()
	cache, err := m.NewCache(1, len(seq))
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Free()
	cache.reset()
	var out []float32
	torch.NoGrad(func() {
		scoped(func() {
			in, err := Pack([][]int{seq}, PadLeft, torch.CPU)
			if err != nil {
				t.Fatal(err)
			}
			_, P := in.Shape()
			cache.valid.Narrow(1, 0, P).CopyFrom(in.Valid)
			h := m.hidden(in.IDs, in.Positions, cache.valid.Narrow(1, 0, P), cache, route{})
			out = torch.Linear(h, m.LMHead, nil).Float32s()
		})
	})
	return out
}

// The fused projections are views of the per-projection parameters, not
// copies: what the optimizer, a resume or a broadcast writes in place into
// q_proj, k_proj, v_proj (weights and Qwen2's biases), gate_proj and
// up_proj is what generation computes with. A fused copy taken at load
// would keep generating from the old weights and fail here.
func TestFusedProjectionsShareTheParameters(t *testing.T) {
	noLeaks(t)
	for _, f := range families {
		t.Run(string(f), func(t *testing.T) {
			m := newTiny(t, f, 3, cpu32)
			seq := []int{5, 9, 2, 33, 17, 8, 40}
			before := rowLogits(t, m, seq)
			if e := relErr(cachedLogits(t, m, seq), before); e > 1e-5 {
				t.Fatalf("fused generation forward vs per-projection forward: rel err %g", e)
			}
			fused := func(key string) bool {
				for _, name := range []string{"q_proj", "k_proj", "v_proj", "gate_proj", "up_proj"} {
					if strings.Contains(key, "."+name+".") {
						return true
					}
				}
				return false
			}
			written := redraw(m, 11, fused, 0.3, 0)
			if want := 2 * 5; f == Qwen2 && written != want+2*3 || f == Qwen3 && written != want {
				t.Fatalf("wrote %d projection tensors", written)
			}
			after, full := cachedLogits(t, m, seq), rowLogits(t, m, seq)
			if e := relErr(full, before); e < 1e-2 {
				t.Fatalf("the writes did not change the per-projection forward enough to test anything (rel change %g)", e)
			}
			if e := relErr(after, full); e > 1e-5 {
				t.Fatalf("after in-place writes to the projections, fused generation vs per-projection forward: rel err %g", e)
			}
		})
	}
}

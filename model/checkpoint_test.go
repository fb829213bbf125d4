package model

import (
	"strings"
	"testing"

	"troupe/torch"
)

// Checkpointed and plain packed forwards give every weight the same grad
// (float32, 1e-6 relative), for both families, through a LoRA view too
// (only the adapter gets grads there), and the log-probs are identical.
func TestCheckpointingGivesTheSameGrads(t *testing.T) {
	noLeaks(t)
	seqs := [][]int{{1, 2, 3, 4, 5, 6, 7}, {9, 8}, {30, 31, 32, 33, 34}}
	for _, f := range families {
		for _, lora := range []bool{false, true} {
			m := newTiny(t, f, 50, cpu32)
			v := m
			if lora {
				v = newAdapter(t, m, loraCfg(13)).Model()
			}
			v.SetRequiresGrad(true)
			grads := func(checkpointed bool) (lp []float32, g [][]float32) {
				s := torch.NewScope()
				defer s.Close()
				p, err := PackSequences(seqs, torch.CPU)
				if err != nil {
					t.Fatal(err)
				}
				ids := p.IDs.Int64s()
				targets := make([]int64, len(ids))
				mask := make([]bool, len(ids))
				for i := 0; i+1 < len(ids); i++ {
					targets[i], mask[i] = ids[i+1], i%3 != 0
				}
				tg, mk := torch.FromInt64(targets), torch.FromBool(mask)
				opt := LogProbOptions{Entropy: true, Temperature: 0.8}
				var logp, ent *torch.Tensor
				var c *Checkpointed
				if checkpointed {
					logp, ent, c, err = v.CheckpointedPackedLogProbs(p, tg, mk, opt)
				} else {
					logp, ent, err = v.PackedTokenLogProbs(p, tg, mk, opt)
				}
				if err != nil {
					t.Fatal(err)
				}
				logp.Sum().Add(ent.Sum().MulScalar(0.3)).Backward()
				if c != nil {
					if err := c.Backward(); err != nil {
						t.Fatal(err)
					}
				}
				for _, q := range v.Params() {
					gr := q.T.Grad()
					if gr == nil {
						t.Fatalf("%s lora=%v checkpointed=%v: %s has no grad", f, lora, checkpointed, q.Name)
					}
					g = append(g, gr.Float32s())
					q.T.ZeroGrad()
				}
				p.Free()
				return logp.Float32s(), g
			}
			lp0, g0 := grads(false)
			lp1, g1 := grads(true)
			if d := maxAbs(lp1, lp0); d != 0 {
				t.Fatalf("%s lora=%v: checkpointed log-probs differ by %g", f, lora, d)
			}
			for i := range g0 {
				if e := relErr(g1[i], g0[i]); e > 1e-6 {
					t.Fatalf("%s lora=%v: %s: grads differ by %g relative", f, lora, v.Params()[i].Name, e)
				}
			}
		}
	}
}

func TestCheckpointingNeedsGrad(t *testing.T) {
	m := newTiny(t, Qwen3, 51, cpu32)
	torch.NoGrad(func() {
		s := torch.NewScope()
		defer s.Close()
		p, _ := PackSequences([][]int{{1, 2}}, torch.CPU)
		defer p.Free()
		_, _, _, err := m.CheckpointedPackedLogProbs(p, torch.FromInt64([]int64{2, 0}), torch.FromBool([]bool{true, false}), LogProbOptions{})
		if err == nil || !strings.Contains(err.Error(), "for training") {
			t.Fatalf("a checkpointed forward without grad: %v", err)
		}
	})
}

// A checkpointed forward holds about one tensor per block (its input)
// besides the head's: the blocks' no-grad intermediates are freed with each
// block's scope. (The plain forward's intermediates live in its autograd
// graph, which the live-tensor count does not see; without the per-block
// scope the checkpointed forward kept 153 here, for 27 with it.)
func TestCheckpointingHoldsOnlyBlockInputs(t *testing.T) {
	cfg := tinyConfig(Qwen3)
	cfg.NumLayers = 6
	m, err := New(cfg, 52, cpu32)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	m.SetRequiresGrad(true)
	held := func() int64 {
		s := torch.NewScope()
		defer s.Close()
		p, err := PackSequences([][]int{{1, 2, 3, 4, 5, 6}, {7, 8, 9}}, torch.CPU)
		if err != nil {
			t.Fatal(err)
		}
		tg, mk := torch.FromInt64(make([]int64, 9)), torch.FromBool([]bool{true, true, true, true, true, false, true, true, false})
		before := torch.LiveTensors()
		if _, _, _, err = m.CheckpointedPackedLogProbs(p, tg, mk, LogProbOptions{}); err != nil {
			t.Fatal(err)
		}
		return torch.LiveTensors() - before
	}
	ckpt := held()
	t.Logf("live tensors after the checkpointed forward: %d (%d blocks)", ckpt, cfg.NumLayers)
	if ckpt > int64(2*cfg.NumLayers+20) {
		t.Fatalf("the checkpointed forward holds %d tensors for %d blocks: its blocks' intermediates are kept", ckpt, cfg.NumLayers)
	}
}

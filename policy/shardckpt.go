package policy

// shardckpt.go — checkpoints of a sharded trainer, consolidated on save.
//
// Saving: every rank calls CheckpointState for every model, in the same
// order; bucket by bucket the ranks all-gather their masters and moments,
// and rank 0 copies each weight's pieces into host tensors of the weight's
// shape. Rank 0 then writes exactly what an unsharded trainer writes (the
// same per-parameter AdamW state: moments, a float32 master only for
// non-float32 weights, step counts), so a checkpoint says nothing of how it
// was sharded: any number of ranks, sharded at any level or not, resumes
// it, and exports read its weights as always. The price is host memory on
// rank 0 — the model's optimizer state, 12 bytes per parameter, one model
// at a time — the way torch FSDP's full state dict with rank0_only and CPU
// offload does it.
//
// Loading: each rank reads the whole checkpoint file and keeps its own
// elements (ResumeState), without collectives.

import (
	"fmt"

	"troupe/torch"
)

// OptimizerState is the per-parameter AdamW state a checkpoint saves and
// loads, in Model.Params order (ckpt.Optimizer): *torch.AdamW, or the
// whole-model views of a sharded trainer.
type OptimizerState interface {
	Params() []*torch.Tensor
	State(i int) torch.AdamWState
	LoadState(i int, s torch.AdamWState)
}

// CheckpointState is the optimizer state to save. Unsharded, it is the
// AdamW itself. Sharded, it is a collective: every rank calls it, model
// after model in the same order; lead gets the whole state in host memory,
// the others nil. release frees what it gathered.
func (t *Trainer) CheckpointState(lead bool) (st OptimizerState, release func(), err error) {
	if t.shard == nil {
		return t.opt, func() {}, nil
	}
	h, err := t.shard.consolidate(lead)
	if err != nil {
		return nil, func() {}, fmt.Errorf("model %q: gathering the sharded optimizer state: %w", t.Model(), err)
	}
	if h == nil {
		return nil, func() {}, nil
	}
	return h, h.free, nil
}

// ResumeState is the view a checkpoint's optimizer state loads through:
// the AdamW itself, or for a sharded trainer one that keeps this rank's
// elements of each parameter's state (no collectives).
func (t *Trainer) ResumeState() OptimizerState {
	if t.shard == nil {
		return t.opt
	}
	return &shardLoader{s: t.shard, step: map[int]int64{}}
}

// hostState is a sharded optimizer's whole state in host memory.
type hostState struct {
	params []*torch.Tensor
	states []torch.AdamWState
}

func (h *hostState) Params() []*torch.Tensor { return h.params }

// State returns new handles (in the caller's scope) to parameter i's state.
func (h *hostState) State(i int) torch.AdamWState {
	st := h.states[i]
	ref := func(x *torch.Tensor) *torch.Tensor {
		if x == nil {
			return nil
		}
		return x.Ref()
	}
	return torch.AdamWState{Step: st.Step, ExpAvg: ref(st.ExpAvg), ExpAvgSq: ref(st.ExpAvgSq), Master: ref(st.Master)}
}

func (h *hostState) LoadState(int, torch.AdamWState) {
	panic(&torch.Error{Op: "load_state", Msg: "a gathered sharded optimizer state is for saving; load through Trainer.ResumeState"})
}

func (h *hostState) free() {
	for _, st := range h.states {
		torch.FreeAll(st.ExpAvg, st.ExpAvgSq, st.Master)
	}
	h.states = nil
}

// consolidate gathers the whole optimizer state into lead's host memory
// (nil on the other ranks).
func (s *sharded) consolidate(lead bool) (h *hostState, err error) {
	defer torch.Recover(&err)
	sc := torch.NewScope()
	defer sc.Close()
	step, err := s.step()
	if err != nil {
		return nil, err
	}
	moments, master := step > 0, s.dtype != torch.Float32
	if lead {
		h = &hostState{params: s.params, states: make([]torch.AdamWState, len(s.params))}
		defer func() {
			if err != nil {
				h.free()
				h = nil
			}
		}()
		host := func(p *torch.Tensor) *torch.Tensor { return torch.Zeros(p.Shape(), torch.Float32, torch.CPU).Untrack() }
		for i, p := range s.params {
			st := torch.AdamWState{Step: step}
			if moments {
				st.ExpAvg, st.ExpAvgSq = host(p), host(p)
			}
			if master {
				st.Master = host(p)
			}
			h.states[i] = st
		}
	}
	for _, b := range s.buckets {
		bs := torch.NewScope()
		live := s.opt.State(b.index)
		var parts []*torch.Tensor            // this rank's chunks
		var into []func(i int) *torch.Tensor // where lead puts each
		if master {
			parts = append(parts, b.master)
			into = append(into, func(i int) *torch.Tensor { return h.states[i].Master })
		}
		if moments {
			parts = append(parts, live.ExpAvg, live.ExpAvgSq)
			into = append(into, func(i int) *torch.Tensor { return h.states[i].ExpAvg }, func(i int) *torch.Tensor { return h.states[i].ExpAvgSq })
		}
		for k, part := range parts {
			whole := torch.Empty([]int64{b.chunk * int64(s.world)}, torch.Float32, part.Device())
			if err := s.pg.AllGatherInto(part, whole); err != nil {
				bs.Close()
				return nil, err
			}
			if !lead {
				continue
			}
			for _, p := range b.pieces {
				into[k](p.param).Reshape(-1).Narrow(0, p.from, p.n).CopyFrom(whole.Narrow(0, p.at, p.n))
			}
		}
		bs.Close()
	}
	return h, nil
}

// step is the masters' step count, which every bucket shares.
func (s *sharded) step() (int64, error) {
	sc := torch.NewScope()
	defer sc.Close()
	first := s.opt.State(0).Step
	for _, b := range s.buckets {
		if n := s.opt.State(b.index).Step; n != first {
			return 0, fmt.Errorf("bucket %d took %d optimizer steps, bucket 0 %d; sharded buckets step together", b.index, n, first)
		}
	}
	return first, nil
}

// shardLoader loads a whole-model checkpoint state into this rank's
// buckets. Every parameter's state is given whole; a bucket takes the step
// count of its parameters (which must agree) and zero moments before its
// pieces are copied in, so the padding stays zero.
type shardLoader struct {
	s    *sharded
	step map[int]int64 // buckets set by this load, with their step
}

func (l *shardLoader) Params() []*torch.Tensor { return l.s.params }

// State reports what an unsharded AdamW would: the step count, moments
// once stepped, a master for non-float32 weights (handles to this rank's
// chunks; only their presence means anything).
func (l *shardLoader) State(i int) torch.AdamWState {
	b := l.s.bucketsOf(i)[0]
	live := l.s.opt.State(b.index)
	out := torch.AdamWState{Step: live.Step, ExpAvg: live.ExpAvg, ExpAvgSq: live.ExpAvgSq}
	if l.s.dtype != torch.Float32 {
		out.Master = b.master.Ref()
	}
	return out
}

// LoadState keeps this rank's elements of parameter i's state st; a
// float32 weight, which has no master in checkpoints, is its own master.
func (l *shardLoader) LoadState(i int, st torch.AdamWState) {
	s := l.s
	sc := torch.NewScope()
	defer sc.Close()
	for _, b := range s.bucketsOf(i) {
		if was, ok := l.step[b.index]; !ok {
			fresh := torch.AdamWState{Step: st.Step}
			if st.ExpAvg != nil {
				fresh.ExpAvg = torch.Zeros([]int64{b.chunk}, torch.Float32, b.master.Device())
				fresh.ExpAvgSq = torch.Zeros([]int64{b.chunk}, torch.Float32, b.master.Device())
			}
			s.opt.LoadState(b.index, fresh)
			l.step[b.index] = st.Step
		} else if was != st.Step {
			panic(&torch.Error{Op: "load_state", Msg: fmt.Sprintf("parameter %d is at step %d, another in its shard bucket at %d; a sharded optimizer steps its buckets together", i, st.Step, was)})
		}
		live := s.opt.State(b.index)
		for _, p := range b.own {
			if p.param != i {
				continue
			}
			from := func(x *torch.Tensor) *torch.Tensor { return x.Reshape(-1).Narrow(0, p.from, p.n) }
			if st.ExpAvg != nil {
				live.ExpAvg.Narrow(0, p.at, p.n).CopyFrom(from(st.ExpAvg))
				live.ExpAvgSq.Narrow(0, p.at, p.n).CopyFrom(from(st.ExpAvgSq))
			}
			src := st.Master
			if src == nil {
				src = s.params[i].Detach()
			}
			b.master.Narrow(0, p.at, p.n).CopyFrom(from(src))
		}
	}
}

// bucketsOf lists the buckets holding a piece of parameter i.
func (s *sharded) bucketsOf(i int) []*shardBucket {
	var out []*shardBucket
	for _, b := range s.buckets {
		for _, p := range b.pieces {
			if p.param == i {
				out = append(out, b)
				break
			}
		}
	}
	return out
}

package policy

// memory.go — what an update holds of its model's training state on this
// rank, counted from the tensors themselves (not the allocator): weights,
// grads (with any float32 sums), float32 masters and AdamW moments. They
// are reported per model as memory/<model>/{param,grad,master,moment}_bytes,
// the peak over the step's update; grad_sum_bytes is the part of grad_bytes
// that sharded grads keep across micro-batches (this rank's float32 sums);
// memory/<model>/bytes_per_param is what stays between updates (weights,
// masters and moments) per trained parameter. Sharding divides what it
// shards by the number of ranks (shard.go).
//
// Not counted: activations, the log-prob chunks, a bucket's transient
// buffers in the collectives, the allocator's slack; run/'s
// memory/<dev>/update_peak_gib is the device's measured peak.

import "troupe/torch"

// heldBytes is the peak of what one update held.
type heldBytes struct {
	params, grads int64
	sums          int64 // sharded grads: the float32 sums of this rank's chunks
}

// noteGrads records the grads alive now, with the float32 sums (accum.go)
// when given.
func (t *Trainer) noteGrads(sums float32Sums) {
	s := torch.NewScope()
	defer s.Close()
	var n int64
	for _, p := range t.params {
		if g := p.Grad(); g != nil {
			n += g.Numel() * int64(g.DType().Size())
		}
	}
	for _, x := range sums {
		n += x.Numel() * 4
	}
	if t.shard != nil {
		n += t.shard.sumsBytes()
	}
	t.mem.grads = max(t.mem.grads, n)
}

// paramBytes is what the weights hold now.
func (t *Trainer) paramBytes() int64 {
	if t.shard != nil && t.shard.level == 3 {
		return t.shard.presentBytes()
	}
	var n int64
	for _, p := range t.params {
		n += p.Numel() * int64(p.DType().Size())
	}
	return n
}

// stateBytes is what the optimizer holds: float32 masters and moments.
func (t *Trainer) stateBytes() (masters, moments int64) {
	if t.shard != nil {
		return t.shard.stateBytes()
	}
	s := torch.NewScope()
	defer s.Close()
	for i := range t.params {
		st := t.opt.State(i)
		if st.Master != nil {
			masters += st.Master.Numel() * 4
		}
		if st.ExpAvg != nil {
			moments += st.ExpAvg.Numel()*int64(st.ExpAvg.DType().Size()) + st.ExpAvgSq.Numel()*int64(st.ExpAvgSq.DType().Size())
		}
	}
	return masters, moments
}

// memoryMetrics adds the update's memory figures to m.
func (t *Trainer) memoryMetrics(m Metrics) {
	masters, moments := t.stateBytes()
	params, grads, sums := max(t.mem.params, t.paramBytes()), t.mem.grads, int64(0)
	if t.shard != nil {
		params, grads, sums = max(params, t.shard.mem.params), max(grads, t.shard.mem.grads), t.shard.mem.sums
	}
	key := "memory/" + t.Model() + "/"
	m[key+"param_bytes"] = float64(params)
	m[key+"grad_bytes"] = float64(grads)
	m[key+"grad_sum_bytes"] = float64(sums)
	m[key+"master_bytes"] = float64(masters)
	m[key+"moment_bytes"] = float64(moments)
	var n int64
	for _, p := range t.params {
		n += p.Numel()
	}
	if n > 0 {
		var weights int64
		for _, p := range t.params {
			weights += p.Numel() * int64(p.DType().Size())
		}
		m[key+"bytes_per_param"] = float64(weights+masters+moments) / float64(n)
	}
}

package dist

// group.go — a joined group and the collectives its users issue: the
// interface the update uses (Collectives: all-reduce, all-gather,
// reduce-scatter, all-gather into a flat buffer, over torch's c10d process
// group), and the run's gathers built on them (byte strings, JSON items, a
// flag, rank 0's error).
//
// Every collective passes through one gate (collective): it is refused at
// once when a rank has left the group (watch.go), since it could never
// complete, and while it runs the watcher knows this rank is waiting on
// the others. A nil *Group is one process: every method answers as a
// group of one would, without a collective.
//
// What it is not: the order of the collectives — the callers issue them in
// one order on every rank, on every path (an error is agreed on, or the
// failing rank leaves the group, before anyone issues another).

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"troupe/torch"
)

// Collectives is what the update needs of a group: its place in it and
// its collectives over tensors, each issued by every rank in the same
// order (NCCL, unlike Gloo, does not check).
type Collectives interface {
	Rank() int
	World() int
	// AllReduce combines ts across ranks in place.
	AllReduce(ts []*torch.Tensor, op torch.ReduceOp) error
	// AllReduceBuckets is AllReduce in buckets of at most bucketBytes (≤ 0:
	// torch.DefaultBucketBytes).
	AllReduceBuckets(ts []*torch.Tensor, op torch.ReduceOp, bucketBytes int64) error
	// ReduceScatterAsync and AllGatherIntoAsync are ReduceScatter and
	// AllGatherInto left in flight on NCCL (a nil Work: done, on Gloo);
	// Check waits for one with the host (torch.Work.Check).
	ReduceScatterAsync(in, out *torch.Tensor) (*torch.Work, error)
	AllGatherIntoAsync(in, out *torch.Tensor) (*torch.Work, error)
	Check(w *torch.Work) error
	// AllGather returns every rank's t stacked along a new first dimension.
	AllGather(t *torch.Tensor) (*torch.Tensor, error)
	// ReduceScatter sums in (World·n) across ranks into this rank's chunk, out (n).
	ReduceScatter(in, out *torch.Tensor) error
	// AllGatherInto writes every rank's in (n) into out (World·n), rank r's at r·n.
	AllGatherInto(in, out *torch.Tensor) error
}

// Group is this process's place in a joined group; nil is one process.
type Group struct {
	pg         *torch.ProcessGroup
	launch     *Launch
	ordinal    int    // the CUDA device, -1 on CPU
	peers      []peer // every rank, in rank order, once Agree ran; this one alone before
	restart    int    // the largest torchrun restart count of the ranks
	localWorld int    // ranks on this node
	stopProbes func()
	failed     bool // a collective failed: answer the peers' probes a while before exiting (peers.go)
	w          *watch
}

// Lead says whether this process writes the run's files (rank 0, or one
// process).
func (g *Group) Lead() bool { return g == nil || g.launch.Rank == 0 }

// Rank is this process's rank (0 for one process).
func (g *Group) Rank() int {
	if g == nil {
		return 0
	}
	return g.launch.Rank
}

// World is the number of ranks (1 for one process).
func (g *Group) World() int {
	if g == nil {
		return 1
	}
	return g.launch.World
}

// Ordinal is this rank's CUDA device, -1 when it computes on the CPU.
func (g *Group) Ordinal() int {
	if g == nil {
		return -1
	}
	return g.ordinal
}

// Where names this rank for messages ("rank 2 of 4 (node 1)").
func (g *Group) Where() string {
	if g == nil {
		return "one process"
	}
	return g.launch.Where()
}

// Restart is the group's torchrun restart count: the largest of its ranks'
// (a node whose rank did not fail is started again without raising its
// own), 0 on a first start and without torchrun.
func (g *Group) Restart() int {
	if g == nil {
		return LauncherRestart()
	}
	return g.restart
}

// Part is this rank's slice [lo, hi) of n items, in rank order.
func (g *Group) Part(n int) (lo, hi int) {
	if g == nil {
		return 0, n
	}
	r, w := g.launch.Rank, g.launch.World
	return r * n / w, (r + 1) * n / w
}

// Collectives is the group as the update uses it; nil for one process.
func (g *Group) Collectives() Collectives {
	if g == nil {
		return nil
	}
	return g
}

// collective runs one collective through the gate: refused when a rank has
// left, watched while it runs.
func (g *Group) collective(f func() error) error {
	end, err := g.w.enter()
	if err != nil {
		return err
	}
	defer end()
	return f()
}

// AllReduce combines ts across ranks in place.
func (g *Group) AllReduce(ts []*torch.Tensor, op torch.ReduceOp) error {
	return g.collective(func() error { return g.pg.AllReduce(ts, op) })
}

// AllReduceBuckets is AllReduce in buckets of at most bucketBytes.
func (g *Group) AllReduceBuckets(ts []*torch.Tensor, op torch.ReduceOp, bucketBytes int64) error {
	return g.collective(func() error { return g.pg.AllReduceBuckets(ts, op, bucketBytes) })
}

// ReduceScatterAsync issues ReduceScatter and leaves it in flight (NCCL).
func (g *Group) ReduceScatterAsync(in, out *torch.Tensor) (w *torch.Work, err error) {
	err = g.collective(func() error {
		w, err = g.pg.ReduceScatterAsync(in, out)
		return err
	})
	return w, err
}

// AllGatherIntoAsync issues AllGatherInto and leaves it in flight (NCCL).
func (g *Group) AllGatherIntoAsync(in, out *torch.Tensor) (w *torch.Work, err error) {
	err = g.collective(func() error {
		w, err = g.pg.AllGatherIntoAsync(in, out)
		return err
	})
	return w, err
}

// Check waits for a collective in flight with the host, watched as the
// others are.
func (g *Group) Check(w *torch.Work) error {
	if w == nil {
		return nil
	}
	return g.collective(w.Check)
}

// AllGather returns every rank's t stacked along a new first dimension
// (World, ...), in rank order.
func (g *Group) AllGather(t *torch.Tensor) (all *torch.Tensor, err error) {
	err = g.collective(func() error {
		all, err = g.pg.AllGather(t)
		return err
	})
	return all, err
}

// ReduceScatter sums in (World·n, flat) across ranks and writes this
// rank's chunk of the sum into out (n).
func (g *Group) ReduceScatter(in, out *torch.Tensor) error {
	return g.collective(func() error { return g.pg.ReduceScatter(in, out) })
}

// AllGatherInto writes every rank's in (n) into out (World·n).
func (g *Group) AllGatherInto(in, out *torch.Tensor) error {
	return g.collective(func() error { return g.pg.AllGatherInto(in, out) })
}

// GatherBytes all-gathers one byte string per rank, in rank order (the
// lengths first, then the strings padded to the longest).
func (g *Group) GatherBytes(b []byte) (parts [][]byte, err error) {
	if g == nil {
		return [][]byte{b}, nil
	}
	defer torch.Recover(&err)
	s := torch.NewScope()
	defer s.Close()
	lens, err := g.AllGather(torch.FromInt64([]int64{int64(len(b))}))
	if err != nil {
		return nil, err
	}
	n := lens.Int64s()
	longest := int64(1)
	for _, l := range n {
		longest = max(longest, l)
	}
	padded := make([]byte, longest)
	copy(padded, b)
	all, err := g.AllGather(torch.FromBytes(padded, torch.Uint8, longest))
	if err != nil {
		return nil, err
	}
	flat := all.Bytes()
	for r, l := range n {
		parts = append(parts, flat[int64(r)*longest:int64(r)*longest+l])
	}
	return parts, nil
}

// GatherJSON all-gathers every rank's items (as JSON), in rank order; what
// names them in errors.
func GatherJSON[T any](g *Group, own []T, what string) ([]T, error) {
	if g == nil {
		return own, nil
	}
	data, err := json.Marshal(own)
	if err != nil {
		return nil, fmt.Errorf("data parallel: encoding %s: %w", what, err)
	}
	parts, err := g.GatherBytes(data)
	if err != nil {
		return nil, fmt.Errorf("data parallel: gathering %s: %w", what, err)
	}
	var all []T
	for r, p := range parts {
		var items []T
		if err := json.Unmarshal(p, &items); err != nil {
			return nil, fmt.Errorf("data parallel: %s of rank %d: %w", what, r, err)
		}
		all = append(all, items...)
	}
	return all, nil
}

// AnyTrue is true on every rank when it is true on one.
func (g *Group) AnyTrue(v bool) (bool, error) {
	if g == nil {
		return v, nil
	}
	x := 0.0
	if v {
		x = 1
	}
	var out bool
	err := func() (err error) {
		defer torch.Recover(&err)
		s := torch.NewScope()
		defer s.Close()
		t := torch.FromFloat64([]float64{x})
		if err := g.AllReduce([]*torch.Tensor{t}, torch.ReduceMax); err != nil {
			return err
		}
		out = t.Item() > 0
		return nil
	}()
	if err != nil {
		return false, fmt.Errorf("data parallel: %w", err)
	}
	return out, nil
}

// FromLead returns rank 0's error on every rank (nil when rank 0 had
// none): how the ranks agree on an error only rank 0 could see. Every rank
// calls it at the same point.
func (g *Group) FromLead(err error) error {
	if g == nil {
		return err
	}
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	parts, gerr := g.GatherBytes([]byte(msg))
	if gerr != nil {
		return fmt.Errorf("data parallel: learning how rank 0's work went: %w", gerr)
	}
	if g.Lead() || len(parts[0]) == 0 {
		return err
	}
	return errors.New(string(parts[0]))
}

// AnyError returns on every rank the first error any rank had (in rank
// order; nil when none had one): how the ranks agree on an error that one
// of them could see. Every rank calls it at the same point.
func (g *Group) AnyError(err error) error {
	if g == nil {
		return err
	}
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	parts, gerr := g.GatherBytes([]byte(msg))
	if gerr != nil {
		return fmt.Errorf("data parallel: learning how the other ranks' work went: %w", gerr)
	}
	for r, p := range parts {
		if len(p) == 0 {
			continue
		}
		if r == g.Rank() {
			return err
		}
		return fmt.Errorf("%s (on rank %d)", p, r)
	}
	return nil
}

// LeadString returns rank 0's s on every rank.
func (g *Group) LeadString(s string) (string, error) {
	if g == nil {
		return s, nil
	}
	parts, err := g.GatherBytes([]byte(s))
	if err != nil {
		return "", err
	}
	return string(parts[0]), nil
}

// Leave tells the other ranks that this one is done — failed with err, or
// finished (nil; an orderly stop after a step every rank stopped at is
// one) — so that none waits for it in a collective. Idempotent; call it
// before Close.
func (g *Group) Leave(err error) {
	if g == nil {
		return
	}
	g.w.leave(err)
}

// Close leaves the process group. A rank whose collective failed answers
// its peers' probes a while longer, so that they name what they lost
// rather than this rank (peers.go).
func (g *Group) Close() {
	if g == nil {
		return
	}
	g.w.leave(nil) // a no-op after Leave
	g.pg.Close()
	if g.failed {
		time.Sleep(probeTimeout)
	}
	g.stopProbes()
}

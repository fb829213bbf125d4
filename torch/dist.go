package torch

// dist.go — collectives across processes (csrc/dist.cc): one process per
// device, a c10d process group over a TCPStore rendezvous, Gloo for CPU
// tensors and NCCL for CUDA ones. Data-parallel training all-reduces
// gradients with it and checks that every rank holds the same weights;
// sharded training reduce-scatters gradients and all-gathers weights.
//
// Unlike tensor math, a collective fails for reasons outside the program —
// another process died or hung — so these calls return errors (naming this
// rank) instead of panicking.
//
// Waiting: on Gloo every call returns with its result. On NCCL the data
// plane is stream-ordered (csrc/dist.cc): AllReduce and Broadcast go in
// buckets the compute stream waits for, checked by the host a little later
// and all before the call returns; ReduceScatterAsync and AllGatherIntoAsync
// return a Work in flight, which the caller waits for on the stream before
// reading the result and checks with the host later, when the GPU has other
// work queued.

// #include <stdlib.h>
// #include "tshim.h"
import "C"

import (
	"fmt"
	"strings"
	"time"
	"unsafe"
)

// ReduceOp combines the ranks' values in AllReduce.
type ReduceOp int

const (
	ReduceSum ReduceOp = C.TS_DIST_SUM
	ReduceMax ReduceOp = C.TS_DIST_MAX
)

// DistConfig says how to join a process group.
type DistConfig struct {
	Host        string        // rank 0's address, where the rendezvous store listens
	Port        int           // the store's port
	Rank, World int           // this process's rank among World processes
	Timeout     time.Duration // bounds the rendezvous and every collective (0: 10 minutes)
	Gloo, NCCL  bool          // which backends to create: Gloo for CPU tensors, NCCL for CUDA
	// Device is the CUDA device NCCL is bound to (the rank's LOCAL_RANK);
	// CPU tensors go through it when the group has NCCL but no Gloo.
	Device int
	// GlooInterfaces are the network interfaces Gloo's transport binds
	// (GLOO_SOCKET_IFNAME's comma-separated list); without them GlooAddr, a
	// local address; without either, the address of this host's name.
	GlooInterfaces string
	GlooAddr       string
}

// DefaultBucketBytes bounds one bucket of AllReduce and Broadcast.
const DefaultBucketBytes = 256 << 20

// ProcessGroup is a joined c10d process group.
type ProcessGroup struct {
	h           C.ts_pg
	Rank, World int
	// via is where CPU tensors are reduced: the CPU with Gloo, the NCCL
	// device in a group without Gloo (a GPU build whose torch ships no Gloo
	// headers), copied there and back.
	via Device
}

// DistBackends reports which backends this build of the shim has.
func DistBackends() (gloo, nccl bool) {
	var g, n C.int
	check("dist_backends", C.ts_dist_backends(&g, &n))
	return g != 0, n != 0
}

// callErr turns a shim error into a Go error (no panic).
func callErr(e C.ts_err) error {
	if e == nil {
		return nil
	}
	msg := C.GoString(e)
	C.ts_free_err(e)
	return &Error{Op: "dist", Msg: strings.TrimPrefix(msg, "dist: ")}
}

// NewProcessGroup joins the group; it blocks until all World ranks have
// joined or the timeout passes.
func NewProcessGroup(c DistConfig) (*ProcessGroup, error) {
	if !c.Gloo && !c.NCCL {
		return nil, fmt.Errorf("torch: dist: no backend requested; ask for Gloo (CPU tensors) or NCCL (CUDA tensors)")
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Minute
	}
	device := -1
	if c.NCCL {
		device = c.Device
	}
	host, ifaces, addr := C.CString(c.Host), C.CString(c.GlooInterfaces), C.CString(c.GlooAddr)
	defer C.free(unsafe.Pointer(host))
	defer C.free(unsafe.Pointer(ifaces))
	defer C.free(unsafe.Pointer(addr))
	var h C.ts_pg
	err := callErr(C.ts_dist_init(host, C.int(c.Port), C.int(c.Rank), C.int(c.World), C.int(device), C.int64_t(c.Timeout.Milliseconds()),
		ifaces, addr, cbool(c.Gloo), cbool(c.NCCL), &h))
	if err != nil {
		return nil, err
	}
	pg := &ProcessGroup{h: h, Rank: c.Rank, World: c.World, via: CPU}
	if c.NCCL && !c.Gloo {
		pg.via = CUDA(c.Device)
	}
	return pg, nil
}

// Describe is the options the group's backends hold, as c10d reports them:
// each backend's timeout, Gloo's network devices, NCCL's device.
func (pg *ProcessGroup) Describe() (string, error) {
	var p *C.char
	if err := callErr(C.ts_dist_describe(pg.h, &p)); err != nil {
		return "", err
	}
	defer C.free(unsafe.Pointer(p))
	return C.GoString(p), nil
}

// staged returns ts as the collective takes them: CPU tensors copied to the
// NCCL device in a group without Gloo (see via), with a function that copies
// the results back; otherwise ts themselves.
func (pg *ProcessGroup) staged(ts []*Tensor) ([]*Tensor, func()) {
	if !pg.via.IsCUDA() {
		return ts, func() {}
	}
	out := make([]*Tensor, len(ts))
	moved := false
	for i, t := range ts {
		out[i] = t
		if !t.Device().IsCUDA() {
			out[i], moved = t.ToDevice(pg.via), true
		}
	}
	if !moved {
		return ts, func() {}
	}
	return out, func() {
		for i, t := range ts {
			if out[i] != t {
				t.CopyFrom(out[i])
				out[i].Free()
			}
		}
	}
}

// AllReduce combines ts across ranks in place (every rank passes tensors of
// the same shapes and dtypes, in the same order), in buckets of at most
// DefaultBucketBytes.
func (pg *ProcessGroup) AllReduce(ts []*Tensor, op ReduceOp) error {
	return pg.AllReduceBuckets(ts, op, DefaultBucketBytes)
}

// AllReduceBuckets is AllReduce in buckets of at most bucketBytes (≤ 0:
// DefaultBucketBytes): a contiguous tensor of a bucket or more is reduced in
// place a slice at a time, smaller ones are packed into one bucket's buffer
// per dtype (float32 for bf16/f16 on Gloo).
func (pg *ProcessGroup) AllReduceBuckets(ts []*Tensor, op ReduceOp, bucketBytes int64) error {
	if len(ts) == 0 {
		return nil
	}
	ts, back := pg.staged(ts)
	defer back()
	hs, n := handles(ts)
	return callErr(C.ts_dist_all_reduce(pg.h, hs, n, C.int(op), C.int64_t(bucketBytes)))
}

// AllGather returns every rank's t stacked along a new first dimension
// (World, ...), in rank order.
func (pg *ProcessGroup) AllGather(t *Tensor) (*Tensor, error) {
	in, _ := pg.staged([]*Tensor{t})
	var out C.ts_tensor
	err := callErr(C.ts_dist_all_gather(pg.h, in[0].handle(), &out))
	if in[0] != t {
		in[0].Free()
	}
	if err != nil {
		return nil, err
	}
	all := wrap(out)
	if all.Device() != t.Device() {
		defer all.Free()
		return all.ToDevice(t.Device()), nil
	}
	return all, nil
}

// Broadcast copies root's ts into every other rank's ts, in place, in
// buckets of at most DefaultBucketBytes.
func (pg *ProcessGroup) Broadcast(ts []*Tensor, root int) error {
	if len(ts) == 0 {
		return nil
	}
	ts, back := pg.staged(ts)
	defer back()
	hs, n := handles(ts)
	return callErr(C.ts_dist_broadcast(pg.h, hs, n, C.int(root), C.int64_t(DefaultBucketBytes)))
}

// ReduceScatter sums in, a flat (World·n) buffer, across ranks and writes
// this rank's chunk of the sum, elements [Rank·n, (Rank+1)·n), into out
// (n). Both are contiguous, 1-d, of one dtype and device. NCCL reduces in
// its own order; Gloo (which has no reduce-scatter) sends each chunk to its
// rank and adds the W chunks in rank order there. It returns with the result.
func (pg *ProcessGroup) ReduceScatter(in, out *Tensor) error {
	return callErr(C.ts_dist_reduce_scatter(pg.h, in.handle(), out.handle(), nil))
}

// AllGatherInto writes every rank's in (n) into out (World·n), rank r's at
// [r·n, (r+1)·n). Both are contiguous, 1-d, of one dtype and device. It
// returns with the result.
func (pg *ProcessGroup) AllGatherInto(in, out *Tensor) error {
	return callErr(C.ts_dist_all_gather_into(pg.h, in.handle(), out.handle(), nil))
}

// Work is a collective in flight (NCCL). A nil *Work is one that is done:
// Gloo's, whose host waited already; its methods do nothing.
type Work struct{ h C.ts_work }

// ReduceScatterAsync is ReduceScatter without waiting on NCCL: out holds the
// result once the Work is waited for. in may be freed at once (c10d keeps
// what the collective reads).
func (pg *ProcessGroup) ReduceScatterAsync(in, out *Tensor) (*Work, error) {
	var w C.ts_work
	if err := callErr(C.ts_dist_reduce_scatter(pg.h, in.handle(), out.handle(), &w)); err != nil {
		return nil, err
	}
	return work(w), nil
}

// AllGatherIntoAsync is AllGatherInto without waiting on NCCL: out holds
// the result once the Work is waited for.
func (pg *ProcessGroup) AllGatherIntoAsync(in, out *Tensor) (*Work, error) {
	var w C.ts_work
	if err := callErr(C.ts_dist_all_gather_into(pg.h, in.handle(), out.handle(), &w)); err != nil {
		return nil, err
	}
	return work(w), nil
}

func work(w C.ts_work) *Work {
	if w == nil {
		return nil
	}
	return &Work{h: w}
}

// Wait makes the current CUDA stream wait for the collective, so that work
// queued after it reads its result; the host does not wait.
func (w *Work) Wait() error {
	if w == nil || w.h == nil {
		return nil
	}
	return callErr(C.ts_work_wait(w.h, 0))
}

// Check waits for the collective with the host until it completes, fails or
// the group's timeout passes (the error names this rank), and releases the
// Work. It orders the current stream after it too. Check a Work before its
// group is closed (Free one that will not be).
func (w *Work) Check() error {
	if w == nil || w.h == nil {
		return nil
	}
	err := callErr(C.ts_work_wait(w.h, 1))
	w.Free()
	return err
}

// Free releases the Work without waiting for it. Idempotent.
func (w *Work) Free() {
	if w == nil || w.h == nil {
		return
	}
	C.ts_work_free(w.h)
	w.h = nil
}

// DistStats are what a group did since it was joined: the collectives it
// issued, by kind (one per bucket), the times the host waited for one, and
// the largest staging buffer a collective allocated, in bytes (AllReduce's
// and Broadcast's packed buckets, Gloo's reduce-scatter receive buffer).
type DistStats struct {
	AllReduce, Broadcast, AllGather, ReduceScatter, AllGatherInto, Barrier int64
	HostWaits                                                              int64
	LargestBuffer                                                          int64
}

// Collectives is the number of collectives of every kind.
func (s DistStats) Collectives() int64 {
	return s.AllReduce + s.Broadcast + s.AllGather + s.ReduceScatter + s.AllGatherInto + s.Barrier
}

// Sub is s − o, kind by kind (LargestBuffer stays s's).
func (s DistStats) Sub(o DistStats) DistStats {
	return DistStats{s.AllReduce - o.AllReduce, s.Broadcast - o.Broadcast, s.AllGather - o.AllGather,
		s.ReduceScatter - o.ReduceScatter, s.AllGatherInto - o.AllGatherInto, s.Barrier - o.Barrier,
		s.HostWaits - o.HostWaits, s.LargestBuffer}
}

// Stats returns the group's counters.
func (pg *ProcessGroup) Stats() DistStats {
	var v [C.TS_DIST_NSTATS]C.int64_t
	check("dist_stats", C.ts_dist_stats(pg.h, &v[0], C.TS_DIST_NSTATS))
	return DistStats{
		AllReduce: int64(v[C.TS_DIST_STAT_ALL_REDUCE]), Broadcast: int64(v[C.TS_DIST_STAT_BROADCAST]),
		AllGather: int64(v[C.TS_DIST_STAT_ALL_GATHER]), ReduceScatter: int64(v[C.TS_DIST_STAT_REDUCE_SCATTER]),
		AllGatherInto: int64(v[C.TS_DIST_STAT_ALL_GATHER_INTO]), Barrier: int64(v[C.TS_DIST_STAT_BARRIER]),
		HostWaits: int64(v[C.TS_DIST_STAT_HOST_WAITS]), LargestBuffer: int64(v[C.TS_DIST_STAT_LARGEST_BUFFER]),
	}
}

// Barrier returns when every rank has reached it.
func (pg *ProcessGroup) Barrier() error { return callErr(C.ts_dist_barrier(pg.h)) }

// Close leaves the group and releases it. Idempotent.
func (pg *ProcessGroup) Close() {
	if pg == nil || pg.h == nil {
		return
	}
	C.ts_dist_free(pg.h)
	pg.h = nil
}

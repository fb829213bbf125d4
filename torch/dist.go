package torch

// dist.go — collectives across processes (csrc/dist.cc): one process per
// device, a c10d process group over a TCPStore rendezvous, Gloo for CPU
// tensors and NCCL for CUDA ones. Data-parallel training all-reduces
// gradients with it and checks that every rank holds the same weights.
//
// Unlike tensor math, a collective fails for reasons outside the program —
// another process died or hung — so these calls return errors (naming this
// rank) instead of panicking.

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
}

// ProcessGroup is a joined c10d process group.
type ProcessGroup struct {
	h           C.ts_pg
	Rank, World int
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
	host := C.CString(c.Host)
	defer C.free(unsafe.Pointer(host))
	var h C.ts_pg
	err := callErr(C.ts_dist_init(host, C.int(c.Port), C.int(c.Rank), C.int(c.World), C.int64_t(c.Timeout.Milliseconds()),
		cbool(c.Gloo), cbool(c.NCCL), &h))
	if err != nil {
		return nil, err
	}
	return &ProcessGroup{h: h, Rank: c.Rank, World: c.World}, nil
}

// AllReduce combines ts across ranks in place (every rank passes tensors of
// the same shapes and dtypes, in the same order).
func (pg *ProcessGroup) AllReduce(ts []*Tensor, op ReduceOp) error {
	if len(ts) == 0 {
		return nil
	}
	hs, n := handles(ts)
	return callErr(C.ts_dist_all_reduce(pg.h, hs, n, C.int(op)))
}

// AllGather returns every rank's t stacked along a new first dimension
// (World, ...), in rank order.
func (pg *ProcessGroup) AllGather(t *Tensor) (*Tensor, error) {
	var out C.ts_tensor
	if err := callErr(C.ts_dist_all_gather(pg.h, t.handle(), &out)); err != nil {
		return nil, err
	}
	return wrap(out), nil
}

// Broadcast copies root's ts into every other rank's ts, in place.
func (pg *ProcessGroup) Broadcast(ts []*Tensor, root int) error {
	if len(ts) == 0 {
		return nil
	}
	hs, n := handles(ts)
	return callErr(C.ts_dist_broadcast(pg.h, hs, n, C.int(root)))
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

package torch

// #include "tshim.h"
import "C"

// Graph is a CUDA graph: the kernels that the torch calls of one thread
// launched on a device between Begin and End, launched again by Replay.
//
//	g := NewGraph(dev)
//	g.Enter()      // a side stream of g's becomes current
//	step()         // eagerly, to warm up workspaces and lazy kernels
//	g.Begin(pool)
//	step()         // recorded, not run
//	g.End()
//	g.Exit()       // the previous stream again
//	g.Replay()     // runs the recorded step
//
// Replays read and write the tensors the capture used, so inputs must keep
// their addresses and be updated in place (CopyFrom), and every tensor the
// captured work reads must outlive the graph. Ops that wait for the host
// (reading a value back, shapes that depend on data) cannot be captured:
// such an op panics during capture, and the graph must then be freed. The
// caller stays locked to its OS thread from Enter to Exit. Builds without
// CUDA graphs (CPU, or a shim built without them) report GraphsSupported
// false.
type Graph struct {
	h C.ts_graph
}

// GraphPool is a memory pool id that graphs may share: graphs captured one
// after another into one pool reuse each other's intermediate memory (they
// must then be replayed one at a time, which a single thread does).
type GraphPool struct{ a, b uint64 }

// GraphsSupported reports whether this build of the shim has CUDA graphs.
func GraphsSupported() bool {
	var out C.int
	check("graph_supported", C.ts_graph_supported(&out))
	return out != 0
}

// NewGraphPool makes a pool id for BeginGraph.
func NewGraphPool() GraphPool {
	var a, b C.uint64_t
	check("graph_pool", C.ts_graph_pool(&a, &b))
	return GraphPool{uint64(a), uint64(b)}
}

// NewGraph makes an empty graph for dev (a CUDA device).
func NewGraph(dev Device) *Graph {
	if !dev.IsCUDA() {
		panic(&Error{Op: "graph_new", Msg: "CUDA graphs need a CUDA device, got " + dev.String()})
	}
	var h C.ts_graph
	check("graph_new", C.ts_graph_new(C.int(dev), &h))
	return &Graph{h: h}
}

// Enter makes the graph's side stream current, ordered after the work
// already queued.
func (g *Graph) Enter() { check("graph_enter", C.ts_graph_enter(g.handle())) }

// Exit makes the previous stream current again, ordered after the side
// stream's work.
func (g *Graph) Exit() { check("graph_exit", C.ts_graph_exit(g.handle())) }

// Begin starts capturing (after Enter) into pool (the zero GraphPool: a
// pool of the graph's own).
func (g *Graph) Begin(pool GraphPool) {
	check("graph_begin", C.ts_graph_begin(g.handle(), C.uint64_t(pool.a), C.uint64_t(pool.b)))
}

// End finishes the capture.
func (g *Graph) End() { check("graph_end", C.ts_graph_end(g.handle())) }

// Replay launches the captured work again on the current stream.
func (g *Graph) Replay() { check("graph_replay", C.ts_graph_replay(g.handle())) }

// Free releases the graph (ending its capture first if it is unfinished).
// Safe on nil and twice.
func (g *Graph) Free() {
	if g == nil || g.h == nil {
		return
	}
	check("graph_free", C.ts_graph_free(g.h))
	g.h = nil
}

func (g *Graph) handle() C.ts_graph {
	if g == nil || g.h == nil {
		panic(&Error{Op: "graph", Msg: "use of a freed graph"})
	}
	return g.h
}

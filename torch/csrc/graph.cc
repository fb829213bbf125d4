// graph.cc — CUDA graphs: record the kernels that a run of shim calls from
// one thread launches on a device, then launch them all again with one call.
//
//   ts_graph_new     a graph with a side stream of its own (capture may not
//                    run on the default stream);
//   ts_graph_enter   makes the side stream current, after the work already
//                    queued on the current one: eager work run now warms up
//                    what the captured work will use on that stream (cuBLAS
//                    workspaces, lazily initialised kernels);
//   ts_graph_begin   begins capturing (entered only) into a memory pool that
//                    graphs may share (ts_graph_pool); ts_graph_end ends it;
//   ts_graph_exit    makes the previous stream current again, ordered after
//                    the side stream's work;
//   ts_graph_replay  launches the captured work on the current stream;
//   ts_graph_free    ends a capture left unfinished (an op that cannot be
//                    captured threw), leaves the side stream (ordered after
//                    it, as ts_graph_exit), frees the graph.
//
// Every call acts on the graph's device whatever device is current (a
// capture records on the current device's stream, so without a guard a
// graph on cuda:1 fails to capture from a thread whose device is cuda:0).
// A device's graphs share one side stream.
//
// Between begin and end nothing runs: kernels are recorded with the
// addresses of their inputs and outputs, so a replay reads and writes the
// same tensors. Callers keep inputs at fixed addresses and update them in
// place. Ops that synchronise with the host cannot be captured.
//
// Compiled with TSHIM_CUDA_GRAPHS (scripts/gpu/build-shim.sh defines it in a
// CUDA build and compiles the file without it if it does not compile with
// it). Without it every function but ts_graph_supported fails.
#include "common.h"

#if defined(TSHIM_CUDA) && defined(TSHIM_CUDA_GRAPHS)
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#define TS_HAVE_GRAPHS 1
#endif

#include <map>
#include <memory>
#include <mutex>

#ifdef TS_HAVE_GRAPHS
namespace {
// side_stream is the one stream a device's graphs are warmed up and captured
// on. One per device, not one per graph: memory the caching allocator keeps
// for a stream serves only that stream, so a warm-up's freed intermediates
// on a stream of its own would stay stranded there.
c10::cuda::CUDAStream side_stream(c10::DeviceIndex d) {
  static std::mutex mu;
  static std::map<c10::DeviceIndex, c10::cuda::CUDAStream> streams;
  std::lock_guard<std::mutex> lock(mu);
  auto it = streams.find(d);
  if (it == streams.end()) it = streams.emplace(d, c10::cuda::getStreamFromPool(false, d)).first;
  return it->second;
}
}  // namespace

struct ts_graph_s {
  explicit ts_graph_s(c10::DeviceIndex d)
      : device(d), previous(c10::cuda::getCurrentCUDAStream(d)), side(side_stream(d)) {}
  c10::DeviceIndex device;
  c10::cuda::CUDAStream previous;  // current before enter
  c10::cuda::CUDAStream side;      // warmed up and captured on
  at::cuda::CUDAGraph graph;
  bool entered = false;
  bool capturing = false;
  bool captured = false;
};

namespace {
// after makes stream wait for the work queued on before so far.
void after(const c10::cuda::CUDAStream& before, const c10::cuda::CUDAStream& stream) {
  at::cuda::CUDAEvent queued;
  queued.record(before);
  queued.block(stream);
}
}  // namespace
#else
struct ts_graph_s {};
#endif

namespace {
#ifndef TS_HAVE_GRAPHS
[[noreturn]] void unsupported() {
  throw std::runtime_error(
      "CUDA graphs are not in this build of the shim (a CPU build, or graph.cc did not compile with "
      "TSHIM_CUDA_GRAPHS; see scripts/gpu/build-shim.sh)");
}
#endif
}  // namespace

extern "C" {

ts_err ts_graph_supported(int* out) {
  TS_TRY
#ifdef TS_HAVE_GRAPHS
  *out = 1;
#else
  *out = 0;
#endif
  TS_CATCH
}

ts_err ts_graph_pool(uint64_t* a, uint64_t* b) {
  TS_TRY
#ifdef TS_HAVE_GRAPHS
  auto id = at::cuda::graph_pool_handle();
  *a = id.first;
  *b = id.second;
#else
  unsupported();
#endif
  TS_CATCH
}

ts_err ts_graph_new(int device, ts_graph* out) {
  TS_TRY
#ifdef TS_HAVE_GRAPHS
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device));
  *out = new ts_graph_s(static_cast<c10::DeviceIndex>(device));
#else
  unsupported();
#endif
  TS_CATCH
}

ts_err ts_graph_enter(ts_graph g) {
  TS_TRY
#ifdef TS_HAVE_GRAPHS
  if (g == nullptr || g->entered) throw std::invalid_argument("graph enter: already entered");
  c10::cuda::CUDAGuard guard(g->device);  // capture and replay act on the current device
  g->previous = c10::cuda::getCurrentCUDAStream(g->device);
  after(g->previous, g->side);
  c10::cuda::setCurrentCUDAStream(g->side);
  g->entered = true;
#else
  unsupported();
#endif
  TS_CATCH
}

ts_err ts_graph_exit(ts_graph g) {
  TS_TRY
#ifdef TS_HAVE_GRAPHS
  if (g == nullptr || !g->entered) throw std::invalid_argument("graph exit: not entered");
  c10::cuda::CUDAGuard guard(g->device);  // capture and replay act on the current device
  if (g->capturing) throw std::invalid_argument("graph exit: still capturing");
  c10::cuda::setCurrentCUDAStream(g->previous);
  g->entered = false;
  after(g->side, g->previous);
#else
  unsupported();
#endif
  TS_CATCH
}

ts_err ts_graph_begin(ts_graph g, uint64_t pool_a, uint64_t pool_b) {
  TS_TRY
#ifdef TS_HAVE_GRAPHS
  if (g == nullptr || !g->entered) throw std::invalid_argument("graph begin: enter the graph first");
  c10::cuda::CUDAGuard guard(g->device);  // capture and replay act on the current device
  if (g->capturing || g->captured) throw std::invalid_argument("graph begin: already captured");
  g->graph.capture_begin({pool_a, pool_b});
  g->capturing = true;
#else
  unsupported();
#endif
  TS_CATCH
}

ts_err ts_graph_end(ts_graph g) {
  TS_TRY
#ifdef TS_HAVE_GRAPHS
  if (g == nullptr || !g->capturing) throw std::invalid_argument("graph end: the graph is not capturing");
  c10::cuda::CUDAGuard guard(g->device);  // capture and replay act on the current device
  g->capturing = false;
  g->graph.capture_end();
  g->captured = true;
#else
  unsupported();
#endif
  TS_CATCH
}

ts_err ts_graph_replay(ts_graph g) {
  TS_TRY
#ifdef TS_HAVE_GRAPHS
  if (g == nullptr || !g->captured) throw std::invalid_argument("graph replay: nothing was captured");
  c10::cuda::CUDAGuard guard(g->device);  // capture and replay act on the current device
  if (g->entered) throw std::invalid_argument("graph replay: exit the graph first");
  g->graph.replay();
#else
  unsupported();
#endif
  TS_CATCH
}

ts_err ts_graph_free(ts_graph g) {
  TS_TRY
  if (g == nullptr) return nullptr;
#ifdef TS_HAVE_GRAPHS
  c10::cuda::CUDAGuard guard(g->device);
  if (g->capturing) {  // abandoned mid-capture: end it, ignoring why it failed
    g->capturing = false;
    try {
      g->graph.capture_end();
    } catch (...) {
    }
  }
  if (g->entered) {  // as ts_graph_exit: what the side stream ran (a warm-up step) comes first
    c10::cuda::setCurrentCUDAStream(g->previous);
    g->entered = false;
    after(g->side, g->previous);
  }
#endif
  delete g;
  TS_CATCH
}

}  // extern "C"

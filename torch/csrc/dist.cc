// dist.cc — collectives across processes on torch's own c10d: a process group
// over a TCPStore rendezvous (rank 0 hosts the store), with Gloo for CPU
// tensors and NCCL for CUDA tensors, and the handful of collectives data
// parallel training needs: all-reduce (sum or max, in place), all-gather,
// broadcast and barrier; and for sharded training, reduce-scatter and
// all-gather over flat buffers of equal chunks.
//
// Many tensors in one call, in buckets (c10d treats the tensors of one call
// as copies of one tensor): a contiguous tensor of a bucket or more is
// reduced in place a slice at a time, smaller ones are packed per dtype into
// a buffer of at most a bucket (256 MiB unless the caller says), so a call
// adds a bucket or two of memory, not a copy of every grad.
//
// Backends: TSHIM_GLOO (libgloo-dev's headers, or a wheel's gloo/) and
// TSHIM_NCCL (a CUDA build with nccl.h); without either, init says so. The
// caller's timeout bounds the rendezvous, the backends' options and every
// host wait. NCCL is bound to the caller's device (LOCAL_RANK) and connects
// at init, so an unreachable rank fails at the rendezvous. Gloo binds the
// interfaces or the address the caller names (GLOO_SOCKET_IFNAME, or the
// address that routes to the store's host).
//
// Waiting. Gloo's collectives run on the CPU: the host waits for each. On
// NCCL the data plane is stream-ordered: c10d's wait() without a timeout
// makes the current stream wait for the collective's end event and returns,
// so the host keeps queueing work instead of sleeping in 1 ms polls as
// wait(timeout) or TORCH_NCCL_BLOCKING_WAIT=1 does on every call. A failure
// still becomes a call's error naming the rank: the host checks each
// collective later, when the GPU has other work queued — an all-reduce
// bucket k once bucket k+2 is issued and all before returning; a work handle
// when its caller asks (policy's sharding: a layer late). c10d's watchdog
// ends the process with its own message if it sees a failure first.
// TORCH_NCCL_BLOCKING_WAIT=1 brings back a host wait on every call.
//
// Counters: per group, collectives by kind, host waits and the largest
// staging buffer, so tests can pin an update's collectives and bound them.
#include "common.h"

#include <ATen/ops/cat.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <thread>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>

#if defined(TSHIM_GLOO) || defined(TSHIM_NCCL)
#define TSHIM_DIST 1
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#endif
#ifdef TSHIM_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#ifdef TSHIM_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

using tshim::T;
using tshim::wrap;

#ifdef TSHIM_DIST
struct ts_pg_s {
  c10::intrusive_ptr<c10d::Store> store;
#ifdef TSHIM_GLOO
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
#endif
#ifdef TSHIM_NCCL
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> nccl;
#endif
  int rank = 0, world = 1;
  std::chrono::milliseconds timeout{0};
  std::array<std::atomic<int64_t>, TS_DIST_NSTATS> stats{};
};

// ts_work_s is a collective in flight on NCCL, with what naming its failure
// needs (the group may be gone by the time it is checked).
struct ts_work_s {
  c10::intrusive_ptr<c10d::Work> work;
  std::string what;
  int rank = 0, world = 1;
  std::chrono::milliseconds timeout{0};
  std::atomic<int64_t>* host_waits = nullptr;
  bool stream_waited = false;
};

namespace {

std::string where(int rank, int world) { return "rank " + std::to_string(rank) + " of " + std::to_string(world); }

std::runtime_error failed(const char* what, int rank, int world, const std::string& why) {
  return std::runtime_error(std::string("dist: ") + what + " failed on " + where(rank, world) +
                            " (another rank may have stopped or died, or the timeout passed): " + why);
}

void note_buffer(ts_pg pg, int64_t bytes) {
  auto& m = pg->stats[TS_DIST_STAT_LARGEST_BUFFER];
  for (int64_t cur = m.load(); bytes > cur && !m.compare_exchange_weak(cur, bytes);) {
  }
}

// issue applies op to the backend that owns tensors of this device type and
// counts it. Gloo's work is waited for here (the host blocks); NCCL's is
// returned in flight, unwaited.
template <typename Op>
c10::intrusive_ptr<c10d::Work> issue(ts_pg pg, bool cuda, int kind, const char* what, Op op) {
  if (pg == nullptr) throw std::invalid_argument("process group handle is NULL");
  try {
#ifdef TSHIM_NCCL
    if (cuda) {
      if (!pg->nccl) throw std::invalid_argument("this process group was created without NCCL; CUDA tensors need backend nccl");
      pg->stats[kind]++;
      return op(*pg->nccl);
    }
#endif
#ifdef TSHIM_GLOO
    if (!cuda) {
      if (!pg->gloo) throw std::invalid_argument("this process group was created without Gloo; CPU tensors need backend gloo");
      pg->stats[kind]++;
      pg->stats[TS_DIST_STAT_HOST_WAITS]++;
      op(*pg->gloo)->wait(pg->timeout);
      return {};
    }
#endif
    throw std::invalid_argument(std::string("no backend in this build for ") + (cuda ? "CUDA" : "CPU") + " tensors");
  } catch (const std::invalid_argument&) {
    throw;
  } catch (const std::exception& e) {
    throw failed(what, pg->rank, pg->world, e.what());
  }
}

// stream_wait orders the current stream after w (NCCL; the host goes on).
void stream_wait(ts_work_s& w) {
  if (!w.work || w.stream_waited) return;
  try {
    w.work->wait();  // no timeout: stream-ordered unless TORCH_NCCL_BLOCKING_WAIT=1
  } catch (const std::exception& e) {
    throw failed(w.what.c_str(), w.rank, w.world, e.what());
  }
  w.stream_waited = true;
}

// host_wait orders the current stream after w and blocks the host until w
// completes, fails or the timeout passes.
void host_wait(ts_work_s& w) {
  if (!w.work) return;
  stream_wait(w);
  if (w.host_waits != nullptr) (*w.host_waits)++;
  const auto deadline = std::chrono::steady_clock::now() + w.timeout;
  try {
    while (!w.work->isCompleted()) {
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error("not complete after " + std::to_string(w.timeout.count()) + " ms");
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    if (auto e = w.work->exception()) std::rethrow_exception(e);
  } catch (const std::exception& e) {
    throw failed(w.what.c_str(), w.rank, w.world, e.what());
  }
  w.work.reset();
}

ts_work_s in_flight(ts_pg pg, c10::intrusive_ptr<c10d::Work> work, const char* what) {
  ts_work_s w;
  w.work = std::move(work);
  w.what = what;
  w.rank = pg->rank;
  w.world = pg->world;
  w.timeout = pg->timeout;
  w.host_waits = &pg->stats[TS_DIST_STAT_HOST_WAITS];
  return w;
}

// run issues op and waits for it with the host (the control plane: results
// the host reads, barriers).
template <typename Op>
void run(ts_pg pg, bool cuda, int kind, const char* what, Op op) {
  auto w = in_flight(pg, issue(pg, cuda, kind, what, op), what);
  host_wait(w);
}

bool on_cuda(const std::vector<at::Tensor>& ts) {
  bool cuda = !ts.empty() && ts[0].is_cuda();
  for (const auto& t : ts)
    if (t.is_cuda() != cuda) throw std::invalid_argument("dist: tensors of one call must all be on CPU or all on CUDA");
  return cuda;
}

// A piece is elements [from, from+n) of flat tensor i, at [at, at+n) of its
// bucket.
struct Piece {
  size_t i;
  int64_t from, at, n;
};

// A bucket is reduced (or broadcast) by one collective: either a slice of
// one contiguous tensor, in place (direct), or pieces packed into a buffer.
struct Bucket {
  std::vector<Piece> pieces;
  int64_t numel = 0;
  bool direct = false;
  at::ScalarType wire = at::kFloat;  // the buffer's dtype
};

// plan_buckets cuts flats (1-d, contiguous) into buckets of at most cap_bytes:
// per dtype, in the order the tensors come; a tensor of a bucket or more,
// unless it must be widened, in direct slices; the others packed.
std::vector<Bucket> plan_buckets(const std::vector<at::Tensor>& flats, int64_t cap_bytes, bool widen_half) {
  std::vector<Bucket> out;
  std::map<at::ScalarType, size_t> open;  // dtype → its packed bucket being filled, in out
  for (size_t i = 0; i < flats.size(); i++) {
    const auto dt = flats[i].scalar_type();
    const bool widen = widen_half && (dt == at::kBFloat16 || dt == at::kHalf);
    const auto wire = widen ? at::kFloat : dt;
    const int64_t cap = std::max<int64_t>(1, cap_bytes / static_cast<int64_t>(c10::elementSize(wire)));
    const int64_t n = flats[i].numel();
    for (int64_t from = 0; !widen && n >= cap && from < n; from += cap) {
      const int64_t m = std::min(cap, n - from);
      out.push_back(Bucket{{{i, from, 0, m}}, m, true, wire});
    }
    for (int64_t from = 0; (widen || n < cap) && from < n;) {
      auto it = open.find(dt);
      if (it == open.end() || out[it->second].numel == cap) {
        out.push_back(Bucket{{}, 0, false, wire});
        it = open.insert_or_assign(dt, out.size() - 1).first;
      }
      auto& b = out[it->second];
      const int64_t take = std::min(n - from, cap - b.numel);
      b.pieces.push_back({i, from, b.numel, take});
      b.numel += take;
      from += take;
    }
  }
  return out;
}

// bucketed runs op (one collective over a 1-d tensor) over tensors bucket by
// bucket, in place. On NCCL each bucket is stream-ordered; the host checks
// bucket k once bucket k+2 is issued, and every bucket before returning.
template <typename Op>
void bucketed(ts_pg pg, const std::vector<at::Tensor>& tensors, int64_t cap_bytes, int kind, const char* what, Op op) {
  const bool cuda = on_cuda(tensors);
  if (cap_bytes <= 0) cap_bytes = TS_DIST_BUCKET_BYTES;
  at::NoGradGuard no_grad;
  // Gloo sums no bf16 in 1.13 and f16 only in its own arithmetic: the CPU
  // sums half-width buffers in float32 and rounds once (NCCL sums them itself)
  std::vector<at::Tensor> flats;
  for (const auto& t : tensors) flats.push_back(t.is_contiguous() ? t.view({-1}) : t.contiguous().view({-1}));
  std::deque<ts_work_s> unchecked;
  for (auto& b : plan_buckets(flats, cap_bytes, !cuda)) {
    at::Tensor buf;
    if (b.direct) {
      const auto& p = b.pieces[0];
      buf = flats[p.i].narrow(0, p.from, p.n);
    } else {
      buf = at::empty({b.numel}, flats[b.pieces[0].i].options().dtype(b.wire));
      note_buffer(pg, b.numel * static_cast<int64_t>(c10::elementSize(b.wire)));
      for (const auto& p : b.pieces) buf.narrow(0, p.at, p.n).copy_(flats[p.i].narrow(0, p.from, p.n));
    }
    std::vector<at::Tensor> one{buf};
    unchecked.push_back(in_flight(pg, issue(pg, cuda, kind, what, [&](auto& be) { return op(be, one); }), what));
    stream_wait(unchecked.back());
    if (!b.direct)
      for (const auto& p : b.pieces) flats[p.i].narrow(0, p.from, p.n).copy_(buf.narrow(0, p.at, p.n));
    if (unchecked.size() > 2) {
      host_wait(unchecked.front());
      unchecked.pop_front();
    }
  }
  for (auto& w : unchecked) host_wait(w);
  for (size_t i = 0; i < tensors.size(); i++)
    if (!tensors[i].is_contiguous()) tensors[i].copy_(flats[i].view(tensors[i].sizes()));
}

}  // namespace
#endif

extern "C" {

ts_err ts_dist_backends(int* gloo, int* nccl) {
  TS_TRY
  *gloo = 0;
  *nccl = 0;
#ifdef TSHIM_GLOO
  *gloo = 1;
#endif
#ifdef TSHIM_NCCL
  *nccl = 1;
#endif
  TS_CATCH
}

ts_err ts_dist_init(const char* host, int port, int rank, int world, int device, int64_t timeout_ms,
                    const char* gloo_ifaces, const char* gloo_addr, int want_gloo, int want_nccl, ts_pg* out) {
  TS_TRY
#ifdef TSHIM_DIST
  if (world < 1 || rank < 0 || rank >= world)
    throw std::invalid_argument("dist: rank " + std::to_string(rank) + " outside [0, world size " +
                                std::to_string(world) + ")");
  if (port <= 0 || port > 65535) throw std::invalid_argument("dist: port " + std::to_string(port) + " outside 1..65535");
  if (timeout_ms <= 0) throw std::invalid_argument("dist: timeout " + std::to_string(timeout_ms) + " ms; it must be > 0");
  auto pg = std::make_unique<ts_pg_s>();
  pg->rank = rank;
  pg->world = world;
  pg->timeout = std::chrono::milliseconds(timeout_ms);
  c10d::TCPStoreOptions opts;
  opts.port = static_cast<std::uint16_t>(port);
  opts.isServer = rank == 0;
  opts.numWorkers = static_cast<std::size_t>(world);
  opts.waitWorkers = true;
  opts.timeout = pg->timeout;
  try {
    pg->store = c10::make_intrusive<c10d::TCPStore>(std::string(host), opts);
  } catch (const std::exception& e) {
    throw std::runtime_error("dist: rank " + std::to_string(rank) + " of " + std::to_string(world) +
                             ": rendezvous at " + host + ":" + std::to_string(port) + " failed: " + e.what());
  }
  if (want_gloo) {
#ifdef TSHIM_GLOO
    auto o = c10d::ProcessGroupGloo::Options::create(pg->timeout);
    std::string ifaces = gloo_ifaces != nullptr ? gloo_ifaces : "", addr = gloo_addr != nullptr ? gloo_addr : "";
    if (!ifaces.empty()) {
      std::stringstream list(ifaces);
      for (std::string name; std::getline(list, name, ',');)
        if (!name.empty()) o->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(name));
    } else if (!addr.empty()) {
      o->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(addr));
    } else {
      o->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    }
    pg->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(pg->store, rank, world, o);
#else
    (void)gloo_ifaces, (void)gloo_addr;
    throw std::invalid_argument("dist: this build of the shim has no Gloo (rebuild with gloo headers: libgloo-dev)");
#endif
  }
  if (want_nccl) {
#ifdef TSHIM_NCCL
    // no TORCH_NCCL_BLOCKING_WAIT: waits are stream-ordered, the host checks
    // (see the header); the watchdog backs them up
    auto o = c10d::ProcessGroupNCCL::Options::create();
    o->timeout = pg->timeout;
    pg->nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(pg->store, rank, world, o);
    if (device >= 0) {
      at::Device dev(at::kCUDA, static_cast<c10::DeviceIndex>(device));
      pg->nccl->setBoundDeviceId(dev);
      pg->nccl->eagerConnectSingleDevice(dev);
    }
#else
    (void)device;
    throw std::invalid_argument("dist: this build of the shim has no NCCL (a CUDA build with nccl.h has it)");
#endif
  }
  *out = pg.release();
#else
  (void)host, (void)port, (void)rank, (void)world, (void)device, (void)timeout_ms, (void)gloo_ifaces, (void)gloo_addr;
  (void)want_gloo, (void)want_nccl, (void)out;
  throw std::invalid_argument("dist: this build of the shim has no distributed backend (Gloo or NCCL headers were missing)");
#endif
  TS_CATCH
}

ts_err ts_dist_describe(ts_pg pg, char** out) {
  TS_TRY
  std::string d;
#ifdef TSHIM_DIST
  if (pg == nullptr) throw std::invalid_argument("process group handle is NULL");
  d = "rank " + std::to_string(pg->rank) + " of " + std::to_string(pg->world);
#ifdef TSHIM_GLOO
  if (pg->gloo) {
    auto o = pg->gloo->getOptions();
    d += "; gloo: timeout " + std::to_string(o->timeout.count()) + " ms, devices";
    for (const auto& dev : o->devices) d += " " + dev->str();
  }
#endif
#ifdef TSHIM_NCCL
  if (pg->nccl) {
    auto o = pg->nccl->getOptions();
    auto dev = pg->nccl->getBoundDeviceId();
    const char* blocking = std::getenv("TORCH_NCCL_BLOCKING_WAIT");
    d += "; nccl: timeout " + std::to_string(o->timeout.count()) + " ms, device " + (dev ? dev->str() : "none") +
         ", waits " + (blocking != nullptr && std::string(blocking) == "1" ? "host-blocking (TORCH_NCCL_BLOCKING_WAIT=1)" : "stream-ordered");
  }
#endif
#else
  (void)pg;
  throw std::invalid_argument("dist: no distributed backend in this build");
#endif
  *out = strdup(d.c_str());
  TS_CATCH
}

ts_err ts_dist_free(ts_pg pg) {
  TS_TRY
#ifdef TSHIM_DIST
  delete pg;
#else
  (void)pg;
#endif
  TS_CATCH
}

ts_err ts_dist_stats(ts_pg pg, int64_t* out, int n) {
  TS_TRY
#ifdef TSHIM_DIST
  if (pg == nullptr) throw std::invalid_argument("process group handle is NULL");
  for (int i = 0; i < n && i < TS_DIST_NSTATS; i++) out[i] = pg->stats[i].load();
#else
  (void)pg, (void)out, (void)n;
  throw std::invalid_argument("dist: no distributed backend in this build");
#endif
  TS_CATCH
}

ts_err ts_dist_all_reduce(ts_pg pg, const ts_tensor* ts, int n, int op, int64_t bucket_bytes) {
  TS_TRY
#ifdef TSHIM_DIST
  auto tensors = tshim::tensors(ts, n);
  if (tensors.empty()) return nullptr;
  c10d::AllreduceOptions opts;
  switch (op) {
    case TS_DIST_SUM: opts.reduceOp = c10d::ReduceOp::SUM; break;
    case TS_DIST_MAX: opts.reduceOp = c10d::ReduceOp::MAX; break;
    default: throw std::invalid_argument("dist: unknown reduce op " + std::to_string(op));
  }
  bucketed(pg, tensors, bucket_bytes, TS_DIST_STAT_ALL_REDUCE, "all_reduce",
           [&](auto& b, std::vector<at::Tensor>& one) { return b.allreduce(one, opts); });
#else
  (void)pg, (void)ts, (void)n, (void)op, (void)bucket_bytes;
  throw std::invalid_argument("dist: no distributed backend in this build");
#endif
  TS_CATCH
}

ts_err ts_dist_all_gather(ts_pg pg, ts_tensor t, ts_tensor* out) {
  TS_TRY
#ifdef TSHIM_DIST
  if (pg == nullptr) throw std::invalid_argument("process group handle is NULL");
  const auto& in = T(t);
  std::vector<at::Tensor> input{in.contiguous()};
  std::vector<std::vector<at::Tensor>> output(1);
  for (int r = 0; r < pg->world; r++) output[0].push_back(at::empty_like(input[0]));
  run(pg, in.is_cuda(), TS_DIST_STAT_ALL_GATHER, "all_gather", [&](auto& b) { return b.allgather(output, input); });
  std::vector<at::Tensor> rows;
  for (auto& o : output[0]) rows.push_back(o.unsqueeze(0));
  *out = wrap(at::cat(rows, 0));
#else
  (void)pg, (void)t, (void)out;
  throw std::invalid_argument("dist: no distributed backend in this build");
#endif
  TS_CATCH
}

ts_err ts_dist_broadcast(ts_pg pg, const ts_tensor* ts, int n, int root, int64_t bucket_bytes) {
  TS_TRY
#ifdef TSHIM_DIST
  auto tensors = tshim::tensors(ts, n);
  if (tensors.empty()) return nullptr;
  if (pg == nullptr) throw std::invalid_argument("process group handle is NULL");
  if (root < 0 || root >= pg->world) throw std::invalid_argument("dist: broadcast root " + std::to_string(root) + " is not a rank");
  c10d::BroadcastOptions opts;
  opts.rootRank = root;
  bucketed(pg, tensors, bucket_bytes, TS_DIST_STAT_BROADCAST, "broadcast",
           [&](auto& b, std::vector<at::Tensor>& one) { return b.broadcast(one, opts); });
#else
  (void)pg, (void)ts, (void)n, (void)root, (void)bucket_bytes;
  throw std::invalid_argument("dist: no distributed backend in this build");
#endif
  TS_CATCH
}

ts_err ts_dist_barrier(ts_pg pg) {
  TS_TRY
#ifdef TSHIM_DIST
  bool cuda = false;
#ifndef TSHIM_GLOO
  cuda = true;  // an NCCL-only build
#endif
  if (pg != nullptr) {
#ifdef TSHIM_GLOO
    cuda = !pg->gloo;
#endif
  }
  run(pg, cuda, TS_DIST_STAT_BARRIER, "barrier", [&](auto& b) { return b.barrier(c10d::BarrierOptions()); });
#else
  (void)pg;
  throw std::invalid_argument("dist: no distributed backend in this build");
#endif
  TS_CATCH
}

ts_err ts_work_wait(ts_work w, int host) {
  TS_TRY
#ifdef TSHIM_DIST
  if (w == nullptr) return nullptr;
  if (host)
    host_wait(*w);
  else
    stream_wait(*w);
#else
  (void)w, (void)host;
#endif
  TS_CATCH
}

ts_err ts_work_free(ts_work w) {
  TS_TRY
#ifdef TSHIM_DIST
  delete w;
#else
  (void)w;
#endif
  TS_CATCH
}

}  // extern "C"

#ifdef TSHIM_DIST
// flat_pair checks the (world·n, n) pair of a reduce-scatter or an
// all-gather: 1-d, contiguous, one dtype and device.
static void flat_pair(ts_pg pg, const at::Tensor& whole, const at::Tensor& part, const char* what) {
  if (pg == nullptr) throw std::invalid_argument("process group handle is NULL");
  if (whole.dim() != 1 || part.dim() != 1 || !whole.is_contiguous() || !part.is_contiguous())
    throw std::invalid_argument(std::string("dist: ") + what + " takes contiguous 1-d tensors");
  if (whole.numel() != part.numel() * pg->world)
    throw std::invalid_argument(std::string("dist: ") + what + ": the whole buffer has " + std::to_string(whole.numel()) +
                                " elements, want world size " + std::to_string(pg->world) + " × " +
                                std::to_string(part.numel()));
  if (whole.scalar_type() != part.scalar_type() || whole.device() != part.device())
    throw std::invalid_argument(std::string("dist: ") + what + ": the two buffers differ in dtype or device");
}

// carried is how Gloo moves a buffer: bf16, which Gloo does not know in
// every version, travels as its bits in a f16 view (these two collectives
// only copy on Gloo; the sum is taken here, in the real dtype).
static at::Tensor carried(const at::Tensor& t) { return t.scalar_type() == at::kBFloat16 ? t.view(at::kHalf) : t; }

// finish hands an NCCL collective to the caller (work set) or waits for it
// with the host (work NULL).
static void finish(ts_pg pg, c10::intrusive_ptr<c10d::Work> work, const char* what, ts_work* out) {
  auto w = std::make_unique<ts_work_s>(in_flight(pg, std::move(work), what));
  if (out == nullptr) {
    host_wait(*w);
    return;
  }
  *out = w.release();
}
#endif

extern "C" {

ts_err ts_dist_reduce_scatter(ts_pg pg, ts_tensor in, ts_tensor out, ts_work* work) {
  TS_TRY
#ifdef TSHIM_DIST
  if (work != nullptr) *work = nullptr;
  at::Tensor input = T(in), output = T(out);
  flat_pair(pg, input, output, "reduce_scatter");
  at::NoGradGuard no_grad;
  if (input.is_cuda()) {
    c10d::ReduceScatterOptions opts;
    opts.reduceOp = c10d::ReduceOp::SUM;
    finish(pg, issue(pg, true, TS_DIST_STAT_REDUCE_SCATTER, "reduce_scatter", [&](auto& b) { return b._reduce_scatter_base(output, input, opts); }),
           "reduce_scatter", work);
    return nullptr;
  }
  // Gloo: every rank sends chunk r to rank r, then adds what it received
  // in rank order (a fixed order: the sum does not depend on timing)
  at::Tensor recv = at::empty_like(input);
  note_buffer(pg, recv.numel() * static_cast<int64_t>(recv.element_size()));
  at::Tensor send_bits = carried(input), recv_bits = carried(recv);
  std::vector<int64_t> equal;  // empty: equal splits
  issue(pg, false, TS_DIST_STAT_REDUCE_SCATTER, "reduce_scatter",
        [&](auto& b) { return b.alltoall_base(recv_bits, send_bits, equal, equal, c10d::AllToAllOptions()); });
  const int64_t n = output.numel();
  output.copy_(recv.narrow(0, 0, n));
  for (int r = 1; r < pg->world; r++) output.add_(recv.narrow(0, r * n, n));
#else
  (void)pg, (void)in, (void)out, (void)work;
  throw std::invalid_argument("dist: no distributed backend in this build");
#endif
  TS_CATCH
}

ts_err ts_dist_all_gather_into(ts_pg pg, ts_tensor in, ts_tensor out, ts_work* work) {
  TS_TRY
#ifdef TSHIM_DIST
  if (work != nullptr) *work = nullptr;
  at::Tensor input = T(in), output = T(out);
  flat_pair(pg, output, input, "all_gather_into");
  at::NoGradGuard no_grad;
  if (input.is_cuda()) {
    finish(pg, issue(pg, true, TS_DIST_STAT_ALL_GATHER_INTO, "all_gather_into", [&](auto& b) { return b._allgather_base(output, input, c10d::AllgatherOptions()); }),
           "all_gather_into", work);
    return nullptr;
  }
  const int64_t n = input.numel();
  std::vector<at::Tensor> inputs{carried(input)};
  at::Tensor out_bits = carried(output);
  std::vector<std::vector<at::Tensor>> outputs(1);
  for (int r = 0; r < pg->world; r++) outputs[0].push_back(out_bits.narrow(0, r * n, n));
  issue(pg, false, TS_DIST_STAT_ALL_GATHER_INTO, "all_gather_into",
        [&](auto& b) { return b.allgather(outputs, inputs, c10d::AllgatherOptions()); });
#else
  (void)pg, (void)in, (void)out, (void)work;
  throw std::invalid_argument("dist: no distributed backend in this build");
#endif
  TS_CATCH
}

}  // extern "C"

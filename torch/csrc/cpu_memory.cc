// cpu_memory.cc — how many bytes libtorch's CPU allocator holds, and the
// peak: the CPU's counterpart of the CUDA caching allocator's statistics, so
// that a run on the CPU reports its update's peak and a test can hold
// `train plan` to what a rank really allocated.
//
// track() puts a counting allocator in front of the CPU allocator libtorch
// uses (c10::SetCPUAllocator): every allocation gets 64 bytes in front of it
// holding its size and the inner allocator's context (64 keeps the
// allocator's alignment), the counters move by the size asked for, and the
// inner allocator's own deleter frees the block. Storages made before
// track() keep the allocator they were made with and are never counted, so
// call it before the first tensor that should count (the run does, at start).
//
// What it is not: the process's resident memory (glibc keeps freed blocks,
// mmap'ed safetensors pages are not tensors of this allocator), nor a
// profiler (no stacks, no per-tensor records).
#include "common.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <atomic>
#include <cstring>

namespace {

constexpr size_t kHeader = 64;
std::atomic<int64_t> g_allocated{0}, g_peak{0};
at::Allocator* g_inner = nullptr;
c10::DeleterFnPtr g_inner_delete = nullptr;

struct Header {
  int64_t bytes;
  void* context;  // the inner allocator's, for its deleter
};

void counted_delete(void* p) {
  if (p == nullptr) return;
  Header h;
  std::memcpy(&h, static_cast<char*>(p) - kHeader, sizeof h);
  g_allocated.fetch_sub(h.bytes);
  g_inner_delete(h.context);
}

void note(int64_t bytes) {
  const int64_t now = g_allocated.fetch_add(bytes) + bytes;
  for (int64_t peak = g_peak.load(); now > peak && !g_peak.compare_exchange_weak(peak, now);) {
  }
}

// Allocator's allocate lost its const in torch 2.3, which also added copy_data.
#if TS_AT_LEAST(2, 3)
#define TS_ALLOCATE_CONST
#else
#define TS_ALLOCATE_CONST const
#endif

struct CountingCPUAllocator final : at::Allocator {
  at::DataPtr allocate(size_t n) TS_ALLOCATE_CONST override {
    if (n == 0) return g_inner->allocate(0);
    at::DataPtr inner = g_inner->allocate(n + kHeader);
    char* base = static_cast<char*>(inner.get());
    Header h{static_cast<int64_t>(n), inner.release_context()};
    std::memcpy(base, &h, sizeof h);
    note(h.bytes);
    void* data = base + kHeader;
    return {data, data, &counted_delete, at::Device(at::kCPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &counted_delete; }
#if TS_AT_LEAST(2, 3)
  void copy_data(void* dest, const void* src, std::size_t count) const override { std::memcpy(dest, src, count); }
#endif
};

CountingCPUAllocator g_counting;

}  // namespace

extern "C" {

ts_err ts_cpu_memory_track(int* ok) {
  TS_TRY
  *ok = 1;
  if (g_inner != nullptr) return nullptr;
  at::Allocator* inner = c10::GetCPUAllocator();
  // the header must be handed back to the inner allocator's deleter, and
  // its context must be the block itself (the default allocator's are)
  at::DataPtr probe = inner->allocate(kHeader);
  if (inner->raw_deleter() == nullptr || probe.get() != probe.get_context()) {
    *ok = 0;
    return nullptr;
  }
  g_inner_delete = inner->raw_deleter();
  g_inner = inner;
  c10::SetCPUAllocator(&g_counting, 0);
  TS_CATCH
}

ts_err ts_cpu_memory(int64_t* allocated, int64_t* peak) {
  TS_TRY
  *allocated = g_allocated.load();
  *peak = g_peak.load();
  TS_CATCH
}

ts_err ts_cpu_reset_peak(void) {
  TS_TRY
  g_peak.store(g_allocated.load());
  TS_CATCH
}

}  // extern "C"

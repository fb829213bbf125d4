// runtime.cc — version and capabilities, threads, seeds, generators, CUDA
// synchronisation and memory statistics.
//
// CUDA-only parts compile when TSHIM_CUDA is defined (the GPU build script
// defines it; Debian's CPU libtorch has no c10/cuda headers). Without it they
// report zeros or do nothing, so callers need no build-specific code.
#include "common.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include <dlfcn.h>
#include <malloc.h>

#include <cstring>
#include <mutex>

#ifdef TSHIM_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>  // CUDART_VERSION, cudaDeviceGetPCIBusId
#endif

using tshim::T;
using tshim::wrap;

extern "C" {

ts_err ts_version(int* major, int* minor, int* patch) {
  TS_TRY
  *major = TORCH_VERSION_MAJOR;
  *minor = TORCH_VERSION_MINOR;
  *patch = TORCH_VERSION_PATCH;
  TS_CATCH
}

ts_err ts_build_cuda(int* cuda_runtime) {
  TS_TRY
#if defined(TSHIM_CUDA) && defined(CUDART_VERSION)
  *cuda_runtime = CUDART_VERSION;
#elif defined(TSHIM_CUDA)
  *cuda_runtime = 1;
#else
  *cuda_runtime = 0;
#endif
  TS_CATCH
}

ts_err ts_shim_path(const char** out) {
  TS_TRY
  Dl_info info;
  *out = (dladdr(reinterpret_cast<void*>(&ts_shim_path), &info) != 0 && info.dli_fname) ? info.dli_fname : "";
  TS_CATCH
}

ts_err ts_set_num_threads(int n) {
  TS_TRY
  if (n < 1) throw std::invalid_argument("thread count must be >= 1, got " + std::to_string(n));
  at::set_num_threads(n);
  TS_CATCH
}

ts_err ts_keep_freed_memory(int64_t trim_bytes, int64_t mmap_bytes, int* ok) {
  TS_TRY
#if defined(__GLIBC__)
  *ok = mallopt(M_TRIM_THRESHOLD, static_cast<int>(std::min<int64_t>(trim_bytes, INT32_MAX))) == 1 &&
        mallopt(M_MMAP_THRESHOLD, static_cast<int>(std::min<int64_t>(mmap_bytes, INT32_MAX))) == 1;
#else
  *ok = 0;
#endif
  TS_CATCH
}

ts_err ts_get_num_threads(int* out) {
  TS_TRY
  *out = at::get_num_threads();
  TS_CATCH
}

ts_err ts_manual_seed(uint64_t seed) {
  TS_TRY
  {
    auto g = at::globalContext().defaultGenerator(at::Device(at::kCPU));
    std::lock_guard<std::mutex> lock(g.mutex());
    g.set_current_seed(seed);
  }
#ifdef TSHIM_CUDA
  if (at::hasCUDA()) {
    int n = c10::cuda::device_count();
    for (int i = 0; i < n; i++) {
      auto g = at::globalContext().defaultGenerator(at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(i)));
      std::lock_guard<std::mutex> lock(g.mutex());
      g.set_current_seed(seed);
    }
  }
#endif
  TS_CATCH
}

ts_err ts_cuda_available(int* out) {
  TS_TRY
  *out = at::hasCUDA() ? 1 : 0;
  TS_CATCH
}

ts_err ts_cuda_device_count(int* out) {
  TS_TRY
#ifdef TSHIM_CUDA
  *out = at::hasCUDA() ? static_cast<int>(c10::cuda::device_count()) : 0;
#else
  *out = 0;
#endif
  TS_CATCH
}

ts_err ts_fused_sdpa_available(int* out) {
  TS_TRY
  *out = TS_AT_LEAST(2, 1) ? 1 : 0;
  TS_CATCH
}

ts_err ts_cuda_synchronize(int device) {
  TS_TRY
#ifdef TSHIM_CUDA
  if (at::hasCUDA()) {
    // The guard switches back without creating a context on the previous
    // device when it has none (set_device(prev) would make one on cuda:0).
    c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device));
    c10::cuda::device_synchronize();
  }
#else
  (void)device;
#endif
  TS_CATCH
}

ts_err ts_cuda_set_device(int device) {
  TS_TRY
#ifdef TSHIM_CUDA
  if (!at::hasCUDA()) throw std::runtime_error("set device: no CUDA device is visible to this process");
  auto n = static_cast<int>(c10::cuda::device_count());
  if (device < 0 || device >= n) {
    throw std::invalid_argument("set device: cuda:" + std::to_string(device) + " does not exist; this process sees " +
                                std::to_string(n) + " CUDA device(s)");
  }
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(device));
#else
  throw std::runtime_error("set device: this build of the shim has no CUDA");
#endif
  TS_CATCH
}

// The PCI bus id names the device the same way NVML does, whatever
// CUDA_VISIBLE_DEVICES or a cgroup made of the ordinals (internal/gpu finds
// the device's NVML handle by it). A query of the device: it creates no
// context.
ts_err ts_cuda_pci_bus_id(int device, char** out) {
  TS_TRY
#ifdef TSHIM_CUDA
  char id[64] = {0};
  auto st = cudaDeviceGetPCIBusId(id, static_cast<int>(sizeof id), device);
  if (st != cudaSuccess)
    throw std::runtime_error("PCI bus id of cuda:" + std::to_string(device) + ": " + cudaGetErrorString(st));
  *out = strdup(id);
#else
  (void)device;
  *out = strdup("");
#endif
  TS_CATCH
}

ts_err ts_cuda_memory(int device, int64_t* allocated, int64_t* reserved, int64_t* peak) {
  TS_TRY
  *allocated = 0;
  *reserved = 0;
  *peak = 0;
#ifdef TSHIM_CUDA
  if (at::hasCUDA()) {
    auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device));
    const size_t agg = 0;  // StatType::AGGREGATE; the enum moved namespaces across 2.x releases
    *allocated = stats.allocated_bytes[agg].current;
    *reserved = stats.reserved_bytes[agg].current;
    *peak = stats.allocated_bytes[agg].peak;
  }
#else
  (void)device;
#endif
  TS_CATCH
}

ts_err ts_cuda_reset_peak(int device) {
  TS_TRY
#ifdef TSHIM_CUDA
  if (at::hasCUDA()) c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(device));
#else
  (void)device;
#endif
  TS_CATCH
}

ts_err ts_cuda_empty_cache(void) {
  TS_TRY
#ifdef TSHIM_CUDA
  if (at::hasCUDA()) c10::cuda::CUDACachingAllocator::emptyCache();
#endif
  TS_CATCH
}

ts_err ts_gen_new(int device, uint64_t seed, ts_gen* out) {
  TS_TRY
  auto base = at::globalContext().defaultGenerator(tshim::device_of(device));
  at::Generator g;
  {
    std::lock_guard<std::mutex> lock(base.mutex());
    g = base.clone();
  }
  g.set_current_seed(seed);
  *out = new ts_gen_s{std::move(g)};
  TS_CATCH
}

ts_err ts_gen_free(ts_gen g) {
  TS_TRY
  delete g;
  TS_CATCH
}

ts_err ts_gen_seed(ts_gen g, uint64_t* out) {
  TS_TRY
  if (g == nullptr) throw std::invalid_argument("generator handle is NULL");
  *out = g->g.current_seed();
  TS_CATCH
}

ts_err ts_gen_get_state(ts_gen g, ts_tensor* out) {
  TS_TRY
  if (g == nullptr) throw std::invalid_argument("generator handle is NULL");
  std::lock_guard<std::mutex> lock(g->g.mutex());
  *out = wrap(g->g.get_state());
  TS_CATCH
}

ts_err ts_gen_set_state(ts_gen g, ts_tensor state) {
  TS_TRY
  if (g == nullptr) throw std::invalid_argument("generator handle is NULL");
  std::lock_guard<std::mutex> lock(g->g.mutex());
  g->g.set_state(T(state));
  TS_CATCH
}

}  // extern "C"

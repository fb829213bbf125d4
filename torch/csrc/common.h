// common.h — what every shim source shares: handle layout, dtype/device
// mapping, and the one catch-all macro that turns a C++ exception into the
// function's returned error. Not part of the C ABI.
#pragma once

#define TORCH_ASSERT_ONLY_METHOD_OPERATORS
#include <ATen/core/Tensor.h>
#include <ATen/core/Generator.h>
#include <c10/core/ScalarType.h>
#include <c10/util/Exception.h>
#include <torch/csrc/api/include/torch/version.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../tshim.h"

struct ts_tensor_s {
  at::Tensor t;
};
struct ts_gen_s {
  at::Generator g;
};

#define TS_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace tshim {

ts_err make_err(const char* msg);

inline ts_tensor wrap(at::Tensor t) { return new ts_tensor_s{std::move(t)}; }

inline const at::Tensor& T(ts_tensor h) {
  if (h == nullptr) throw std::invalid_argument("tensor handle is NULL (freed or never set)");
  return h->t;
}

// Optional tensor argument: NULL becomes an undefined tensor.
inline at::Tensor opt(ts_tensor h) { return h == nullptr ? at::Tensor() : h->t; }

at::ScalarType dtype_of(int code);
int code_of(at::ScalarType st);
at::Device device_of(int code);
int code_of(const at::Device& d);
at::TensorOptions options(int dtype, int device);
std::vector<at::Tensor> tensors(const ts_tensor* ts, int n);

// The type reduced-precision math is carried out in: float32, or float64 for
// float64 inputs (so gradient checks in double stay exact).
inline at::ScalarType compute_type(at::ScalarType st) { return st == at::kDouble ? at::kDouble : at::kFloat; }

// While one lives on a thread, op counting (opcount.cc) sees the ATen calls
// made there as one kernel: for a call that runs as one fused kernel on the
// GPU and decomposes where it runs here.
struct OneKernel {
  explicit OneKernel(const char* name);
  ~OneKernel();
  OneKernel(const OneKernel&) = delete;
  OneKernel& operator=(const OneKernel&) = delete;
};

// CPU kernels for no-grad generation (attention_cpu.cc, cpu_fast.cc), on
// threads that asked for them (generation_kernels). Each returns false,
// having done nothing, when it is off or its inputs are not its case
// (another device or dtype, a gradient wanted, an unsupported layout).
bool generation_kernels();
bool varlen_attention_cpu(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& cu_q,
                          const at::Tensor& cu_k, const at::Tensor& seqused_k, bool causal, double scale,
                          int64_t max_work, at::Tensor* out, std::vector<std::array<int64_t, 4>>* rest);
bool linear_cpu(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, at::Tensor* out);
// x (M, in), unit stride along in; w (out, in); b (out) or undefined
bool linear_rows_cpu(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, at::Tensor* out);
// The vector code the CPU kernels run, chosen once per process so that it
// rounds one way throughout: 2 AVX-512, 1 AVX2 with FMA, 0 the baseline.
int simd_level();
const char* simd_name();  // "avx512", "avx2", "baseline"
// Whether ATen's CPU GEMM for st (bfloat16, float16) sums in st rather than
// in float32 in this process (cpu_level.cc: libtorch 1.13 without oneDNN).
bool reduced_gemm_rounds(at::ScalarType st);
// t is a bfloat16 or float16 CPU tensor whose GEMMs ATen would sum in its
// type: the caller computes them in float32 and rounds once.
bool cpu_gemm_in_float(const at::Tensor& t);
bool rope_cpu(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin_signed, at::Tensor* out);
bool rms_norm_cpu(const at::Tensor& x, const at::Tensor& w, double eps, at::Tensor* out);

}  // namespace tshim

// Every exported function body sits between TS_TRY and TS_CATCH: success
// returns NULL, any exception becomes a malloc'd message.
#define TS_TRY try {
#define TS_CATCH                                                   \
  }                                                                \
  catch (const c10::Error& e) {                                    \
    return tshim::make_err(e.what_without_backtrace());            \
  }                                                                \
  catch (const std::exception& e) {                                \
    return tshim::make_err(e.what());                              \
  }                                                                \
  catch (...) {                                                    \
    return tshim::make_err("unknown C++ exception");               \
  }                                                                \
  return nullptr;

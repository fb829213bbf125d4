// cpu_level.cc — the instruction-set level this process runs at on the CPU:
// the best the CPU has (AVX-512, AVX2 with FMA, or the x86-64 baseline), or
// a lesser one named by TROUPE_CPU_SIMD=avx2 or baseline, so that one
// machine can run what a machine of a lesser level runs.
//
// The level decides two things:
//   - which variant of troupe's own vector code runs (simd.h's TS_PICK:
//     linear_cpu.cc, attention_cpu.cc), chosen once so a process rounds one
//     way throughout;
//   - whether ATen may use oneDNN for its bfloat16 GEMMs. ATen does so only
//     on CPUs with AVX-512 (libtorch 1.13 asks for avx512bw/vl/dq); on
//     others it runs its own GEMM. When TROUPE_CPU_SIMD lowers the level
//     below AVX-512, the shim switches oneDNN off in ATen (at::Context's
//     user flag), so an AVX-512 machine told TROUPE_CPU_SIMD=avx2 takes the
//     GEMMs an AVX2 machine takes.
// ATen's own vectorised kernels follow ATEN_CPU_CAPABILITY
// (default, avx2, avx512), which ATen reads itself; set it beside
// TROUPE_CPU_SIMD to run ATen at the same level (internal/cpulevel sets
// both, and oneDNN's and OpenBLAS's own, for the tests).
//
// It also says whether ATen's CPU GEMM for bfloat16 or float16 sums in
// that type (reduced_gemm_rounds): libtorch 1.13's own GEMM adds every
// product into the rounded output, so a sum of K products is rounded K
// times instead of once (and runs 10–70× slower than float32's BLAS);
// PyTorch 2's kernels and oneDNN sum in float32. Where it would, nn.cc and
// fused.cc compute in float32 (cpu_gemm_in_float).
//
// What it is not: a way to raise the level above what the CPU has (an
// unknown or higher name leaves the CPU's best).
#include "common.h"

#include <ATen/Context.h>
#include <ATen/ops/full.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/ones.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace tshim {

int simd_level() {
  static const int level = [] {
    int best = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq"))
      best = 2;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      best = 1;
#endif
    const char* want = std::getenv("TROUPE_CPU_SIMD");
    const int cap = want == nullptr ? 2 : std::strcmp(want, "avx2") == 0 ? 1 : std::strcmp(want, "baseline") == 0 ? 0 : 2;
    if (cap < best && cap < 2) at::globalContext().setUserEnabledMkldnn(false);  // ATen's GEMMs as without AVX-512
    return std::min(best, cap);
  }();
  return level;
}

// The probe: a (16, 257) row [1, s, s, …, s] times ones (257, 16), with s
// below half the type's spacing at 1 (2⁻⁹ in bfloat16, 2⁻¹² in float16), so
// that 1 + s rounds back to 1 while the float32 sum, 1 + 256·s, is exact in
// the type. Large enough for oneDNN (libtorch 1.13 sends GEMMs of up to
// 16³ multiply-adds to its own kernel even where oneDNN serves), run once
// per type after the level is set.
bool reduced_gemm_rounds(at::ScalarType st) {
  auto probe = [](at::ScalarType t) {
    const double s = t == at::kHalf ? 0x1p-12 : 0x1p-9;
    auto a = at::full({16, 257}, s, at::TensorOptions().dtype(at::kFloat));
    a.select(1, 0).fill_(1.0);
    try {
      auto y = at::mm(a.to(t), at::ones({257, 16}, at::TensorOptions().dtype(t)));
      return y.to(at::kDouble).sub(1.0 + 256 * s).abs().max().item<double>() > 0;
    } catch (const c10::Error&) {
      return true;  // no CPU GEMM for the type (float16 in libtorch 1.13): float32 it is
    }
  };
  simd_level();
  if (st == at::kBFloat16) {
    static const bool bf16 = probe(at::kBFloat16);
    return bf16;
  }
  if (st == at::kHalf) {
    static const bool f16 = probe(at::kHalf);
    return f16;
  }
  return false;
}

bool cpu_gemm_in_float(const at::Tensor& t) {
  const auto st = t.scalar_type();
  return t.device().is_cpu() && (st == at::kBFloat16 || st == at::kHalf) && reduced_gemm_rounds(st);
}

const char* simd_name() {
  static const char* names[] = {"baseline", "avx2", "avx512"};
  return names[simd_level()];
}

}  // namespace tshim

extern "C" {

ts_err ts_cpu_kernels_variant(const char** out) {
  TS_TRY
  *out = tshim::simd_name();
  TS_CATCH
}

}  // extern "C"

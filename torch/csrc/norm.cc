// norm.cc — RMSNorm as Hugging Face's Qwen models define it:
//   y = w · (x / √(mean(x²) + eps))
// with the normalisation computed in float32 (float64 for float64 input),
// cast back to x's dtype, and only then scaled by w in that dtype. In bf16
// the order matters: scaling before the cast (at::rms_norm with a weight,
// one rounding) differs from Hugging Face's (two roundings) in the last bit
// of some outputs.
//
// Two ways to compute it, with the same rounding:
//   - explicit ATen ops (cast, square, mean, add, rsqrt, multiply, cast,
//     scale): eight kernels in bf16, on every build;
//   - on CUDA, where this file is compiled with TSHIM_FUSED_RMS_NORM
//     (scripts/gpu/build-shim.sh, when the wheel has the op and it compiles),
//     ATen's fused kernel without a weight — it normalises in float32 and
//     casts once — then the scale: two kernels. It differs from the explicit
//     ops only in the order of the float32 sum of squares. Its backward is
//     ATen's own (_fused_rms_norm_backward).
// The caller chooses per call (the Go side's torch.SetFusedRMSNorm), so the
// two can be compared in one process.
#include "common.h"

#include <ATen/ops/mean.h>
#include <ATen/ops/rsqrt.h>
#ifdef TSHIM_FUSED_RMS_NORM
#include <ATen/ops/_fused_rms_norm.h>
#endif

#include <optional>

using tshim::T;
using tshim::wrap;

extern "C" {

ts_err ts_rms_norm(ts_tensor x, ts_tensor w, double eps, int fused, ts_tensor* out) {
  TS_TRY
  const auto& in = T(x);
#ifdef TSHIM_FUSED_RMS_NORM
  if (fused && in.is_cuda()) {
    auto normed = std::get<0>(at::_fused_rms_norm(in, {in.size(-1)}, std::nullopt, eps));  // x's dtype
    *out = wrap(T(w).mul(normed));
    return nullptr;
  }
#else
  (void)fused;
#endif
  at::Tensor fast;
  if (tshim::rms_norm_cpu(in, T(w), eps, &fast)) {  // no grad (cpu_fast.cc)
    *out = wrap(fast);
    return nullptr;
  }
  auto h = in.to(tshim::compute_type(in.scalar_type()));
  auto variance = at::mean(h.mul(h), {-1}, /*keepdim=*/true);
  auto normed = h.mul(at::rsqrt(variance.add(eps))).to(in.scalar_type());
  *out = wrap(T(w).mul(normed));
  TS_CATCH
}

ts_err ts_rms_norm_fused(int* out) {
  TS_TRY
#ifdef TSHIM_FUSED_RMS_NORM
  *out = 1;
#else
  *out = 0;
#endif
  TS_CATCH
}

}  // extern "C"

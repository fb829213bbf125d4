// cpu_fast.cc — generation's small ops on the CPU without autograd: the
// choice of linear_cpu.cc's kernel for the linear layers, the rotary
// embedding and RMSNorm as single passes over the data, and the thread's
// switch.
//
// Why: a decode step of a small model is many small ops. A GEMM of a few
// rows makes OpenBLAS (Debian's 0.3.21) pack the whole weight matrix before
// multiplying — the weights cross memory three times where a kernel built
// for few rows reads them once — and the explicit math of
// RoPE and RMSNorm is 4–8 ATen ops each with their temporaries. These paths
// take over only for CPU tensors of float32 or float64 that need no gradient
// (generation); training and every other device keep nn.cc's and norm.cc's
// ATen math, whose results these equal up to the order of float sums (RoPE:
// exactly).
//
// What it is not: a general CPU kernel library; nothing here is
// differentiable.
#include "common.h"

#include <ATen/core/grad_mode.h>
#include <ATen/ops/empty.h>

#include <cmath>

namespace {

// ts_set_generation_kernels: 0 off, 1 generation (a prefill), 2 a decode
// step. linear_cpu runs its kernel in a decode step from AVX2 up, in a
// prefill on AVX-512.
thread_local int mode = 0;

bool plain(const at::Tensor& t) {
  return mode > 0 && t.device().is_cpu() && (t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble) &&
         !(at::GradMode::is_enabled() && t.requires_grad());
}

template <typename S>
void rope_rows(const S* x, const S* c, const S* s, S* y, int64_t rows, int64_t heads, int64_t D, int64_t xs0,
               int64_t xs1, int64_t cs0, int64_t ss0) {
  const int64_t h2 = D / 2;
  for (int64_t r = 0; r < rows; r++) {
    const S* cr = c + r * cs0;
    const S* sr = s + r * ss0;
    for (int64_t h = 0; h < heads; h++) {
      const S* xr = x + r * xs0 + h * xs1;
      S* yr = y + (r * heads + h) * D;
      for (int64_t d = 0; d < h2; d++) yr[d] = xr[d] * cr[d] + xr[d + h2] * sr[d];
      for (int64_t d = h2; d < D; d++) yr[d] = xr[d] * cr[d] + xr[d - h2] * sr[d];
    }
  }
}

template <typename S>
void rms_rows(const S* x, const S* w, S* y, int64_t rows, int64_t D, int64_t xs0, double eps) {
  for (int64_t r = 0; r < rows; r++) {
    const S* xr = x + r * xs0;
    S acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t d = 0;
    for (; d + 8 <= D; d += 8)
      for (int u = 0; u < 8; u++) acc[u] += xr[d + u] * xr[d + u];
    S ss = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (; d < D; d++) ss += xr[d] * xr[d];
    const S inv = S(1) / std::sqrt(ss / S(D) + S(eps));
    S* yr = y + r * D;
    for (d = 0; d < D; d++) yr[d] = w[d] * (xr[d] * inv);
  }
}

}  // namespace

namespace tshim {

bool generation_kernels() { return mode > 0; }

// x (…, in) times w (out, in)ᵀ plus b through linear_cpu.cc's kernel, which
// gives a row the same bits whatever rows share the call: in a decode step
// where the CPU has AVX2 or AVX-512 (BLAS's GEMM packs the weights for a
// handful of rows, the kernel reads them once), and in a prefill too where
// it has AVX-512 (OpenBLAS 0.3.21 runs its AVX2 kernels there). Elsewhere
// ATen's GEMM is faster and is kept (docs/performance.md has the
// measurements).
bool linear_cpu(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, at::Tensor* out) {
  if (mode == 0 || simd_level() < (mode == 2 ? 1 : 2) || !plain(x) || !plain(w) || (b.defined() && !plain(b)) ||
      w.scalar_type() != x.scalar_type())
    return false;
  if (x.dim() < 1 || w.dim() != 2 || x.size(-1) != w.size(1) || x.stride(-1) != 1) return false;
  if (x.dim() == 2) return linear_rows_cpu(x, w, b, out);
  auto sizes = x.sizes().vec();
  if (!linear_rows_cpu(x.reshape({-1, x.size(-1)}), w, b, out)) return false;
  sizes.back() = w.size(0);
  *out = out->view(sizes);
  return true;
}

// x (N, H, D) with unit stride along D, cos and sin_signed (N, 1, D) or (N, D).
bool rope_cpu(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin_signed, at::Tensor* out) {
  if (!plain(x) || cos.scalar_type() != x.scalar_type() || sin_signed.scalar_type() != x.scalar_type()) return false;
  if (!cos.device().is_cpu() || !sin_signed.device().is_cpu() || x.dim() != 3) return false;
  const int64_t N = x.size(0), H = x.size(1), D = x.size(2);
  auto c = cos.reshape({-1, cos.size(-1)}), s = sin_signed.reshape({-1, sin_signed.size(-1)});
  if (c.size(0) != N || s.size(0) != N || c.size(1) != D || s.size(1) != D || D % 2 != 0) return false;
  if (x.stride(2) != 1 || c.stride(1) != 1 || s.stride(1) != 1) return false;
  *out = at::empty({N, H, D}, x.options());
  if (x.scalar_type() == at::kFloat)
    rope_rows<float>(x.data_ptr<float>(), c.data_ptr<float>(), s.data_ptr<float>(), out->data_ptr<float>(), N, H, D,
                     x.stride(0), x.stride(1), c.stride(0), s.stride(0));
  else
    rope_rows<double>(x.data_ptr<double>(), c.data_ptr<double>(), s.data_ptr<double>(), out->data_ptr<double>(), N, H,
                      D, x.stride(0), x.stride(1), c.stride(0), s.stride(0));
  return true;
}

// x (…, D): a matrix with unit stride along D, or contiguous; w (D).
bool rms_norm_cpu(const at::Tensor& x, const at::Tensor& w, double eps, at::Tensor* out) {
  if (!plain(x) || !plain(w) || w.scalar_type() != x.scalar_type() || w.dim() != 1 || !w.is_contiguous()) return false;
  if (x.dim() < 1 || x.size(-1) != w.size(0) || x.stride(-1) != 1) return false;
  const int64_t D = x.size(-1), rows = D ? x.numel() / D : 0;
  int64_t xs0 = D;  // rows one stride apart: a matrix, or contiguous
  if (x.dim() == 2)
    xs0 = x.stride(0);
  else if (!x.is_contiguous())
    return false;
  *out = at::empty(x.sizes(), x.options());
  if (x.scalar_type() == at::kFloat)
    rms_rows<float>(x.data_ptr<float>(), w.data_ptr<float>(), out->data_ptr<float>(), rows, D, xs0, eps);
  else
    rms_rows<double>(x.data_ptr<double>(), w.data_ptr<double>(), out->data_ptr<double>(), rows, D, xs0, eps);
  return true;
}

}  // namespace tshim

extern "C" {

ts_err ts_set_generation_kernels(int on, int* previous) {
  TS_TRY
  if (on < 0 || on > 2) throw std::invalid_argument("generation kernels: mode " + std::to_string(on) + " is not 0, 1 or 2");
  if (previous) *previous = mode;
  mode = on;
  TS_CATCH
}

}  // extern "C"

// autograd.cc — requires_grad, backward, grads, grad mode, grad-norm clipping.
//
// Grad mode is thread-local in libtorch; the Go side only changes it inside
// torch.NoGrad, which pins its goroutine to one OS thread for the duration.
#include "common.h"

#include <ATen/core/grad_mode.h>
#if defined(TSHIM_CUDA)
#include <ATen/ops/_foreach_mul.h>
#include <ATen/ops/_foreach_norm.h>
#include <ATen/ops/stack.h>
#endif

#include <cmath>

using tshim::T;
using tshim::wrap;

extern "C" {

ts_err ts_requires_grad(ts_tensor t, int* out) {
  TS_TRY
  *out = T(t).requires_grad() ? 1 : 0;
  TS_CATCH
}

ts_err ts_set_requires_grad(ts_tensor t, int on) {
  TS_TRY
  at::Tensor x = T(t);
  x.set_requires_grad(on != 0);
  TS_CATCH
}

ts_err ts_backward(ts_tensor t, ts_tensor grad) {
  TS_TRY
  T(t).backward(tshim::opt(grad));
  TS_CATCH
}

ts_err ts_grad(ts_tensor t, ts_tensor* out) {
  TS_TRY
  const auto& g = T(t).grad();
  *out = g.defined() ? wrap(g) : nullptr;
  TS_CATCH
}

ts_err ts_detach(ts_tensor t, ts_tensor* out) {
  TS_TRY
  *out = wrap(T(t).detach());
  TS_CATCH
}

ts_err ts_zero_grad(ts_tensor t) {
  TS_TRY
  at::Tensor x = T(t);
  x.mutable_grad() = at::Tensor();
  TS_CATCH
}

ts_err ts_set_grad(ts_tensor t, ts_tensor grad) {
  TS_TRY
  at::Tensor x = T(t);
  at::Tensor g = tshim::opt(grad);
  if (g.defined() && (g.sizes() != x.sizes() || g.scalar_type() != x.scalar_type() || g.device() != x.device()))
    throw std::invalid_argument("set_grad: the grad's shape, dtype or device differs from the tensor's");
  x.mutable_grad() = g;
  TS_CATCH
}

ts_err ts_set_grad_enabled(int on, int* previous) {
  TS_TRY
  if (previous) *previous = at::GradMode::is_enabled() ? 1 : 0;
  at::GradMode::set_enabled(on != 0);
  TS_CATCH
}

ts_err ts_is_grad_enabled(int* out) {
  TS_TRY
  *out = at::GradMode::is_enabled() ? 1 : 0;
  TS_CATCH
}

#if defined(TSHIM_CUDA) && TS_AT_LEAST(2, 6)
namespace {
// clip_cuda is ts_clip_grad_norm for grads that are all on one CUDA device:
// one multi-tensor launch for the float32 norms, one for the scaling,
// instead of a few launches (and a float32 copy) per grad. The norm is
// summed in another order than the loop below, so its last bits may differ.
bool clip_cuda(const std::vector<at::Tensor>& grads, double max_norm, double* total_norm) {
  if (grads.empty() || !grads[0].is_cuda()) return false;
  for (const auto& g : grads) {
    if (g.device() != grads[0].device() || g.is_sparse()) return false;
  }
  auto norms = at::_foreach_norm(grads, 2, at::kFloat);
  double total = at::stack(norms).norm().item<double>();
  *total_norm = total;
  if (max_norm > 0 && std::isfinite(total) && total > max_norm) at::_foreach_mul_(grads, max_norm / (total + 1e-6));
  return true;
}
}  // namespace
#endif

ts_err ts_clip_grad_norm(const ts_tensor* params, int n, double max_norm, double* total_norm) {
  TS_TRY
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> grads;
#if defined(TSHIM_CUDA) && TS_AT_LEAST(2, 6)
  for (int i = 0; i < n; i++) {
    const auto& g = T(params[i]).grad();
    if (g.defined()) grads.push_back(g);
  }
  if (clip_cuda(grads, max_norm, total_norm)) return nullptr;
  grads.clear();
#endif
  at::Tensor sq;  // running sum of squares, f32, on the grads' device
  for (int i = 0; i < n; i++) {
    const auto& g = T(params[i]).grad();
    if (!g.defined()) continue;
    grads.push_back(g);
    auto gf = g.to(tshim::compute_type(g.scalar_type()));
    auto s = gf.mul(gf).sum();
    sq = sq.defined() ? sq.add(s.to(sq.device())) : s;
  }
  double total = sq.defined() ? std::sqrt(sq.item<double>()) : 0.0;
  *total_norm = total;
  if (max_norm > 0 && std::isfinite(total) && total > max_norm) {
    double coef = max_norm / (total + 1e-6);
    for (auto& g : grads) g.mul_(coef);
  }
  TS_CATCH
}

}  // extern "C"

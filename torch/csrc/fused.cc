// fused.cc — log-probabilities of target tokens straight from hidden states,
// projecting onto the vocabulary chunk by chunk in the forward pass and again
// in the backward pass, as a custom autograd function.
//
// Why: a policy update needs log π(y_t) at every response token. Projecting
// N hidden states onto a vocabulary of V = 151,936 and letting autograd keep
// the float32 logits for the backward pass costs N·V·4 bytes (20 GB for
// 8 × 4096 tokens). Here only the hidden states, the weight, the targets and
// one log-sum-exp per token are saved; each backward chunk recomputes its
// logits. The price is one extra chunked projection in the backward pass.
//
// Math (z = h·Wᵀ / T per row, p = softmax(z), lse = log Σ exp z):
//   logp    = z[y] − lse                      ∂logp/∂z = onehot(y) − p
//   entropy = lse − Σ p·z                     ∂H/∂z    = −p·(z − Σ p·z)
// This file is the only one that includes the autograd Function header (it
// costs ~10 s to compile); everything else uses per-op headers.
#include "common.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/gather.h>
#include <ATen/ops/logsumexp.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <torch/csrc/autograd/custom_function.h>

using tshim::T;
using tshim::wrap;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

namespace {

struct LinearTokenLogProbs : public torch::autograd::Function<LinearTokenLogProbs> {
  // logits of rows [s, s+n) in the compute type, divided by the temperature;
  // rounded to w's type first, as a GEMM in that type rounds them. w32: w in
  // float32 where ATen's GEMM would sum in w's type (cpu_level.cc), else
  // undefined.
  static at::Tensor logits(const at::Tensor& h, const at::Tensor& w, const at::Tensor& w32, int64_t s, int64_t n,
                           double inv_temp, at::ScalarType ct) {
    const auto hs = h.narrow(0, s, n);
    auto z = w32.defined() ? at::matmul(hs.to(at::kFloat), w32.t()).to(w.scalar_type()) : at::matmul(hs, w.t());
    return z.to(ct).mul(inv_temp);  // (n,V)
  }

  static at::Tensor float_weight(const at::Tensor& w) {
    return tshim::cpu_gemm_in_float(w) ? w.to(at::kFloat) : at::Tensor();
  }

  static variable_list forward(AutogradContext* ctx, at::Tensor h, at::Tensor w, at::Tensor targets, double inv_temp,
                               int64_t chunk, bool want_entropy) {
    const int64_t N = h.size(0);
    const auto ct = tshim::compute_type(h.scalar_type());
    auto opts = h.options().dtype(ct);
    auto logp = at::empty({N}, opts);
    auto lse_all = at::empty({N}, opts);
    auto entropy = want_entropy ? at::empty({N}, opts) : at::zeros({N}, opts);
    const auto w32 = float_weight(w);
    for (int64_t s = 0; s < N; s += chunk) {
      const int64_t n = std::min(chunk, N - s);
      auto z = logits(h, w, w32, s, n, inv_temp, ct);
      auto lse = at::logsumexp(z, {-1}, /*keepdim=*/true);  // (n,1)
      auto picked = at::gather(z, 1, targets.narrow(0, s, n).unsqueeze(1));
      logp.narrow(0, s, n).copy_(picked.sub(lse).squeeze(1));
      lse_all.narrow(0, s, n).copy_(lse.squeeze(1));
      if (want_entropy) {
        auto p = at::exp(z.sub(lse));
        entropy.narrow(0, s, n).copy_(lse.squeeze(1).sub(at::sum(p.mul(z), {-1})));
      }
    }
    ctx->save_for_backward({h, w, targets, lse_all});
    ctx->saved_data["inv_temp"] = inv_temp;
    ctx->saved_data["chunk"] = chunk;
    return {logp, entropy};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const auto& h = saved[0];
    const auto& w = saved[1];
    const auto& targets = saved[2];
    const auto& lse_all = saved[3];
    const double inv_temp = ctx->saved_data["inv_temp"].toDouble();
    const int64_t chunk = ctx->saved_data["chunk"].toInt();
    const auto& g_logp = grads[0];
    const auto& g_ent = grads[1];
    const int64_t N = h.size(0);
    const auto ct = tshim::compute_type(h.scalar_type());
    auto grad_h = at::zeros_like(h);
    auto grad_w = at::zeros(w.sizes(), w.options().dtype(ct));
    const auto w32 = float_weight(w);
    for (int64_t s = 0; s < N; s += chunk) {
      const int64_t n = std::min(chunk, N - s);
      auto z = logits(h, w, w32, s, n, inv_temp, ct);
      auto p = at::exp(z.sub(lse_all.narrow(0, s, n).unsqueeze(1)));  // (n,V)
      auto gz = at::zeros_like(z);
      if (g_logp.defined()) {
        auto gl = g_logp.narrow(0, s, n).to(ct).unsqueeze(1);  // (n,1)
        gz.sub_(p.mul(gl));
        gz.scatter_add_(1, targets.narrow(0, s, n).unsqueeze(1), gl);
      }
      if (g_ent.defined()) {
        auto ge = g_ent.narrow(0, s, n).to(ct).unsqueeze(1);
        auto mean_z = at::sum(p.mul(z), {-1}, /*keepdim=*/true);
        gz.sub_(p.mul(z.sub(mean_z)).mul(ge));
      }
      gz.mul_(inv_temp);
      auto hc = h.narrow(0, s, n);
      // gz in w's type, then gz·W summed in float32: by oneDNN, or here
      auto gzw = gz.to(w.scalar_type());
      grad_h.narrow(0, s, n).copy_(w32.defined() ? at::matmul(gzw.to(at::kFloat), w32) : at::matmul(gzw, w));
      grad_w.add_(at::matmul(gz.t(), hc.to(ct)));
    }
    return {grad_h, grad_w.to(w.scalar_type()), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

extern "C" {

ts_err ts_linear_token_logprobs(ts_tensor hidden, ts_tensor weight, ts_tensor targets, double temperature,
                                int64_t chunk, int want_entropy, ts_tensor* logp, ts_tensor* entropy) {
  TS_TRY
  const auto& h = T(hidden);
  const auto& w = T(weight);
  const auto& t = T(targets);
  if (h.dim() != 2 || w.dim() != 2 || t.dim() != 1 || h.size(1) != w.size(1) || t.size(0) != h.size(0))
    throw std::invalid_argument("linear_token_logprobs: want hidden (N,D), weight (V,D), targets (N)");
  if (chunk <= 0) throw std::invalid_argument("linear_token_logprobs: chunk must be > 0");
  double inv_temp = temperature > 0 ? 1.0 / temperature : 1.0;
  auto out = LinearTokenLogProbs::apply(h, w, t, inv_temp, chunk, want_entropy != 0);
  *logp = wrap(out[0]);
  *entropy = want_entropy ? wrap(out[1]) : nullptr;
  TS_CATCH
}

}  // extern "C"

// fused.cc — log-probabilities of target tokens straight from hidden states,
// projecting onto the vocabulary chunk by chunk in the forward pass and again
// in the backward pass, as a custom autograd function.
//
// Why: a policy update needs log π(y_t) at every response token. Projecting
// N hidden states onto a vocabulary of V = 151,936 and letting autograd keep
// the float32 logits for the backward pass costs N·V·4 bytes (20 GB for
// 8 × 4096 tokens). Here only the hidden states, the weight and the targets
// are saved; each backward chunk recomputes its logits. The price is one
// extra chunked projection in the backward pass.
//
// Math (z = h·Wᵀ / T per row, q = log_softmax(z), p = exp q):
//   logp    = q[y]                 ∂logp/∂z = onehot(y) − p
//   entropy = −Σ p·q               ∂H/∂z    = −p·(q + H)
// and ∂/∂(h·Wᵀ) = ∂/∂z / T, folded into the per-row upstream grads.
//
// Work done besides the GEMMs, per chunk of n rows:
//   forward   logits (n,V) in w's type; at T ≠ 1 only, one float32 copy
//             divided by T; log_softmax in float32 (one pass that reads the
//             logits in their type); a gather. With the entropy: exp and a
//             row sum of p·q.
//   backward  logits again; softmax in float32; × the row's grad; the
//             target's grad added; rounded to w's type for the two GEMMs.
//             The entropy's part only when the loss used the entropy: its
//             grad is undefined otherwise (set_materialize_grads(false)), so
//             a forward that computed the entropy for a metric costs no
//             backward work for it.
// No (N,V) tensor exists at any time, float32 or otherwise: at most a few
// (n,V) ones per chunk (the memory formula is in docs/gpu.md).
//
// The GEMMs. grad_h = gz·W runs in w's type (sums in float32, as every
// backend does for bf16). grad_w = Σ_chunks gzᵀ·h:
//   - CUDA, bf16/f16 weights: in w's type on tensor cores, summed over the
//     chunks in a float32 buffer in place (addmm with out_dtype, torch ≥
//     2.8; before, each chunk's product rounds to w's type once and is
//     added in float32); one chunk: the GEMM's own output, no buffer;
//   - otherwise (the CPU, float32 or float64 weights): in float32 (float64
//     for float64), added in place chunk after chunk — the CPU's
//     deliberate float32 path for bf16 (cpu_level.cc).
// Where ATen's CPU GEMM would sum bf16/f16 in its own type
// (tshim::cpu_gemm_in_float), the logits and grad_h GEMMs run on a float32
// copy of the weight and round once, as a GEMM in that type would.
//
// This file is the only one that includes the autograd Function header (it
// costs ~10 s to compile); everything else uses per-op headers.
#include "common.h"

#include <ATen/ops/addmm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/gather.h>
#include <ATen/ops/log_softmax.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/zeros.h>
#include <torch/csrc/autograd/custom_function.h>

#include <atomic>
#include <cstdio>

using tshim::T;
using tshim::wrap;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

namespace {

// Rows whose entropy gradient a backward has computed, since the process
// started (ts_linear_token_logprobs_entropy_backward_rows: tests).
std::atomic<int64_t> entropy_backward_rows{0};

// Set when addmm with out_dtype (torch ≥ 2.8) refused a GEMM: from then on
// each chunk's product rounds to w's type before the float32 sum.
std::atomic<bool> out_dtype_refused{false};

bool reduced(at::ScalarType st) { return st == at::kBFloat16 || st == at::kHalf; }

// Whether grad_w's GEMMs run in w's type with float32 sums (see the header).
bool gemm_in_type(const at::Tensor& w) { return w.is_cuda() && reduced(w.scalar_type()); }

// grad_w's float32 sum over the chunks, for gemm_in_type weights.
class Float32Sum {
 public:
  // sum (+)= aᵀ·b with a (n,V) and b (n,D) in w's type
  void add(const at::Tensor& a, const at::Tensor& b) {
#if TS_AT_LEAST(2, 8)
    if (!out_dtype_refused.load()) {
      try {
        if (!sum_.defined()) sum_ = at::zeros({a.size(1), b.size(1)}, b.options().dtype(at::kFloat));
        at::addmm_out(sum_, sum_, a.t(), b, at::kFloat);  // in place: the GEMM adds into the float32 sum
        sum_started_ = true;
        return;
      } catch (const c10::Error& e) {
        if (!out_dtype_refused.exchange(true))
          std::fprintf(stderr, "troupe: addmm with a float32 output refused (%s); the head's weight grad rounds each chunk's product to the weight's type instead\n",
                       e.what_without_backtrace());
        if (!sum_started_) sum_ = at::Tensor();
      }
    }
#endif
    auto part = at::mm(a.t(), b);  // (V,D) in w's type, summed in float32 by the GEMM
    if (sum_started_)
      sum_.add_(part);
    else
      sum_ = part.to(at::kFloat);
    sum_started_ = true;
  }

  const at::Tensor& sum() const { return sum_; }

 private:
  at::Tensor sum_;  // (V,D) float32
  bool sum_started_ = false;
};

struct LinearTokenLogProbs : public torch::autograd::Function<LinearTokenLogProbs> {
  // logits of rows [s, s+n) in w's type (n,V); w32: w in float32 where
  // ATen's GEMM would sum in w's type (cpu_level.cc), else undefined — then
  // the float32 GEMM's output is rounded to w's type, as such a GEMM would.
  static at::Tensor logits(const at::Tensor& h, const at::Tensor& w, const at::Tensor& w32, int64_t s, int64_t n) {
    const auto hs = h.narrow(0, s, n);
    return w32.defined() ? at::mm(hs.to(at::kFloat), w32.t()).to(w.scalar_type()) : at::mm(hs, w.t());
  }

  // the logits divided by the temperature, in ct; at T = 1 the logits as
  // they are (softmax and log_softmax take them in their type and compute
  // in ct), so no pass over (n,V) is spent on a multiply by 1
  static at::Tensor tempered(at::Tensor z, double inv_temp, at::ScalarType ct) {
    if (inv_temp == 1.0) return z;
    auto scaled = z.to(ct);
    z.reset();  // the logits in w's type are not needed any more
    return scaled.mul_(inv_temp);
  }

  static at::Tensor float_weight(const at::Tensor& w) {
    return tshim::cpu_gemm_in_float(w) ? w.to(at::kFloat) : at::Tensor();
  }

  static variable_list forward(AutogradContext* ctx, at::Tensor h, at::Tensor w, at::Tensor targets, double inv_temp,
                               int64_t chunk, bool want_entropy) {
    ctx->set_materialize_grads(false);  // an output nobody differentiates gets no backward work
    const int64_t N = h.size(0);
    const auto ct = tshim::compute_type(h.scalar_type());
    auto opts = h.options().dtype(ct);
    auto logp = at::empty({N}, opts);
    auto entropy = want_entropy ? at::empty({N}, opts) : at::Tensor();
    const auto w32 = float_weight(w);
    for (int64_t s = 0; s < N; s += chunk) {
      const int64_t n = std::min(chunk, N - s);
      auto z = tempered(logits(h, w, w32, s, n), inv_temp, ct);
      auto q = at::log_softmax(z, -1, ct);  // (n,V)
      z.reset();
      logp.narrow(0, s, n).copy_(at::gather(q, 1, targets.narrow(0, s, n).unsqueeze(1)).squeeze(1));
      if (want_entropy) {
        auto p = q.exp();
        entropy.narrow(0, s, n).copy_(at::sum(p.mul_(q), {-1}).neg_());
      }
    }
    ctx->save_for_backward({h, w, targets});
    ctx->saved_data["inv_temp"] = inv_temp;
    ctx->saved_data["chunk"] = chunk;
    if (want_entropy) return {logp, entropy};
    return {logp};
  }

  // gz (n,V) in ct: the grad of the chunk's raw logits h·Wᵀ, from the row
  // grads gl of logp and ge of the entropy (n,1), each already divided by
  // T, either undefined
  static at::Tensor logits_grad(at::Tensor z, const at::Tensor& y, const at::Tensor& gl, const at::Tensor& ge,
                                at::ScalarType ct) {
    at::Tensor gz;
    if (!ge.defined()) {
      gz = at::softmax(z, -1, ct);
      z.reset();
      gz.mul_(gl.neg());  // −p·g
    } else {
      auto q = at::log_softmax(z, -1, ct);
      z.reset();
      auto p = q.exp();
      auto H = at::sum(p.mul(q), {-1}, /*keepdim=*/true).neg_();  // (n,1)
      q.add_(H).mul_(ge.neg());                                    // −ge·(q + H)
      if (gl.defined()) q.sub_(gl);                                // … − g
      gz = p.mul_(q);
    }
    if (gl.defined()) gz.scatter_add_(1, y.unsqueeze(1), gl);  // + g at the target
    return gz;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const auto& h = saved[0];
    const auto& w = saved[1];
    const auto& targets = saved[2];
    const double inv_temp = ctx->saved_data["inv_temp"].toDouble();
    const int64_t chunk = ctx->saved_data["chunk"].toInt();
    const auto& g_logp = grads[0];
    const auto g_ent = grads.size() > 1 ? grads[1] : at::Tensor();
    if (!g_logp.defined() && !g_ent.defined()) return {at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
    const int64_t N = h.size(0);
    const auto ct = tshim::compute_type(h.scalar_type());
    const bool in_type = gemm_in_type(w);
    auto grad_h = at::empty_like(h);
    at::Tensor grad_w;  // CPU and float32/64: (V,D) in ct, added to in place
    Float32Sum sum;     // in_type, several chunks
    const auto w32 = float_weight(w);
    // the row grads (n,1) in ct, divided by T here rather than each (n,V) grad
    auto row = [&](const at::Tensor& g, int64_t s, int64_t n) {
      if (!g.defined()) return at::Tensor();
      auto r = g.narrow(0, s, n).to(ct).unsqueeze(1);
      return inv_temp == 1.0 ? r : r.mul(inv_temp);
    };
    for (int64_t s = 0; s < N; s += chunk) {
      const int64_t n = std::min(chunk, N - s);
      if (g_ent.defined()) entropy_backward_rows.fetch_add(n, std::memory_order_relaxed);
      auto gz = logits_grad(tempered(logits(h, w, w32, s, n), inv_temp, ct), targets.narrow(0, s, n), row(g_logp, s, n),
                            row(g_ent, s, n), ct);  // (n,V) ct
      auto hc = h.narrow(0, s, n);
      auto gzw = gz.to(w.scalar_type());  // rounded to w's type for the GEMMs (no copy in float32)
      if (in_type) gz.reset();            // the GEMMs read gzw only
      auto gh = grad_h.narrow(0, s, n);    // contiguous rows
      if (w32.defined())
        gh.copy_(at::mm(gzw.to(at::kFloat), w32));  // summed in float32, rounded once
      else if (gh.scalar_type() == w.scalar_type())
        at::mm_out(gh, gzw, w);
      else
        gh.copy_(at::mm(gzw, w));
      if (in_type) {
        if (N <= chunk)
          grad_w = at::mm(gzw.t(), hc);  // one chunk: the GEMM's own float32 sum, rounded once
        else
          sum.add(gzw, hc);
      } else if (!grad_w.defined()) {
        grad_w = at::mm(gz.t(), hc.to(ct));
      } else {
        grad_w.addmm_(gz.t(), hc.to(ct));
      }
    }
    if (in_type && N > chunk) grad_w = sum.sum();
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

ts_err ts_linear_token_logprobs_entropy_backward_rows(int64_t* out) {
  TS_TRY
  *out = entropy_backward_rows.load();
  TS_CATCH
}

}  // extern "C"

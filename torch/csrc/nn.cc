// nn.cc — the pieces of a Qwen transformer and its sampler as single shim
// calls: softmax family, embedding, linear, rotary embedding, multinomial,
// per-token log-probs. Attention and RMSNorm have their own files
// (attention.cc, norm.cc).
//
// Composite ops (RoPE, token log-probs) run several ATen ops inside one call:
// fewer cgo crossings, and the same math on every libtorch version.
//
// Linear in bfloat16 or float16 on a CPU where ATen's GEMM would sum in that
// type (libtorch 1.13 without oneDNN, i.e. CPUs without AVX-512:
// cpu_level.cc) runs in float32 and rounds once, forward and backward alike,
// as ATen does where oneDNN serves; there it is also 10–70× faster.
#include "common.h"

#include <ATen/ops/cat.h>
#include <ATen/ops/embedding.h>
#include <ATen/ops/gather.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/log_softmax.h>
#include <ATen/ops/logsumexp.h>
#include <ATen/ops/multinomial.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/sum.h>

using tshim::T;
using tshim::wrap;

namespace {

// The halves of the last dimension swapped: cat(x₂, x₁).
at::Tensor swap_halves(const at::Tensor& x) {
  int64_t half = x.size(-1) / 2;
  return at::cat({x.narrow(-1, half, x.size(-1) - half), x.narrow(-1, 0, half)}, -1);
}

}  // namespace

extern "C" {

ts_err ts_softmax(ts_tensor t, int64_t dim, ts_tensor* out) {
  TS_TRY
  const auto& x = T(t);
  *out = wrap(at::softmax(x, dim, tshim::compute_type(x.scalar_type())).to(x.scalar_type()));
  TS_CATCH
}

ts_err ts_log_softmax(ts_tensor t, int64_t dim, ts_tensor* out) {
  TS_TRY
  const auto& x = T(t);
  *out = wrap(at::log_softmax(x, dim, tshim::compute_type(x.scalar_type())).to(x.scalar_type()));
  TS_CATCH
}

ts_err ts_embedding(ts_tensor weight, ts_tensor ids, ts_tensor* out) {
  TS_TRY
  *out = wrap(at::embedding(T(weight), T(ids)));
  TS_CATCH
}

ts_err ts_linear(ts_tensor x, ts_tensor w, ts_tensor b, ts_tensor* out) {
  TS_TRY
  at::Tensor fast;
  if (tshim::linear_cpu(T(x), T(w), tshim::opt(b), &fast)) {  // one row, no grad (cpu_fast.cc)
    *out = wrap(fast);
    return nullptr;
  }
  const auto& X = T(x);
  if (tshim::cpu_gemm_in_float(X)) {  // bf16/f16 on a CPU whose ATen sums in that type: float32 and one rounding
    const auto f = at::kFloat;
    auto y = b != nullptr ? at::linear(X.to(f), T(w).to(f), T(b).to(f)) : at::linear(X.to(f), T(w).to(f));
    *out = wrap(y.to(X.scalar_type()));  // autograd runs the backward's GEMMs in float32 too
    return nullptr;
  }
  *out = wrap(b != nullptr ? at::linear(X, T(w), T(b)) : at::linear(X, T(w)));
  TS_CATCH
}

ts_err ts_rope(ts_tensor x, ts_tensor cos, ts_tensor sin_signed, ts_tensor* out) {
  TS_TRY
  const auto& in = T(x);
  at::Tensor fast;
  if (tshim::rope_cpu(in, T(cos), T(sin_signed), &fast)) {  // no grad (cpu_fast.cc)
    *out = wrap(fast);
    return nullptr;
  }
  // rotate_half(x)·sin = cat(−x₂, x₁)·sin = cat(x₂, x₁)·sin_signed, exactly
  // (negation is exact): one kernel fewer per call than negating x₂ here
  *out = wrap(in.mul(T(cos)).add(swap_halves(in).mul(T(sin_signed))));
  TS_CATCH
}

ts_err ts_multinomial(ts_tensor probs, int64_t n, int replacement, ts_gen g, ts_tensor* out) {
  TS_TRY
  const auto& p = T(probs);
  *out = wrap(g ? at::multinomial(p, n, replacement != 0, g->g) : at::multinomial(p, n, replacement != 0));
  TS_CATCH
}

ts_err ts_token_logprobs(ts_tensor logits, ts_tensor targets, int want_entropy, ts_tensor* logp, ts_tensor* entropy) {
  TS_TRY
  const auto& raw = T(logits);
  auto z = raw.to(tshim::compute_type(raw.scalar_type()));  // (N,V)
  auto lse = at::logsumexp(z, {-1}, /*keepdim=*/true);     // (N,1)
  auto picked = at::gather(z, -1, T(targets).unsqueeze(-1));  // (N,1)
  *logp = wrap(picked.sub(lse).squeeze(-1));
  *entropy = nullptr;
  if (want_entropy) {
    auto p = at::softmax(z, -1);
    *entropy = wrap(lse.squeeze(-1).sub(at::sum(p.mul(z), {-1})));
  }
  TS_CATCH
}

}  // extern "C"

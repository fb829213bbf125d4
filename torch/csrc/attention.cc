// attention.cc — scaled-dot-product attention in two layouts:
//
//   ts_sdpa             dense (B, H, T, D) queries against (B, H, S, D) keys, with an
//                       optional mask — the reference path and the padded training path;
//   ts_varlen_attention packed sequences in flash-attention's variable-length layout:
//                       queries (Nq, H, D) and keys/values (Nk, KVH, D) with per-sequence
//                       offsets, grouped-query heads without repeating K/V, and an optional
//                       per-sequence count of the keys in use (decoding over a per-slot cache).
//
// The varlen op runs at::_flash_attention_forward on CUDA for bf16/f16 inputs
// (libtorch ≥ 2.6, where it takes seqused_k) and is capturable in a CUDA
// graph there. Everywhere else (CPU, float32, libtorch 1.13) it loops over
// the sequences inside this one call with the explicit math of ts_sdpa, which
// is differentiable, so packed training works on every build; that path reads
// the offsets on the host and so cannot be captured. Where padding costs
// little (decoding: one query per sequence; packs of similar lengths) it
// skips the loop: the sequences are gathered into one padded batch and
// masked, a handful of calls instead of a few per sequence.
//
// Explicit math follows Hugging Face's eager attention: scores in the input
// dtype, softmax in float32 (float64 for float64), cast back, weighted sum;
// in bfloat16 and float16 on the CPU both products sum in float32 and round
// once (matmul_f32_sum), as PyTorch 2's kernels do.
#include "common.h"

#include <ATen/ops/cat.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/triu.h>
#include <ATen/ops/zeros.h>
#if TS_AT_LEAST(2, 1)
#include <ATen/ops/scaled_dot_product_attention.h>
#endif
#if defined(TSHIM_CUDA) && TS_AT_LEAST(2, 6)
#include <ATen/ops/_flash_attention_forward.h>
#define TS_HAVE_FLASH_VARLEN 1
#endif

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

using tshim::T;
using tshim::wrap;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// The most queries × keys of one sequence that the CPU's in-place kernel
// (attention_cpu.cc) takes; beyond it, the matmul path's GEMMs are faster.
constexpr int64_t kDirectWork = int64_t{1} << 16;

// a·b with products summed in float32 and rounded once to a's type, as
// Hugging Face's bf16 attention gets from PyTorch 2's CPU and CUDA GEMMs. On
// the CPU, libtorch 1.13's own GEMM for bfloat16 and float16 adds each
// product into the rounded output (a·b of row-major operands, and every
// GEMM too small for oneDNN, which it uses only on AVX-512 CPUs), so its
// error grew with the summed length and differed between CPUs: float32
// operands avoid that kernel everywhere. Elsewhere the GEMM is ATen's.
at::Tensor matmul_f32_sum(const at::Tensor& a, const at::Tensor& b) {
  const auto st = a.scalar_type();
  if (!a.device().is_cpu() || (st != at::kBFloat16 && st != at::kHalf)) return at::matmul(a, b);
  return at::matmul(a.to(at::kFloat), b.to(at::kFloat)).to(st);
}

// Explicit attention over (..., T, D) queries and (..., S, D) keys; the leading
// dims broadcast (the varlen path uses that for grouped-query heads). causal
// aligns the diagonal bottom-right: query i sees keys j <= i + (S - T), which
// is top-left alignment when T == S and "every key" for a single decode query.
at::Tensor attention_math(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                          bool causal, double scale) {
  auto scores = matmul_f32_sum(q, k.transpose(-2, -1)).mul(scale);  // (...,T,S)
  const int64_t Tq = q.size(-2), S = k.size(-2);
  if (causal) {
    auto upper = at::triu(at::ones({Tq, S}, q.options().dtype(at::kBool)), 1 + (S - Tq));
    scores = scores.masked_fill(upper, kNegInf);
  }
  if (mask.defined()) {
    if (mask.scalar_type() == at::kBool) {
      scores = scores.masked_fill(mask.logical_not(), kNegInf);
    } else {
      scores = scores.add(mask);
    }
  }
  auto probs = at::softmax(scores, -1, tshim::compute_type(q.scalar_type())).to(q.scalar_type());
  return matmul_f32_sum(probs, v);
}

std::vector<int64_t> host_ints(const at::Tensor& t, const char* what) {
  if (t.dim() != 1) throw std::invalid_argument(std::string("varlen attention: ") + what + " must be 1-d");
  auto h = t.to(at::kCPU).to(at::kLong).contiguous();
  const int64_t* p = h.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + h.numel());
}

// The sequences in one padded batch instead of a loop: queries gathered
// into rows of the longest query length, keys into rows of the longest key
// length, and a mask that keeps each query to its own sequence's keys (and,
// causal, bottom-right aligned). Masked weights are exactly zero, so results
// equal the loop's up to the order of float sums. Padding query rows attend
// to their first key alone (finite values and gradients, which are then
// dropped). Explicit math either way: the batch saves the loop's calls per
// sequence, which dominate wherever there is no fused kernel, at the price
// of computing the padding. q0/tq and k0/tk: each sequence's first row and
// length in q and in k (keys in use).
at::Tensor varlen_batch(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const std::vector<int64_t>& q0,
                        const std::vector<int64_t>& tq, const std::vector<int64_t>& k0, const std::vector<int64_t>& tk,
                        bool causal, double scale) {
  const int64_t B = static_cast<int64_t>(tq.size()), H = q.size(1), D = q.size(2), KVH = k.size(1), rep = H / KVH;
  const int64_t T = *std::max_element(tq.begin(), tq.end()), S = *std::max_element(tk.begin(), tk.end());
  std::vector<int64_t> qix(B * T), kix(B * S), out;
  std::vector<uint8_t> allow(B * T * S);
  for (int64_t b = 0; b < B; b++) {
    for (int64_t i = 0; i < T; i++) {
      qix[b * T + i] = q0[b] + std::min(i, tq[b] - 1);  // padding repeats a real row
      if (i < tq[b]) out.push_back(b * T + i);
      for (int64_t j = 0; j < S; j++) {
        bool ok = i < tq[b] ? j < tk[b] && (!causal || j <= i + tk[b] - tq[b]) : j == 0;
        allow[(b * T + i) * S + j] = ok;
      }
    }
    for (int64_t j = 0; j < S; j++) kix[b * S + j] = k0[b] + std::min(j, tk[b] - 1);
  }
  // copies, never views of the vectors: autograd keeps them for the backward pass
  auto dev = [&](void* p, at::IntArrayRef shape, at::ScalarType t) {
    return at::from_blob(p, shape, t).to(k.device(), false, /*copy=*/true);
  };
  auto mask = dev(allow.data(), {B, 1, 1, T, S}, at::kBool);  // true = attend
  auto kb = k.index_select(0, dev(kix.data(), {B * S}, at::kLong)).view({B, S, KVH, D}).permute({0, 2, 1, 3}).unsqueeze(2);
  auto vb = v.index_select(0, dev(kix.data(), {B * S}, at::kLong)).view({B, S, KVH, D}).permute({0, 2, 1, 3}).unsqueeze(2);
  auto qb = q.index_select(0, dev(qix.data(), {B * T}, at::kLong)).view({B, T, KVH, rep, D}).permute({0, 2, 3, 1, 4});
  auto ob = attention_math(qb, kb, vb, mask, false, scale);                   // (B,KVH,rep,T,D)
  auto rows = ob.permute({0, 3, 1, 2, 4}).reshape({B * T, H, D});            // (B·T,H,D)
  return rows.index_select(0, dev(out.data(), {static_cast<int64_t>(out.size())}, at::kLong));  // (Nq,H,D)
}

// One sequence's attention (tq queries from row q0, tk ≥ 1 keys from row
// k0), (tq, H, D). (tq,H,D) → (KVH,rep,tq,D); keys (tk,KVH,D) →
// (KVH,1,tk,D): heads broadcast, K/V never repeated.
at::Tensor sequence_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t q0, int64_t tq,
                              int64_t k0, int64_t tk, bool causal, double scale) {
  const int64_t H = q.size(1), D = q.size(2), KVH = k.size(1), rep = H / KVH;
  auto qb = q.narrow(0, q0, tq).view({tq, KVH, rep, D}).permute({1, 2, 0, 3});
  auto kb = k.narrow(0, k0, tk).permute({1, 0, 2}).unsqueeze(1);
  auto vb = v.narrow(0, k0, tk).permute({1, 0, 2}).unsqueeze(1);
  auto ob = attention_math(qb, kb, vb, at::Tensor(), causal, scale);  // (KVH,rep,tq,D)
  return ob.permute({2, 0, 1, 3}).reshape({tq, H, D});
}

// The per-sequence loop: differentiable, any device and dtype.
at::Tensor varlen_loop(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& cu_q,
                       const at::Tensor& cu_k, const at::Tensor& seqused_k, bool causal, double scale) {
  const int64_t Nq = q.size(0), H = q.size(1), D = q.size(2), KVH = k.size(1);
  auto oq = host_ints(cu_q, "cu_q");
  auto ok = host_ints(cu_k, "cu_k");
  if (oq.size() != ok.size() || oq.size() < 1)
    throw std::invalid_argument("varlen attention: cu_q and cu_k must both have B+1 entries");
  const int64_t B = static_cast<int64_t>(oq.size()) - 1;
  std::vector<int64_t> used;
  if (seqused_k.defined()) {
    used = host_ints(seqused_k, "seqused_k");
    if (static_cast<int64_t>(used.size()) != B)
      throw std::invalid_argument("varlen attention: seqused_k has " + std::to_string(used.size()) +
                                  " entries for " + std::to_string(B) + " sequences");
  }
  std::vector<at::Tensor> parts;
  std::vector<int64_t> q0s(B), tqs(B), k0s(B), tks(B);
  bool batch = B > 1;  // every sequence with queries and keys (causal: at least as many keys)
  int64_t covered = 0;
  for (int64_t b = 0; b < B; b++) {
    const int64_t q0 = oq[b], tq = oq[b + 1] - oq[b];
    int64_t k0 = ok[b], tk = ok[b + 1] - ok[b];
    if (tq < 0 || tk < 0 || q0 != covered || oq[b + 1] > Nq || ok[b + 1] > k.size(0))
      throw std::invalid_argument("varlen attention: sequence " + std::to_string(b) +
                                  " has offsets outside the packed tensors or out of order");
    if (!used.empty()) {
      if (used[b] < 0 || used[b] > tk)
        throw std::invalid_argument("varlen attention: seqused_k[" + std::to_string(b) + "] = " +
                                    std::to_string(used[b]) + " outside [0, " + std::to_string(tk) + "]");
      tk = used[b];
    }
    covered += tq;
    q0s[b] = q0, tqs[b] = tq, k0s[b] = k0, tks[b] = tk;
    batch = batch && tq > 0 && tk > 0 && (!causal || tk >= tq);
  }
  if (batch && covered == Nq) {
    // worth it while the padding adds less than a loop iteration's worth of
    // work per sequence (measured on CPU: packs of 192–312-token rows ran
    // 20 % slower padded, short and decoding rows up to 1.7× faster), and
    // the scores stay small
    const int64_t T = *std::max_element(tqs.begin(), tqs.end()), S = *std::max_element(tks.begin(), tks.end());
    int64_t real = 0;
    for (int64_t b = 0; b < B; b++) real += tqs[b] * tks[b];
    if (B * T * S - real <= B * 4096 && B * H * T * S <= (int64_t{1} << 24) && B * S * KVH * D <= (int64_t{1} << 24))
      return varlen_batch(q, k, v, q0s, tqs, k0s, tks, causal, scale);
  }
  for (int64_t b = 0; b < B; b++) {
    const int64_t q0 = q0s[b], tq = tqs[b], k0 = k0s[b], tk = tks[b];
    if (tq == 0) continue;
    if (tk == 0) {  // nothing to attend to: zeros, as the flash kernel writes
      parts.push_back(at::zeros({tq, H, D}, q.options()));
      continue;
    }
    parts.push_back(sequence_attention(q, k, v, q0, tq, k0, tk, causal, scale));
  }
  if (covered < Nq) parts.push_back(at::zeros({Nq - covered, H, D}, q.options()));  // rows past the last sequence
  if (parts.empty()) return at::zeros({0, H, D}, q.options());
  return at::cat(parts, 0);
}

}  // namespace

extern "C" {

ts_err ts_sdpa(ts_tensor q, ts_tensor k, ts_tensor v, ts_tensor mask, int causal, double scale, int fused,
               ts_tensor* out) {
  TS_TRY
  const auto& Q = T(q);
  const auto& K = T(k);
  const auto& V = T(v);
  auto M = tshim::opt(mask);
  if (causal && Q.size(-2) != K.size(-2))
    throw std::invalid_argument("sdpa: causal needs as many queries as keys; pass an explicit mask instead");
  double s = scale > 0 ? scale : 1.0 / std::sqrt(static_cast<double>(Q.size(-1)));
#if TS_AT_LEAST(2, 1)
  if (fused) {
    bool is_causal = causal != 0;
    if (M.defined() && is_causal) {  // the fused op takes one or the other: fold causal into the mask
      auto upper = at::triu(at::ones({Q.size(-2), K.size(-2)}, Q.options().dtype(at::kBool)), 1);
      M = M.scalar_type() == at::kBool ? M.logical_and(upper.logical_not()) : M.masked_fill(upper, kNegInf);
      is_causal = false;
    }
    if (M.defined() && M.scalar_type() != at::kBool) M = M.to(Q.scalar_type());
    // no mask is passed as an empty optional, never as an undefined tensor
    *out = wrap(M.defined() ? at::scaled_dot_product_attention(Q, K, V, M, 0.0, is_causal, s)
                            : at::scaled_dot_product_attention(Q, K, V, {}, 0.0, is_causal, s));
    return nullptr;
  }
#else
  (void)fused;
#endif
  *out = wrap(attention_math(Q, K, V, M, causal != 0, s));
  TS_CATCH
}

ts_err ts_varlen_attention(ts_tensor q, ts_tensor k, ts_tensor v, ts_tensor cu_q, ts_tensor cu_k, int64_t max_q,
                           int64_t max_k, ts_tensor seqused_k, int causal, double scale, int flags, ts_tensor* out) {
  TS_TRY
  const auto& Q = T(q);
  const auto& K = T(k);
  const auto& V = T(v);
  if (Q.dim() != 3 || K.dim() != 3 || V.dim() != 3)
    throw std::invalid_argument("varlen attention: q, k, v must be (tokens, heads, head_dim)");
  if (K.sizes() != V.sizes()) throw std::invalid_argument("varlen attention: k and v differ in shape");
  if (Q.size(2) != K.size(2)) throw std::invalid_argument("varlen attention: q and k differ in head_dim");
  if (K.size(1) == 0 || Q.size(1) % K.size(1) != 0)
    throw std::invalid_argument("varlen attention: " + std::to_string(Q.size(1)) + " query heads are not a multiple of " +
                                std::to_string(K.size(1)) + " key/value heads");
  const double s = scale > 0 ? scale : 1.0 / std::sqrt(static_cast<double>(Q.size(2)));
  auto used = tshim::opt(seqused_k);
#ifdef TS_HAVE_FLASH_VARLEN
  const bool half = Q.scalar_type() == at::kBFloat16 || Q.scalar_type() == at::kHalf;
  if (Q.is_cuda() && half && !(flags & TS_VARLEN_LOOP)) {
    std::optional<at::Tensor> used_opt;
    if (used.defined()) used_opt = used.to(at::kInt);
    auto res = at::_flash_attention_forward(Q, K, V, T(cu_q).to(at::kInt), T(cu_k).to(at::kInt), max_q, max_k, 0.0,
                                            causal != 0, false, s, std::nullopt, std::nullopt, used_opt);
    *out = wrap(std::get<0>(res));
    return nullptr;
  }
#else
  (void)max_q;
  (void)max_k;
#endif
  tshim::OneKernel one("varlen_attention");  // one flash kernel on a GPU
  if (!(flags & TS_VARLEN_LOOP)) {
    at::Tensor o;
    std::vector<std::array<int64_t, 4>> rest;
    if (tshim::varlen_attention_cpu(Q, K, V, T(cu_q), T(cu_k), used, causal != 0, s, kDirectWork, &o, &rest)) {
      for (const auto& [q0, tq, k0, tk] : rest)  // each long sequence alone: its result is its own
        o.narrow(0, q0, tq).copy_(sequence_attention(Q, K, V, q0, tq, k0, tk, causal != 0, s));
      *out = wrap(o);
      return nullptr;
    }
  }
  *out = wrap(varlen_loop(Q, K, V, T(cu_q), T(cu_k), used, causal != 0, s));
  TS_CATCH
}

ts_err ts_varlen_attention_fused(int* out) {
  TS_TRY
#ifdef TS_HAVE_FLASH_VARLEN
  *out = 1;
#else
  *out = 0;
#endif
  TS_CATCH
}

}  // extern "C"

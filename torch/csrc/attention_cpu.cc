// attention_cpu.cc — varlen attention on the CPU without autograd, reading
// the packed queries and the key/value arena in place.
//
// What it is: the path ts_varlen_attention takes on the CPU when no input
// needs a gradient and the thread asked for generation kernels (cpu_fast.cc:
// the engine's decode steps and prefills). For
// every sequence and key/value head it walks the sequence's own rows of k
// and v where they lie — no index lists, no mask, no gathered copies, no
// padding — and computes each query's scores, a float32 softmax and the
// weighted sum of values, for all the query heads that share the key/value
// head at once (each key row is read once per query, not once per head).
// The offsets are read from the host tensors as they are.
//
// What it is not: differentiable (training takes attention.cc's explicit
// math), nor a GEMM: its work per query is a dot product per key, so it is
// chosen only while each sequence's queries × keys stay small (decoding, and
// prompts of a few hundred tokens); longer prompts keep the matmul path.
//
// Arithmetic: float32 and float64 inputs; scores and the softmax in the
// input's type (float32 is what attention.cc computes them in too), the
// exp-normalised weights summed over values in that type. Results equal the
// explicit math up to the order of float sums.
#include "common.h"

#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/empty.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace {

// the offsets, as the host tensor holds them (int32 or int64)
struct Ints {
  const int32_t* i32 = nullptr;
  const int64_t* i64 = nullptr;
  at::Tensor keep;
  int64_t n = 0;
  int64_t operator[](int64_t i) const { return i32 ? i32[i] : i64[i]; }
};

Ints ints(const at::Tensor& t, const char* what) {
  if (t.dim() != 1) throw std::invalid_argument(std::string("varlen attention: ") + what + " must be 1-d");
  Ints r;
  r.keep = t.scalar_type() == at::kInt || t.scalar_type() == at::kLong ? t.contiguous() : t.to(at::kLong).contiguous();
  r.n = r.keep.numel();
  if (r.keep.scalar_type() == at::kInt)
    r.i32 = r.keep.data_ptr<int32_t>();
  else
    r.i64 = r.keep.data_ptr<int64_t>();
  return r;
}

template <typename S>
inline S dot(const S* a, const S* b, int64_t D) {
  S acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // independent lanes: the compiler vectorises them
  int64_t d = 0;
  for (; d + 8 <= D; d += 8)
    for (int u = 0; u < 8; u++) acc[u] += a[d + u] * b[d + u];
  S s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; d < D; d++) s += a[d] * b[d];
  return s;
}

template <typename S>
inline void axpy(S* y, S a, const S* x, int64_t D) {
  for (int64_t d = 0; d < D; d++) y[d] += a * x[d];
}

struct Seq {
  int64_t q0, tq, k0, tk;
};

template <typename S>
void run(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, at::Tensor& out, const std::vector<Seq>& seqs,
         bool causal, double scale) {
  const int64_t H = q.size(1), D = q.size(2), KVH = k.size(1), rep = H / KVH;
  const int64_t qs0 = q.stride(0), qs1 = q.stride(1), ks0 = k.stride(0), ks1 = k.stride(1), vs0 = v.stride(0),
                vs1 = v.stride(1);
  const S* Q = q.data_ptr<S>();
  const S* K = k.data_ptr<S>();
  const S* V = v.data_ptr<S>();
  S* O = out.data_ptr<S>();  // (Nq, H, D) contiguous
  const S sc = static_cast<S>(scale);
  const int64_t units = static_cast<int64_t>(seqs.size()) * KVH;
  int64_t maxk = 0, work = 0;
  for (const auto& s : seqs) maxk = std::max(maxk, s.tk), work += s.tq * s.tk;
  const int64_t grain = std::max<int64_t>(1, units * 16384 / std::max<int64_t>(1, work * H * D));
  at::parallel_for(0, units, grain, [&](int64_t lo, int64_t hi) {
    std::vector<S> p(rep * std::max<int64_t>(maxk, 1));  // scores, then weights, per query head of the group
    for (int64_t u = lo; u < hi; u++) {
      const Seq& s = seqs[u / KVH];
      const int64_t g = u % KVH;
      const S* kb = K + s.k0 * ks0 + g * ks1;
      const S* vb = V + s.k0 * vs0 + g * vs1;
      for (int64_t i = 0; i < s.tq; i++) {
        const int64_t n = causal ? std::min(s.tk, i + s.tk - s.tq + 1) : s.tk;  // keys this query sees
        const S* qi = Q + (s.q0 + i) * qs0 + g * rep * qs1;
        S* oi = O + ((s.q0 + i) * H + g * rep) * D;
        std::fill(oi, oi + rep * D, S(0));
        if (n <= 0) continue;  // no key: zeros, as the flash kernel writes
        for (int64_t r = 0; r < rep; r++) {
          S* pr = p.data() + r * maxk;
          const S* qr = qi + r * qs1;
          S m = -std::numeric_limits<S>::infinity();
          for (int64_t j = 0; j < n; j++) {
            pr[j] = dot(qr, kb + j * ks0, D) * sc;
            m = std::max(m, pr[j]);
          }
          S z = 0;
          for (int64_t j = 0; j < n; j++) z += (pr[j] = std::exp(pr[j] - m));
          const S inv = S(1) / z;
          S* orow = oi + r * D;
          for (int64_t j = 0; j < n; j++) axpy(orow, pr[j] * inv, vb + j * vs0, D);
        }
      }
    }
  });
}

}  // namespace

namespace tshim {

// Runs the in-place kernel and returns true when it applies: generation
// kernels on (cpu_fast.cc), CPU tensors of
// float32 or float64, no gradient wanted, unit stride along the head
// dimension, and every sequence's queries × keys at most max_work. Else
// returns false having done nothing. The offsets are checked as in
// attention.cc's loop.
bool varlen_attention_cpu(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& cu_q,
                          const at::Tensor& cu_k, const at::Tensor& seqused_k, bool causal, double scale,
                          int64_t max_work, at::Tensor* out) {
  if (!generation_kernels() || !q.device().is_cpu() || !k.device().is_cpu() || !v.device().is_cpu()) return false;
  const auto st = q.scalar_type();
  if ((st != at::kFloat && st != at::kDouble) || k.scalar_type() != st || v.scalar_type() != st) return false;
  if (at::GradMode::is_enabled() && (q.requires_grad() || k.requires_grad() || v.requires_grad())) return false;
  if (q.stride(2) != 1 || k.stride(2) != 1 || v.stride(2) != 1) return false;
  if (!cu_q.device().is_cpu() || !cu_k.device().is_cpu() || (seqused_k.defined() && !seqused_k.device().is_cpu()))
    return false;
  const auto oq = ints(cu_q, "cu_q"), ok = ints(cu_k, "cu_k");
  if (oq.n != ok.n || oq.n < 1) throw std::invalid_argument("varlen attention: cu_q and cu_k must both have B+1 entries");
  const int64_t B = oq.n - 1, Nq = q.size(0);
  Ints used;
  if (seqused_k.defined()) {
    used = ints(seqused_k, "seqused_k");
    if (used.n != B)
      throw std::invalid_argument("varlen attention: seqused_k has " + std::to_string(used.n) + " entries for " +
                                  std::to_string(B) + " sequences");
  }
  std::vector<Seq> seqs;
  seqs.reserve(B);
  int64_t covered = 0;
  for (int64_t b = 0; b < B; b++) {
    const int64_t q0 = oq[b], tq = oq[b + 1] - oq[b], k0 = ok[b];
    int64_t tk = ok[b + 1] - ok[b];
    if (tq < 0 || tk < 0 || q0 != covered || oq[b + 1] > Nq || ok[b + 1] > k.size(0))
      throw std::invalid_argument("varlen attention: sequence " + std::to_string(b) +
                                  " has offsets outside the packed tensors or out of order");
    if (used.n) {
      if (used[b] < 0 || used[b] > tk)
        throw std::invalid_argument("varlen attention: seqused_k[" + std::to_string(b) + "] = " +
                                    std::to_string(used[b]) + " outside [0, " + std::to_string(tk) + "]");
      tk = used[b];
    }
    if (tq * tk > max_work) return false;
    covered += tq;
    seqs.push_back({q0, tq, k0, tk});
  }
  *out = at::empty({Nq, q.size(1), q.size(2)}, q.options());
  if (covered < Nq) out->narrow(0, covered, Nq - covered).zero_();  // rows past the last sequence
  if (st == at::kFloat)
    run<float>(q, k, v, *out, seqs, causal, scale);
  else
    run<double>(q, k, v, *out, seqs, causal, scale);
  return true;
}

}  // namespace tshim

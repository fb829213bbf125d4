// linear_cpu.cc — generation's linear layers on the CPU: y = x·Wᵀ + b with
// each row computed the same way whatever rows share the call.
//
// Why: a decode step multiplies a handful of rows (the live sequences) by
// every weight matrix. BLAS's GEMM packs the whole weight matrix before
// multiplying, so at small batches the weights cross memory several times;
// and BLAS rounds a row differently with the GEMM's size, so a request's
// samples depend, at the last bit, on its neighbours. This kernel reads
// each weight row once per call and gives every output element the same
// arithmetic whatever the batch: a fixed number of vector lanes accumulate
// the products along the input dimension in order (the last, partial vector
// zero-padded), the lanes are summed in a fixed tree, then the bias is
// added. Tiling (MR rows
// × 4 outputs at a time, so that each loaded vector is used several times),
// chunking the rows to stay in cache, and threading over outputs change
// nothing in that order, so a row's result is bit-identical alone, in a
// batch of 3 or of 2,048 (TestLinearRowsInvariant).
//
// Where it runs (cpu_fast.cc): decode steps from AVX2 up; prefills too on
// AVX-512, where it also beats OpenBLAS 0.3.21, which runs its AVX2 kernels
// on such CPUs. Not differentiable: training keeps ATen's GEMM.
//
// Arithmetic: float32 and float64; products and sums in the input's type.
// The vector code is compiled three times (AVX-512, AVX2 with FMA, SSE2),
// each with its register's number of lanes, and the CPU's best is chosen
// once per process (simd_level, cpu_level.cc), so a process rounds one way
// throughout.
#include "simd.h"

#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace {

using namespace tshim::simd;

// The lanes of an accumulator are summed in a fixed tree: lane i + lane
// i+L/2, then the same over the first half, and so on down to one lane.
// Tree<S, V> does it for many accumulators at once: each level packs the
// halves of two vectors' items into one vector and adds them (two shuffles
// and one add per pair), so 16 accumulators cost 45 vector operations
// instead of 16 lane-by-lane reductions. Every item gets the same sums in
// the same order whatever the number of accumulators, so a 1 × 4 tile and a
// 4 × 4 tile round a row identically.
template <typename S, typename V>
struct Tree {
  static constexpr int L = sizeof(V) / sizeof(S);
  static constexpr int Levels = L == 16 ? 4 : L == 8 ? 3 : L == 4 ? 2 : 1;
  using I = std::conditional_t<sizeof(S) == 4, int32_t, int64_t>;
  typedef I M __attribute__((vector_size(sizeof(V))));
  M lo[Levels], hi[Levels];
  Tree() {
    for (int lv = 0, w = L; lv < Levels; lv++, w /= 2) {  // input items w lanes wide, L / w per vector
      const int n = L / w, h = w / 2;
      for (int j = 0; j < L; j++) {
        const int t = j / h, o = j % h;
        const int base = t < n ? t * w : L + (t - n) * w;  // x's lanes are 0..L-1, y's L..2L-1
        lo[lv][j] = base + o;
        hi[lv][j] = base + h + o;
      }
    }
  }
  // sum adds up N accumulators' lanes: out[i] from acc[i] (acc is clobbered)
  template <int N>
  __attribute__((always_inline)) inline void sum(V* acc, S* out) const {
    level<N, 0>(acc);
    std::memcpy(out, acc, N * sizeof(S));  // item i is lane i % L of acc[i / L]
  }

 private:
  template <int Count, int Lv>
  __attribute__((always_inline)) inline void level(V* acc) const {
    if constexpr (Lv < Levels) {
      constexpr int next = (Count + 1) / 2;
#pragma GCC unroll 16
      for (int p = 0; p < next; p++) {
        const V x = acc[2 * p], y = 2 * p + 1 < Count ? acc[2 * p + 1] : V{};
        acc[p] = __builtin_shuffle(x, y, lo[Lv]) + __builtin_shuffle(x, y, hi[Lv]);
      }
      level<next, Lv + 1>(acc);
    }
  }
};

template <typename S, typename V>
const Tree<S, V>& tree() {
  static const Tree<S, V> t;
  return t;
}

// tile computes MR rows × NR outputs: y[m][n] = Σ_k x[m][k]·w[n][k] (+ b[n]).
template <typename S, typename V, int MR, int NR>
__attribute__((always_inline)) inline void tile(const Tree<S, V>& tr, const S* x, int64_t xs, const S* w, int64_t ws,
                                                const S* b, S* y, int64_t ys, int64_t K) {
  constexpr int L = sizeof(V) / sizeof(S);
  V acc[MR * NR];
  for (int i = 0; i < MR * NR; i++) acc[i] = V{};
  int64_t k = 0;
  for (; k + L <= K; k += L) {
    V xv[MR], wv[NR];
    for (int m = 0; m < MR; m++) xv[m] = load<S, V>(x + m * xs + k);
    for (int n = 0; n < NR; n++) wv[n] = load<S, V>(w + n * ws + k);
    for (int m = 0; m < MR; m++)
      for (int n = 0; n < NR; n++) acc[m * NR + n] += xv[m] * wv[n];
  }
  if (k < K) {  // the inputs past the last whole vector: one more step, zero-padded
    const size_t rest = static_cast<size_t>(K - k) * sizeof(S);
    V xv[MR], wv[NR];
    for (int m = 0; m < MR; m++) {
      xv[m] = V{};
      std::memcpy(&xv[m], x + m * xs + k, rest);
    }
    for (int n = 0; n < NR; n++) {
      wv[n] = V{};
      std::memcpy(&wv[n], w + n * ws + k, rest);
    }
    for (int m = 0; m < MR; m++)
      for (int n = 0; n < NR; n++) acc[m * NR + n] += xv[m] * wv[n];
  }
  S sums[MR * NR];
  tr.template sum<MR * NR>(acc, sums);
  if (b)
    for (int m = 0; m < MR; m++)
      for (int n = 0; n < NR; n++) sums[m * NR + n] += b[n];
  for (int m = 0; m < MR; m++) std::memcpy(y + m * ys, sums + m * NR, NR * sizeof(S));
}

// Tiles are MR rows × kNR outputs: 4 × 4 with AVX-512's 32 registers, 2 × 4
// with the 16 of AVX2 and SSE2 (accumulators, then one vector per row and
// per output).
constexpr int kNR = 4;

// block runs outputs [n0, n1) for rows [0, M) of x; y is (M, N) with row
// stride ys.
template <typename S, typename V, int MR>
__attribute__((always_inline)) inline void block(const Tree<S, V>& tr, const S* x, int64_t xs, const S* w, int64_t ws,
                                                 const S* b, S* y, int64_t ys, int64_t M, int64_t K, int64_t n0,
                                                 int64_t n1) {
  int64_t n = n0;
  for (; n + kNR <= n1; n += kNR) {  // four weight rows stay in L1 while every row passes
    const S* bn = b ? b + n : nullptr;
    int64_t m = 0;
    for (; m + MR <= M; m += MR) tile<S, V, MR, kNR>(tr, x + m * xs, xs, w + n * ws, ws, bn, y + m * ys + n, ys, K);
    for (; m < M; m++) tile<S, V, 1, kNR>(tr, x + m * xs, xs, w + n * ws, ws, bn, y + m * ys + n, ys, K);
  }
  for (; n < n1; n++) {
    const S* bn = b ? b + n : nullptr;
    int64_t m = 0;
    for (; m + MR <= M; m += MR) tile<S, V, MR, 1>(tr, x + m * xs, xs, w + n * ws, ws, bn, y + m * ys + n, ys, K);
    for (; m < M; m++) tile<S, V, 1, 1>(tr, x + m * xs, xs, w + n * ws, ws, bn, y + m * ys + n, ys, K);
  }
}

// span runs outputs [n0, n1) for all M rows, in chunks of rows that stay in
// the L2 cache while the weights stream past (a prefill's thousands of rows
// would otherwise be read from memory once per four outputs).
template <typename S, typename V, int MR>
__attribute__((always_inline)) inline void span(const S* x, int64_t xs, const S* w, int64_t ws, const S* b, S* y,
                                                int64_t ys, int64_t M, int64_t K, int64_t n0, int64_t n1) {
  const Tree<S, V>& tr = tree<S, V>();
  const int64_t chunk = std::max<int64_t>(MR, (256 << 10) / std::max<int64_t>(1, K * int64_t(sizeof(S))) / MR * MR);
  for (int64_t m = 0; m < M; m += chunk)
    block<S, V, MR>(tr, x + m * xs, xs, w, ws, b, y + m * ys, ys, std::min(chunk, M - m), K, n0, n1);
}

#define TS_SPAN_VARIANT(name, attr, VF, VD, MR)                                                                     \
  attr void name##_f32(const float* x, int64_t xs, const float* w, int64_t ws, const float* b, float* y, int64_t ys, \
                       int64_t M, int64_t K, int64_t n0, int64_t n1) {                                              \
    span<float, VF, MR>(x, xs, w, ws, b, y, ys, M, K, n0, n1);                                                       \
  }                                                                                                                 \
  attr void name##_f64(const double* x, int64_t xs, const double* w, int64_t ws, const double* b, double* y,         \
                       int64_t ys, int64_t M, int64_t K, int64_t n0, int64_t n1) {                                  \
    span<double, VD, MR>(x, xs, w, ws, b, y, ys, M, K, n0, n1);                                                      \
  }

#ifdef TS_SIMD_VARIANTS
TS_SPAN_VARIANT(span_avx512, TS_TARGET_AVX512, vf16, vd8, 4)
TS_SPAN_VARIANT(span_avx2, TS_TARGET_AVX2, vf8, vd4, 2)
#endif
TS_SPAN_VARIANT(span_base, , vf4, vd2, 2)

using SpanF32 = void (*)(const float*, int64_t, const float*, int64_t, const float*, float*, int64_t, int64_t,
                         int64_t, int64_t, int64_t);
using SpanF64 = void (*)(const double*, int64_t, const double*, int64_t, const double*, double*, int64_t, int64_t,
                         int64_t, int64_t, int64_t);

// The variant for this CPU (tshim::simd_level).
struct Spans {
  SpanF32 f32 = TS_PICK(span, _f32);
  SpanF64 f64 = TS_PICK(span, _f64);
};

const Spans& spans() {
  static const Spans s;
  return s;
}

template <typename S, typename F>
void run(F f, const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, at::Tensor& y) {
  const int64_t M = x.size(0), K = x.size(1), N = w.size(0);
  const S* X = x.data_ptr<S>();
  const S* W = w.data_ptr<S>();
  const S* B = b.defined() ? b.data_ptr<S>() : nullptr;
  S* Y = y.data_ptr<S>();
  const int64_t xs = x.stride(0), ws = w.stride(0);
  // threads split the outputs in blocks of whole tiles; about 64k products each
  const int64_t grain = std::max<int64_t>(kNR, (65536 / std::max<int64_t>(1, M * K)) / kNR * kNR);
  at::parallel_for(0, (N + kNR - 1) / kNR, std::max<int64_t>(1, grain / kNR), [&](int64_t lo, int64_t hi) {
    f(X, xs, W, ws, B, Y, N, M, K, lo * kNR, std::min(N, hi * kNR));
  });
}

}  // namespace

namespace tshim {

bool linear_rows_cpu(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, at::Tensor* out) {
  const auto st = x.scalar_type();
  if (x.dim() != 2 || w.dim() != 2 || x.size(1) != w.size(1) || w.scalar_type() != st) return false;
  if (x.stride(1) != 1 || w.stride(1) != 1) return false;
  if (b.defined() && (b.dim() != 1 || b.size(0) != w.size(0) || !b.is_contiguous() || b.scalar_type() != st))
    return false;
  *out = at::empty({x.size(0), w.size(0)}, x.options());
  if (st == at::kFloat)
    run<float>(spans().f32, x, w, b, *out);
  else
    run<double>(spans().f64, x, w, b, *out);
  return true;
}

}  // namespace tshim

// math.cc — elementwise ops (by op code), reductions, sort/topk, products.
// Op codes keep the ABI narrow: one entry point per family instead of one per
// function, while each Go method stays named after what it computes.
#include "common.h"

#include <ATen/ops/abs.h>
#include <ATen/ops/add.h>
#include <ATen/ops/all.h>
#include <ATen/ops/amax.h>
#include <ATen/ops/amin.h>
#include <ATen/ops/any.h>
#include <ATen/ops/argmax.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/clamp.h>
#include <ATen/ops/clamp_max.h>
#include <ATen/ops/clamp_min.h>
#include <ATen/ops/cos.h>
#include <ATen/ops/cumsum.h>
#include <ATen/ops/div.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/expm1.h>
#include <ATen/ops/floor.h>
#include <ATen/ops/ge.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/gt.h>
#include <ATen/ops/isfinite.h>
#include <ATen/ops/isnan.h>
#include <ATen/ops/le.h>
#include <ATen/ops/log.h>
#include <ATen/ops/log1p.h>
#include <ATen/ops/logical_and.h>
#include <ATen/ops/logical_not.h>
#include <ATen/ops/logical_or.h>
#include <ATen/ops/logsumexp.h>
#include <ATen/ops/lt.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/max.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/min.h>
#include <ATen/ops/minimum.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/ne.h>
#include <ATen/ops/neg.h>
#include <ATen/ops/norm.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/prod.h>
#include <ATen/ops/reciprocal.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/remainder.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/rsub.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/sign.h>
#include <ATen/ops/silu.h>
#include <ATen/ops/sin.h>
#include <ATen/ops/sort.h>
#include <ATen/ops/sqrt.h>
#include <ATen/ops/square.h>
#include <ATen/ops/std.h>
#include <ATen/ops/sub.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/tanh.h>
#include <ATen/ops/topk.h>
#include <ATen/ops/var.h>

using tshim::T;
using tshim::wrap;

namespace {

at::Scalar scalar(double s, int is_int) {
  return is_int ? at::Scalar(static_cast<int64_t>(s)) : at::Scalar(s);
}

at::Tensor unary(int op, const at::Tensor& x) {
  switch (op) {
    case TS_NEG: return at::neg(x);
    case TS_ABS: return at::abs(x);
    case TS_EXP: return at::exp(x);
    case TS_LOG: return at::log(x);
    case TS_SQRT: return at::sqrt(x);
    case TS_RSQRT: return at::rsqrt(x);
    case TS_SIN: return at::sin(x);
    case TS_COS: return at::cos(x);
    case TS_TANH: return at::tanh(x);
    case TS_SIGMOID: return at::sigmoid(x);
    case TS_SILU: return at::silu(x);
    case TS_RELU: return at::relu(x);
    case TS_LOG1P: return at::log1p(x);
    case TS_EXPM1: return at::expm1(x);
    case TS_LOGICAL_NOT: return at::logical_not(x);
    case TS_ISFINITE: return at::isfinite(x);
    case TS_ISNAN: return at::isnan(x);
    case TS_SIGN: return at::sign(x);
    case TS_FLOOR: return at::floor(x);
    case TS_RECIPROCAL: return at::reciprocal(x);
    case TS_SQUARE: return at::square(x);
    case TS_GELU_TANH: return at::gelu(x, "tanh");
  }
  throw std::invalid_argument("unknown unary op code " + std::to_string(op));
}

at::Tensor binary(int op, const at::Tensor& a, const at::Tensor& b) {
  switch (op) {
    case TS_ADD: return at::add(a, b);
    case TS_SUB: return at::sub(a, b);
    case TS_MUL: return at::mul(a, b);
    case TS_DIV: return at::div(a, b);
    case TS_POW: return at::pow(a, b);
    case TS_MINIMUM: return at::minimum(a, b);
    case TS_MAXIMUM: return at::maximum(a, b);
    case TS_EQ: return at::eq(a, b);
    case TS_NE: return at::ne(a, b);
    case TS_LT: return at::lt(a, b);
    case TS_LE: return at::le(a, b);
    case TS_GT: return at::gt(a, b);
    case TS_GE: return at::ge(a, b);
    case TS_LOGICAL_AND: return at::logical_and(a, b);
    case TS_LOGICAL_OR: return at::logical_or(a, b);
    case TS_REM: return at::remainder(a, b);
  }
  throw std::invalid_argument("unknown binary op code " + std::to_string(op));
}

at::Tensor binary_scalar(int op, const at::Tensor& a, const at::Scalar& s) {
  switch (op) {
    case TS_ADD: return at::add(a, s);
    case TS_SUB: return at::sub(a, s);
    case TS_MUL: return at::mul(a, s);
    case TS_DIV: return at::div(a, s);
    case TS_POW: return at::pow(a, s);
    case TS_MINIMUM: return at::clamp_max(a, s);
    case TS_MAXIMUM: return at::clamp_min(a, s);
    case TS_EQ: return at::eq(a, s);
    case TS_NE: return at::ne(a, s);
    case TS_LT: return at::lt(a, s);
    case TS_LE: return at::le(a, s);
    case TS_GT: return at::gt(a, s);
    case TS_GE: return at::ge(a, s);
    case TS_REM: return at::remainder(a, s);
    case TS_LOGICAL_AND:
    case TS_LOGICAL_OR: {
      auto b = at::scalar_tensor(s, a.options().dtype(at::kBool));
      return op == TS_LOGICAL_AND ? at::logical_and(a, b) : at::logical_or(a, b);
    }
  }
  throw std::invalid_argument("unknown binary op code " + std::to_string(op));
}

std::vector<int64_t> all_dims(const at::Tensor& x) {
  std::vector<int64_t> d(x.dim());
  for (int64_t i = 0; i < x.dim(); i++) d[i] = i;
  return d;
}

int64_t single_dim(const char* what, const int64_t* dims, int ndim) {
  if (ndim != 1) throw std::invalid_argument(std::string(what) + ": reduces over one dim or all dims");
  return dims[0];
}

at::Tensor reduce(int op, const at::Tensor& x, const int64_t* dims, int ndim, bool keepdim, bool unbiased) {
  bool all = ndim == 0;
  at::IntArrayRef d(dims, ndim);
  std::vector<int64_t> every;
  if (all) {
    every = all_dims(x);
    d = at::IntArrayRef(every);
  }
  switch (op) {
    case TS_SUM: return at::sum(x, d, keepdim);
    case TS_MEAN: return at::mean(x, d, keepdim);
    case TS_AMAX: return at::amax(x, d, keepdim);
    case TS_AMIN: return at::amin(x, d, keepdim);
    case TS_LOGSUMEXP: return at::logsumexp(x, d, keepdim);
    case TS_VAR: return at::var(x, d, unbiased, keepdim);
    case TS_STD: return at::std(x, d, unbiased, keepdim);
    case TS_NORM: return at::norm(x, 2, d, keepdim);
    case TS_PROD:
      if (all && !keepdim) return at::prod(x);
      return at::prod(x, single_dim("prod", dims, ndim), keepdim);
    case TS_ALL:
      if (all && !keepdim) return at::all(x);
      return at::all(x, single_dim("all", dims, ndim), keepdim);
    case TS_ANY:
      if (all && !keepdim) return at::any(x);
      return at::any(x, single_dim("any", dims, ndim), keepdim);
  }
  throw std::invalid_argument("unknown reduction op code " + std::to_string(op));
}

}  // namespace

extern "C" {

ts_err ts_unary(int op, ts_tensor t, ts_tensor* out) {
  TS_TRY
  *out = wrap(unary(op, T(t)));
  TS_CATCH
}

ts_err ts_binary(int op, ts_tensor a, ts_tensor b, ts_tensor* out) {
  TS_TRY
  *out = wrap(binary(op, T(a), T(b)));
  TS_CATCH
}

ts_err ts_binary_scalar(int op, ts_tensor a, double s, int is_int, ts_tensor* out) {
  TS_TRY
  *out = wrap(binary_scalar(op, T(a), scalar(s, is_int)));
  TS_CATCH
}

ts_err ts_rsub_scalar(ts_tensor a, double s, int is_int, ts_tensor* out) {
  TS_TRY
  *out = wrap(at::rsub(T(a), scalar(s, is_int)));
  TS_CATCH
}

ts_err ts_inplace_binary(int op, ts_tensor a, ts_tensor b) {
  TS_TRY
  at::Tensor x = T(a);
  const auto& y = T(b);
  switch (op) {
    case TS_ADD: x.add_(y); break;
    case TS_SUB: x.sub_(y); break;
    case TS_MUL: x.mul_(y); break;
    case TS_DIV: x.div_(y); break;
    default: throw std::invalid_argument("in-place op code " + std::to_string(op) + " not supported");
  }
  TS_CATCH
}

ts_err ts_clamp(ts_tensor t, double lo, double hi, int has_lo, int has_hi, ts_tensor* out) {
  TS_TRY
  const auto& x = T(t);
  if (has_lo && has_hi) {
    *out = wrap(at::clamp(x, lo, hi));
  } else if (has_lo) {
    *out = wrap(at::clamp_min(x, lo));
  } else if (has_hi) {
    *out = wrap(at::clamp_max(x, hi));
  } else {
    *out = wrap(x);
  }
  TS_CATCH
}

ts_err ts_reduce(int op, ts_tensor t, const int64_t* dims, int ndim, int keepdim, int unbiased, ts_tensor* out) {
  TS_TRY
  *out = wrap(reduce(op, T(t), dims, ndim, keepdim != 0, unbiased != 0));
  TS_CATCH
}

ts_err ts_max_dim(ts_tensor t, int64_t dim, int keepdim, ts_tensor* values, ts_tensor* indices) {
  TS_TRY
  auto r = at::max(T(t), dim, keepdim != 0);
  *values = wrap(std::get<0>(r));
  *indices = wrap(std::get<1>(r));
  TS_CATCH
}

ts_err ts_min_dim(ts_tensor t, int64_t dim, int keepdim, ts_tensor* values, ts_tensor* indices) {
  TS_TRY
  auto r = at::min(T(t), dim, keepdim != 0);
  *values = wrap(std::get<0>(r));
  *indices = wrap(std::get<1>(r));
  TS_CATCH
}

ts_err ts_argmax(ts_tensor t, int64_t dim, int keepdim, ts_tensor* out) {
  TS_TRY
  *out = wrap(at::argmax(T(t), dim, keepdim != 0));
  TS_CATCH
}

ts_err ts_cumsum(ts_tensor t, int64_t dim, ts_tensor* out) {
  TS_TRY
  *out = wrap(at::cumsum(T(t), dim));
  TS_CATCH
}

ts_err ts_sort(ts_tensor t, int64_t dim, int descending, ts_tensor* values, ts_tensor* indices) {
  TS_TRY
  auto r = at::sort(T(t), dim, descending != 0);
  *values = wrap(std::get<0>(r));
  *indices = wrap(std::get<1>(r));
  TS_CATCH
}

ts_err ts_topk(ts_tensor t, int64_t k, int64_t dim, int largest, ts_tensor* values, ts_tensor* indices) {
  TS_TRY
  auto r = at::topk(T(t), k, dim, largest != 0, /*sorted=*/true);
  *values = wrap(std::get<0>(r));
  *indices = wrap(std::get<1>(r));
  TS_CATCH
}

ts_err ts_matmul(ts_tensor a, ts_tensor b, ts_tensor* out) {
  TS_TRY
  *out = wrap(at::matmul(T(a), T(b)));
  TS_CATCH
}

ts_err ts_bmm(ts_tensor a, ts_tensor b, ts_tensor* out) {
  TS_TRY
  *out = wrap(at::bmm(T(a), T(b)));
  TS_CATCH
}

}  // extern "C"

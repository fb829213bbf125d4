// shape.cc — views and indexing: reshape/permute/narrow/…, cat/stack,
// gather/scatter/index_put, masked_fill/where, triangular masks.
#include "common.h"

#include <ATen/ops/cat.h>
#include <ATen/ops/flip.h>
#include <ATen/ops/gather.h>
#include <ATen/ops/index_put.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/masked_fill.h>
#include <ATen/ops/masked_select.h>
#include <ATen/ops/repeat_interleave.h>
#include <ATen/ops/scatter.h>
#include <ATen/ops/scatter_add.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/tril.h>
#include <ATen/ops/triu.h>
#include <ATen/ops/where.h>

#include <ATen/core/List.h>

using tshim::T;
using tshim::wrap;

namespace {
// The optional type inside index_put's index list is c10::optional in 1.13
// and std::optional in 2.x; take it from the declaration instead of naming it.
template <typename F>
struct second_arg;
template <typename R, typename A0, typename A1, typename... As>
struct second_arg<R (*)(A0, A1, As...)> {
  using type = std::decay_t<A1>;
};
using IndexList = second_arg<decltype(&at::index_put)>::type;
}  // namespace

extern "C" {

ts_err ts_reshape(ts_tensor t, const int64_t* dims, int ndim, ts_tensor* out) {
  TS_TRY
  *out = wrap(T(t).reshape(at::IntArrayRef(dims, ndim)));
  TS_CATCH
}

ts_err ts_view(ts_tensor t, const int64_t* dims, int ndim, ts_tensor* out) {
  TS_TRY
  *out = wrap(T(t).view(at::IntArrayRef(dims, ndim)));
  TS_CATCH
}

ts_err ts_expand(ts_tensor t, const int64_t* dims, int ndim, ts_tensor* out) {
  TS_TRY
  *out = wrap(T(t).expand(at::IntArrayRef(dims, ndim)));
  TS_CATCH
}

ts_err ts_permute(ts_tensor t, const int64_t* dims, int ndim, ts_tensor* out) {
  TS_TRY
  *out = wrap(T(t).permute(at::IntArrayRef(dims, ndim)));
  TS_CATCH
}

ts_err ts_transpose(ts_tensor t, int64_t d0, int64_t d1, ts_tensor* out) {
  TS_TRY
  *out = wrap(T(t).transpose(d0, d1));
  TS_CATCH
}

ts_err ts_narrow(ts_tensor t, int64_t dim, int64_t start, int64_t len, ts_tensor* out) {
  TS_TRY
  *out = wrap(T(t).narrow(dim, start, len));
  TS_CATCH
}

ts_err ts_slice(ts_tensor t, int64_t dim, int64_t start, int64_t end, int64_t step, ts_tensor* out) {
  TS_TRY
  *out = wrap(T(t).slice(dim, start, end, step));
  TS_CATCH
}

ts_err ts_squeeze(ts_tensor t, int64_t dim, ts_tensor* out) {
  TS_TRY
  *out = wrap(T(t).squeeze(dim));
  TS_CATCH
}

ts_err ts_unsqueeze(ts_tensor t, int64_t dim, ts_tensor* out) {
  TS_TRY
  *out = wrap(T(t).unsqueeze(dim));
  TS_CATCH
}

ts_err ts_contiguous(ts_tensor t, ts_tensor* out) {
  TS_TRY
  *out = wrap(T(t).contiguous());
  TS_CATCH
}

ts_err ts_cat(const ts_tensor* ts, int n, int64_t dim, ts_tensor* out) {
  TS_TRY
  *out = wrap(at::cat(tshim::tensors(ts, n), dim));
  TS_CATCH
}

ts_err ts_stack(const ts_tensor* ts, int n, int64_t dim, ts_tensor* out) {
  TS_TRY
  *out = wrap(at::stack(tshim::tensors(ts, n), dim));
  TS_CATCH
}

ts_err ts_index_select(ts_tensor t, int64_t dim, ts_tensor index, ts_tensor* out) {
  TS_TRY
  *out = wrap(at::index_select(T(t), dim, T(index)));
  TS_CATCH
}

ts_err ts_gather(ts_tensor t, int64_t dim, ts_tensor index, ts_tensor* out) {
  TS_TRY
  *out = wrap(at::gather(T(t), dim, T(index)));
  TS_CATCH
}

ts_err ts_scatter(ts_tensor t, int64_t dim, ts_tensor index, ts_tensor src, ts_tensor* out) {
  TS_TRY
  *out = wrap(at::scatter(T(t), dim, T(index), T(src)));
  TS_CATCH
}

ts_err ts_scatter_add(ts_tensor t, int64_t dim, ts_tensor index, ts_tensor src, ts_tensor* out) {
  TS_TRY
  *out = wrap(at::scatter_add(T(t), dim, T(index), T(src)));
  TS_CATCH
}

ts_err ts_index_put(ts_tensor t, const ts_tensor* indices, int n, ts_tensor values, int accumulate, ts_tensor* out) {
  TS_TRY
  IndexList idx;
  for (int i = 0; i < n; i++) {
    if (indices[i] == nullptr) {
      idx.push_back(IndexList::value_type());
    } else {
      idx.push_back(T(indices[i]));
    }
  }
  *out = wrap(at::index_put(T(t), idx, T(values), accumulate != 0));
  TS_CATCH
}

ts_err ts_index_copy_(ts_tensor t, int64_t dim, ts_tensor index, ts_tensor src) {
  TS_TRY
  T(t).index_copy_(dim, T(index), T(src));
  TS_CATCH
}

ts_err ts_masked_fill(ts_tensor t, ts_tensor mask, double value, ts_tensor* out) {
  TS_TRY
  const auto& x = T(t);
  at::Scalar v = at::isIntegralType(x.scalar_type(), true) ? at::Scalar(static_cast<int64_t>(value)) : at::Scalar(value);
  *out = wrap(at::masked_fill(x, T(mask), v));
  TS_CATCH
}

ts_err ts_masked_select(ts_tensor t, ts_tensor mask, ts_tensor* out) {
  TS_TRY
  *out = wrap(at::masked_select(T(t), T(mask)));
  TS_CATCH
}

ts_err ts_where(ts_tensor cond, ts_tensor a, ts_tensor b, ts_tensor* out) {
  TS_TRY
  *out = wrap(at::where(T(cond), T(a), T(b)));
  TS_CATCH
}

ts_err ts_triu(ts_tensor t, int64_t diagonal, ts_tensor* out) {
  TS_TRY
  *out = wrap(at::triu(T(t), diagonal));
  TS_CATCH
}

ts_err ts_tril(ts_tensor t, int64_t diagonal, ts_tensor* out) {
  TS_TRY
  *out = wrap(at::tril(T(t), diagonal));
  TS_CATCH
}

ts_err ts_repeat_interleave(ts_tensor t, int64_t repeats, int64_t dim, ts_tensor* out) {
  TS_TRY
  *out = wrap(at::repeat_interleave(T(t), repeats, dim));
  TS_CATCH
}

ts_err ts_flip(ts_tensor t, const int64_t* dims, int ndim, ts_tensor* out) {
  TS_TRY
  *out = wrap(at::flip(T(t), at::IntArrayRef(dims, ndim)));
  TS_CATCH
}

}  // extern "C"

// tensor.cc — handle lifetime, metadata, creation and host copies, plus the
// helpers common.h declares (dtype/device mapping, error strings).
#include "common.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/randn.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/StorageImpl.h>

namespace tshim {

ts_err make_err(const char* msg) {
  size_t n = std::strlen(msg);
  char* out = static_cast<char*>(std::malloc(n + 1));
  if (out == nullptr) return nullptr;  // out of memory while reporting: nothing better to do
  std::memcpy(out, msg, n + 1);
  return out;
}

at::ScalarType dtype_of(int code) {
  switch (code) {
    case TS_F32: return at::kFloat;
    case TS_F16: return at::kHalf;
    case TS_BF16: return at::kBFloat16;
    case TS_I64: return at::kLong;
    case TS_I32: return at::kInt;
    case TS_BOOL: return at::kBool;
    case TS_F64: return at::kDouble;
    case TS_U8: return at::kByte;
    case TS_I8: return at::kChar;
    case TS_I16: return at::kShort;
  }
  throw std::invalid_argument("unknown dtype code " + std::to_string(code));
}

int code_of(at::ScalarType st) {
  switch (st) {
    case at::kFloat: return TS_F32;
    case at::kHalf: return TS_F16;
    case at::kBFloat16: return TS_BF16;
    case at::kLong: return TS_I64;
    case at::kInt: return TS_I32;
    case at::kBool: return TS_BOOL;
    case at::kDouble: return TS_F64;
    case at::kByte: return TS_U8;
    case at::kChar: return TS_I8;
    case at::kShort: return TS_I16;
    default: break;
  }
  throw std::invalid_argument(std::string("dtype not supported by troupe: ") + c10::toString(st));
}

at::Device device_of(int code) {
  if (code == TS_CPU) return at::Device(at::kCPU);
  if (code >= 0) return at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(code));
  throw std::invalid_argument("unknown device code " + std::to_string(code));
}

int code_of(const at::Device& d) {
  if (d.is_cpu()) return TS_CPU;
  if (d.is_cuda()) return d.has_index() ? d.index() : 0;
  throw std::invalid_argument("device not supported by troupe: " + d.str());
}

at::TensorOptions options(int dtype, int device) {
  return at::TensorOptions().dtype(dtype_of(dtype)).device(device_of(device));
}

std::vector<at::Tensor> tensors(const ts_tensor* ts, int n) {
  std::vector<at::Tensor> out;
  out.reserve(n);
  for (int i = 0; i < n; i++) out.push_back(T(ts[i]));
  return out;
}

}  // namespace tshim

using tshim::T;
using tshim::wrap;

extern "C" {

void ts_free_err(ts_err e) { std::free(e); }

ts_err ts_free(ts_tensor t) {
  TS_TRY
  delete t;
  TS_CATCH
}

ts_err ts_shallow_clone(ts_tensor t, ts_tensor* out) {
  TS_TRY
  *out = wrap(T(t));
  TS_CATCH
}

ts_err ts_dim(ts_tensor t, int* out) {
  TS_TRY
  *out = static_cast<int>(T(t).dim());
  TS_CATCH
}

ts_err ts_shape(ts_tensor t, int64_t* dims, int cap) {
  TS_TRY
  const auto& x = T(t);
  if (x.dim() > cap) throw std::invalid_argument("ts_shape: buffer too small");
  for (int64_t i = 0; i < x.dim(); i++) dims[i] = x.size(i);
  TS_CATCH
}

ts_err ts_dtype(ts_tensor t, int* out) {
  TS_TRY
  *out = tshim::code_of(T(t).scalar_type());
  TS_CATCH
}

ts_err ts_device(ts_tensor t, int* out) {
  TS_TRY
  *out = tshim::code_of(T(t).device());
  TS_CATCH
}

ts_err ts_numel(ts_tensor t, int64_t* out) {
  TS_TRY
  *out = T(t).numel();
  TS_CATCH
}

ts_err ts_is_contiguous(ts_tensor t, int* out) {
  TS_TRY
  *out = T(t).is_contiguous() ? 1 : 0;
  TS_CATCH
}

ts_err ts_data_ptr(ts_tensor t, void** out) {
  TS_TRY
  *out = T(t).data_ptr();
  TS_CATCH
}

ts_err ts_from_data(const void* data, int64_t nbytes, int dtype, const int64_t* dims, int ndim, ts_tensor* out) {
  TS_TRY
  auto x = at::empty(at::IntArrayRef(dims, ndim), tshim::options(dtype, TS_CPU));
  int64_t want = x.numel() * static_cast<int64_t>(x.element_size());
  if (want != nbytes)
    throw std::invalid_argument("ts_from_data: " + std::to_string(nbytes) + " bytes given, shape needs " +
                                std::to_string(want));
  if (nbytes > 0) std::memcpy(x.data_ptr(), data, nbytes);
  *out = wrap(std::move(x));
  TS_CATCH
}

ts_err ts_copy_to_host(ts_tensor t, void* dst, int64_t nbytes) {
  TS_TRY
  const auto& x = T(t);
  if (!x.device().is_cpu() || !x.is_contiguous())
    throw std::invalid_argument("ts_copy_to_host: tensor must be CPU and contiguous");
  int64_t have = x.numel() * static_cast<int64_t>(x.element_size());
  if (have != nbytes)
    throw std::invalid_argument("ts_copy_to_host: tensor holds " + std::to_string(have) + " bytes, buffer " +
                                std::to_string(nbytes));
  if (nbytes > 0) std::memcpy(dst, x.data_ptr(), nbytes);
  TS_CATCH
}

ts_err ts_empty(const int64_t* dims, int ndim, int dtype, int device, ts_tensor* out) {
  TS_TRY
  *out = wrap(at::empty(at::IntArrayRef(dims, ndim), tshim::options(dtype, device)));
  TS_CATCH
}

ts_err ts_full(const int64_t* dims, int ndim, double value, int dtype, int device, ts_tensor* out) {
  TS_TRY
  auto st = tshim::dtype_of(dtype);
  at::Scalar v = at::isIntegralType(st, /*includeBool=*/true) ? at::Scalar(static_cast<int64_t>(value))
                                                              : at::Scalar(value);
  *out = wrap(at::full(at::IntArrayRef(dims, ndim), v, tshim::options(dtype, device)));
  TS_CATCH
}

ts_err ts_arange(double start, double end, double step, int dtype, int device, ts_tensor* out) {
  TS_TRY
  auto st = tshim::dtype_of(dtype);
  auto o = tshim::options(dtype, device);
  if (at::isIntegralType(st, false)) {
    *out = wrap(at::arange(static_cast<int64_t>(start), static_cast<int64_t>(end), static_cast<int64_t>(step), o));
  } else {
    *out = wrap(at::arange(start, end, step, o));
  }
  TS_CATCH
}

ts_err ts_randn(const int64_t* dims, int ndim, int dtype, int device, ts_gen g, ts_tensor* out) {
  TS_TRY
  auto shape = at::IntArrayRef(dims, ndim);
  auto o = tshim::options(dtype, device);
  *out = wrap(g ? at::randn(shape, g->g, o) : at::randn(shape, o));
  TS_CATCH
}

ts_err ts_rand(const int64_t* dims, int ndim, int dtype, int device, ts_gen g, ts_tensor* out) {
  TS_TRY
  auto shape = at::IntArrayRef(dims, ndim);
  auto o = tshim::options(dtype, device);
  *out = wrap(g ? at::rand(shape, g->g, o) : at::rand(shape, o));
  TS_CATCH
}

ts_err ts_to(ts_tensor t, int device, int dtype, ts_tensor* out) {
  TS_TRY
  *out = wrap(T(t).to(tshim::device_of(device), tshim::dtype_of(dtype)));
  TS_CATCH
}

ts_err ts_clone(ts_tensor t, ts_tensor* out) {
  TS_TRY
  *out = wrap(T(t).clone());
  TS_CATCH
}

ts_err ts_copy_(ts_tensor dst, ts_tensor src) {
  TS_TRY
  at::Tensor d = T(dst);
  d.copy_(T(src));
  TS_CATCH
}

ts_err ts_fill_(ts_tensor t, double value) {
  TS_TRY
  at::Tensor d = T(t);
  d.fill_(value);
  TS_CATCH
}

ts_err ts_item(ts_tensor t, double* out) {
  TS_TRY
  const auto& x = T(t);
  if (x.numel() != 1) throw std::invalid_argument("item: tensor has " + std::to_string(x.numel()) + " elements, want 1");
  *out = x.item<double>();
  TS_CATCH
}

ts_err ts_storage_info(ts_tensor t, int64_t* nbytes, uint64_t* id) {
  TS_TRY
  const auto& x = T(t);
  if (!x.has_storage()) throw std::invalid_argument("storage_info: tensor has no storage");
  c10::StorageImpl* s = x.storage().unsafeGetStorageImpl();
  *nbytes = static_cast<int64_t>(s->nbytes());
  *id = reinterpret_cast<uint64_t>(s);
  TS_CATCH
}

// The memory is swapped under the StorageImpl, as torch.distributed.fsdp
// does with storage().resize_(): sizes, strides and views stay as they are,
// so a freed weight must be allocated again before anything reads it.
ts_err ts_storage_resize(ts_tensor t, int64_t nbytes) {
  TS_TRY
  const auto& x = T(t);
  if (nbytes < 0) throw std::invalid_argument("storage_resize: nbytes " + std::to_string(nbytes) + " < 0");
  if (!x.has_storage()) throw std::invalid_argument("storage_resize: tensor has no storage");
  c10::StorageImpl* s = x.storage().unsafeGetStorageImpl();
  int64_t last = x.storage_offset();  // the last element this tensor reads
  for (int64_t d = 0; d < x.dim(); d++) last += (x.size(d) - 1) * x.stride(d);
  const int64_t need = x.numel() > 0 ? (last + 1) * static_cast<int64_t>(x.element_size()) : 0;
  if (nbytes > 0 && nbytes < need)
    throw std::invalid_argument("storage_resize: " + std::to_string(nbytes) + " bytes cannot hold this tensor (" +
                                std::to_string(need) + " at least)");
  if (nbytes == 0) {
    s->set_data_ptr_noswap(at::DataPtr(nullptr, s->device()));
    s->set_nbytes(0);
    return nullptr;
  }
  c10::DeviceGuard guard(s->device());
  c10::Allocator* a = s->device().is_cpu() ? c10::GetCPUAllocator() : c10::GetAllocator(s->device().type());
  s->set_data_ptr_noswap(a->allocate(static_cast<size_t>(nbytes)));
  s->set_nbytes(static_cast<size_t>(nbytes));
  TS_CATCH
}

}  // extern "C"

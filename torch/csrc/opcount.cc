// opcount.cc — counts the ATen operators a piece of work dispatches, through
// a global RecordFunction callback installed only while counting.
//
// Why: on a GPU a decode step's cost at small batches is the number of
// kernels it launches, and that number can be read on any machine: every
// kernel comes from an operator call. "ops" counts every dispatched call
// (composite operators and what they call); "leaves" counts the calls that do
// work themselves — those that make no counted call below them — leaving out
// calls that only make views, allocate or resolve conjugation: a proxy for
// launched kernels. Where CUDA runs one fused kernel and this build runs a
// decomposition, the shim marks the call with tshim::OneKernel (varlen
// attention's loop) and it counts once; compare counts taken on one build.
#include "common.h"

#include <ATen/record_function.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <vector>

namespace {

std::mutex mu;
at::CallbackHandle handle = 0;
std::atomic<int64_t> ops{0}, leaves{0};
std::atomic<bool> counting{false};
thread_local int inside_one = 0;  // open tshim::OneKernel regions

// Per thread, one flag per open call: did a call below it count as a kernel?
thread_local std::vector<bool> open;

bool launches_nothing(const char* name) {
  static const char* const none[] = {
      "aten::view", "aten::_unsafe_view", "aten::reshape", "aten::_reshape_alias", "aten::as_strided",
      "aten::unsqueeze", "aten::squeeze", "aten::transpose", "aten::t", "aten::narrow", "aten::slice",
      "aten::select", "aten::expand", "aten::permute", "aten::empty", "aten::empty_strided", "aten::empty_like",
      "aten::resize_", "aten::detach", "aten::alias", "aten::split", "aten::chunk", "aten::unbind",
      "aten::lift_fresh", "aten::set_", "aten::unflatten",
      "aten::flatten", "aten::view_as", "aten::expand_as", "aten::contiguous", "aten::to",
      "aten::item", "aten::_local_scalar_dense", "aten::is_nonzero", "aten::size", "aten::stride",
      "aten::dim", "aten::numel", "aten::resolve_conj", "aten::resolve_neg", "aten::conj", "aten::_conj"};
  for (const char* n : none) {
    if (std::strcmp(name, n) == 0) return true;
  }
  return false;
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction&) {
  if (inside_one > 0) return nullptr;
  open.push_back(false);
  ops.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

void on_end(const at::RecordFunction& fn, at::ObserverContext*) {
  if (inside_one > 0 || open.empty()) return;  // empty: began before counting started
  bool below = open.back();
  open.pop_back();
  bool counts = !below && !launches_nothing(fn.name());
  if ((below || counts) && !open.empty()) open.back() = true;
  if (counts) leaves.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

tshim::OneKernel::OneKernel(const char*) { inside_one++; }

tshim::OneKernel::~OneKernel() {
  if (--inside_one > 0 || !counting.load()) return;
  ops.fetch_add(1, std::memory_order_relaxed);
  leaves.fetch_add(1, std::memory_order_relaxed);
  if (!open.empty()) open.back() = true;
}

extern "C" {

ts_err ts_op_count_start(void) {
  TS_TRY
  std::lock_guard<std::mutex> lock(mu);
  if (handle != 0) throw std::runtime_error("op counting already started");
  ops = 0;
  leaves = 0;
  counting = true;
  handle = at::addGlobalCallback(
      at::RecordFunctionCallback(on_start, on_end).scopes({at::RecordScope::FUNCTION}));
  TS_CATCH
}

ts_err ts_op_count_stop(int64_t* n_ops, int64_t* n_leaves) {
  TS_TRY
  std::lock_guard<std::mutex> lock(mu);
  if (handle == 0) throw std::runtime_error("op counting was not started");
  at::removeCallback(handle);
  handle = 0;
  counting = false;
  *n_ops = ops.load();
  *n_leaves = leaves.load();
  TS_CATCH
}

}  // extern "C"

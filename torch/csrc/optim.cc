// optim.cc — AdamW with decoupled weight decay and parameter groups, in the
// order torch.optim.AdamW's single-tensor path applies it:
//   p ← p·(1 − lr·wd);  m ← lerp(m, g, 1 − β1);  v ← β2·v + (1 − β2)·g²
//   p ← p − (lr / (1 − β1ᵗ)) · m / (√v / √(1 − β2ᵗ) + ε)
// The state mode (ts_adamw_new's master_f32) decides where the update runs:
//   0  moments float32 (float64 for float64); a non-f32 parameter is updated
//      through a float32 copy made for the step and rounded back;
//   1  the same moments, and a non-f32 parameter keeps a float32 master copy
//      that the update runs on, rounded into the parameter after each step;
//   2  the parameter's own dtype: no master, moments of the parameter's
//      dtype, every operation rounded to it, as torch.optim.AdamW steps
//      bf16 parameters (an update below half an ulp of the weight is lost).
// One shim call steps every parameter: no cgo crossing per tensor.
//
// CUDA builds compiled with TSHIM_FUSED_ADAMW (scripts/gpu/build-shim.sh sets
// it where this file compiles with it) step the CUDA parameters with ATen's
// fused kernel, one launch per (group, device) instead of ~8 per tensor, on
// the same float32 masters and moments; the step counts then also live on
// the device as float32 scalars, as torch.optim's fused path keeps them.
#include "common.h"

#include <ATen/core/grad_mode.h>
#include <ATen/ops/zeros_like.h>
#if defined(TSHIM_FUSED_ADAMW)
#include <ATen/ops/_foreach_add.h>
#include <ATen/ops/_foreach_copy.h>
#include <ATen/ops/_fused_adamw.h>
#include <ATen/ops/full.h>

#include <map>
#endif

#include <cmath>
#include <memory>
#include <sstream>

using tshim::T;
using tshim::wrap;

namespace {
struct Param {
  at::Tensor param;
  at::Tensor master;  // undefined unless master_f32 and param is not f32
  at::Tensor exp_avg, exp_avg_sq;
  int64_t step = 0;
  int group = 0;
  at::Tensor step_t;  // fused path: step as a float32 scalar on the device (undefined until used)
};
struct Group {
  double lr, beta1, beta2, eps, weight_decay;
};
}  // namespace

struct ts_adamw_s {
  std::vector<Param> params;
  std::vector<Group> groups;
  bool own_dtype = false;  // state mode 2: the update runs in each parameter's dtype
};

namespace {
Param& at_index(ts_adamw o, int i) {
  if (o == nullptr) throw std::invalid_argument("optimizer handle is NULL");
  if (i < 0 || i >= static_cast<int>(o->params.size()))
    throw std::out_of_range("optimizer parameter index " + std::to_string(i) + " out of range [0, " +
                            std::to_string(o->params.size()) + ")");
  return o->params[i];
}

void check_same_shape(const char* what, const at::Tensor& a, const at::Tensor& p) {
  if (a.sizes() != p.sizes()) {
    std::ostringstream msg;
    msg << "optimizer state " << what << " has shape " << a.sizes() << ", parameter has " << p.sizes();
    throw std::invalid_argument(msg.str());
  }
}
}  // namespace

#if defined(TSHIM_FUSED_ADAMW)
namespace {
// kFusedChunkBytes bounds the float32 grads one fused launch holds at once.
constexpr int64_t kFusedChunkBytes = int64_t{256} << 20;

// fused_step steps every CUDA parameter that has a grad and updates a
// float32 tensor (its master, or itself) with one fused kernel per (group,
// device), and marks the ones it did.
std::vector<bool> fused_step(ts_adamw o) {
  std::vector<bool> done(o->params.size(), false);
  std::map<std::pair<int, int>, std::vector<size_t>> buckets;
  for (size_t i = 0; i < o->params.size(); i++) {
    const Param& p = o->params[i];
    if (!p.param.is_cuda() || !p.param.grad().defined()) continue;
    const at::Tensor& w = p.master.defined() ? p.master : p.param;
    if (w.scalar_type() != at::kFloat) continue;
    buckets[{p.group, static_cast<int>(p.param.device().index())}].push_back(i);
  }
  for (auto& [key, idx] : buckets) {
    const Group& h = o->groups[key.first];
    // One launch per chunk of at most kFusedChunkBytes of float32 grads: a
    // bf16 grad's float32 copy lives only while its chunk steps, so the
    // step's peak is the 16 bytes per parameter of weights, grads, master
    // and moments plus one chunk, not 4 more bytes per parameter.
    size_t begin = 0;
    while (begin < idx.size()) {
      size_t end = begin;
      int64_t bytes = 0;
      while (end < idx.size() && (end == begin || bytes + 4 * o->params[idx[end]].param.numel() <= kFusedChunkBytes)) {
        bytes += 4 * o->params[idx[end]].param.numel();
        end++;
      }
      std::vector<at::Tensor> ws, gs, ms, vs, steps, counted, masters, params;
      for (size_t j = begin; j < end; j++) {
        Param& p = o->params[idx[j]];
        at::Tensor w = p.master.defined() ? p.master : p.param;
        if (!p.exp_avg.defined()) {
          p.exp_avg = at::zeros_like(w);
          p.exp_avg_sq = at::zeros_like(w);
        }
        p.step++;
        if (p.step_t.defined()) {
          counted.push_back(p.step_t);
        } else {
          p.step_t = at::full({}, static_cast<double>(p.step), w.options());
        }
        ws.push_back(w);
        gs.push_back(p.param.grad().to(at::kFloat));
        ms.push_back(p.exp_avg);
        vs.push_back(p.exp_avg_sq);
        steps.push_back(p.step_t);
        if (p.master.defined()) {
          masters.push_back(p.master);
          params.push_back(p.param.detach());
        }
        done[idx[j]] = true;
      }
      if (!counted.empty()) at::_foreach_add_(counted, 1.0);
      std::vector<at::Tensor> no_max;  // amsgrad off
      at::_fused_adamw_(ws, gs, ms, vs, no_max, steps, h.lr, h.beta1, h.beta2, h.weight_decay, h.eps, false, false,
                        std::nullopt, std::nullopt);
      gs.clear();  // the chunk's float32 copies go back to the allocator
      if (!params.empty()) at::_foreach_copy_(params, masters);
      begin = end;
    }
  }
  return done;
}
}  // namespace
#endif

extern "C" {

ts_err ts_adamw_fused(int* out) {
  TS_TRY
#if defined(TSHIM_FUSED_ADAMW)
  *out = 1;
#else
  *out = 0;
#endif
  TS_CATCH
}

ts_err ts_adamw_new(const ts_tensor* params, int n, const int* group, int ngroups, const double* lr,
                    const double* beta1, const double* beta2, const double* eps, const double* weight_decay,
                    int master_f32, ts_adamw* out) {
  TS_TRY
  if (master_f32 < 0 || master_f32 > 2)
    throw std::invalid_argument("optimizer state mode " + std::to_string(master_f32) + " is not 0, 1 or 2");
  auto o = std::make_unique<ts_adamw_s>();
  o->own_dtype = master_f32 == 2;
  for (int g = 0; g < ngroups; g++) o->groups.push_back({lr[g], beta1[g], beta2[g], eps[g], weight_decay[g]});
  at::NoGradGuard no_grad;
  for (int i = 0; i < n; i++) {
    Param p;
    p.param = T(params[i]);
    p.group = group[i];
    if (p.group < 0 || p.group >= ngroups)
      throw std::invalid_argument("parameter " + std::to_string(i) + " names group " + std::to_string(p.group) +
                                  " of " + std::to_string(ngroups));
    if (master_f32 == 1 && p.param.scalar_type() != at::kFloat) p.master = p.param.detach().to(at::kFloat).clone();
    o->params.push_back(std::move(p));
  }
  *out = o.release();
  TS_CATCH
}

ts_err ts_adamw_free(ts_adamw o) {
  TS_TRY
  delete o;
  TS_CATCH
}

ts_err ts_adamw_set_lr(ts_adamw o, int group, double lr) {
  TS_TRY
  if (o == nullptr) throw std::invalid_argument("optimizer handle is NULL");
  if (group < 0 || group >= static_cast<int>(o->groups.size()))
    throw std::out_of_range("optimizer group " + std::to_string(group) + " out of range");
  o->groups[group].lr = lr;
  TS_CATCH
}

ts_err ts_adamw_step(ts_adamw o) {
  TS_TRY
  if (o == nullptr) throw std::invalid_argument("optimizer handle is NULL");
  at::NoGradGuard no_grad;
#if defined(TSHIM_FUSED_ADAMW)
  const std::vector<bool> fused = fused_step(o);
#endif
  for (size_t i = 0; i < o->params.size(); i++) {
    auto& p = o->params[i];
#if defined(TSHIM_FUSED_ADAMW)
    if (fused[i]) continue;
#endif
    const auto& raw = p.param.grad();
    if (!raw.defined()) continue;
    const Group& h = o->groups[p.group];
    auto st = tshim::compute_type(p.param.scalar_type());
    bool native = o->own_dtype || p.param.scalar_type() == st;  // f32, f64 or mode 2: update in place
    at::Tensor w = p.master.defined() ? p.master : (native ? p.param : p.param.detach().to(st));
    auto g = raw.to(w.scalar_type());
    if (!p.exp_avg.defined()) {
      p.exp_avg = at::zeros_like(w);
      p.exp_avg_sq = at::zeros_like(w);
    }
    p.step++;
    w.mul_(1.0 - h.lr * h.weight_decay);
    p.exp_avg.lerp_(g, 1.0 - h.beta1);
    p.exp_avg_sq.mul_(h.beta2).addcmul_(g, g, 1.0 - h.beta2);
    double bc1 = 1.0 - std::pow(h.beta1, static_cast<double>(p.step));
    double bc2 = 1.0 - std::pow(h.beta2, static_cast<double>(p.step));
    auto denom = p.exp_avg_sq.sqrt().div_(std::sqrt(bc2)).add_(h.eps);
    w.addcdiv_(p.exp_avg, denom, -h.lr / bc1);
    if (!w.is_same(p.param)) p.param.detach().copy_(w);
  }
  TS_CATCH
}

ts_err ts_adamw_zero_grad(ts_adamw o) {
  TS_TRY
  if (o == nullptr) throw std::invalid_argument("optimizer handle is NULL");
  for (auto& p : o->params) p.param.mutable_grad() = at::Tensor();
  TS_CATCH
}

ts_err ts_adamw_step_count(ts_adamw o, int i, int64_t* out) {
  TS_TRY
  *out = at_index(o, i).step;
  TS_CATCH
}

ts_err ts_adamw_state(ts_adamw o, int i, ts_tensor* exp_avg, ts_tensor* exp_avg_sq, ts_tensor* master) {
  TS_TRY
  const Param& p = at_index(o, i);
  *exp_avg = p.exp_avg.defined() ? wrap(p.exp_avg) : nullptr;
  *exp_avg_sq = p.exp_avg_sq.defined() ? wrap(p.exp_avg_sq) : nullptr;
  *master = p.master.defined() ? wrap(p.master) : nullptr;
  TS_CATCH
}

ts_err ts_adamw_load_state(ts_adamw o, int i, int64_t step, ts_tensor exp_avg, ts_tensor exp_avg_sq,
                           ts_tensor master) {
  TS_TRY
  Param& p = at_index(o, i);
  at::NoGradGuard no_grad;
  auto opts = p.param.options().dtype(o->own_dtype ? p.param.scalar_type() : tshim::compute_type(p.param.scalar_type()));
  if (exp_avg != nullptr) {
    check_same_shape("exp_avg", T(exp_avg), p.param);
    check_same_shape("exp_avg_sq", T(exp_avg_sq), p.param);
    p.exp_avg = T(exp_avg).to(opts).clone();
    p.exp_avg_sq = T(exp_avg_sq).to(opts).clone();
  } else {
    p.exp_avg = at::Tensor();
    p.exp_avg_sq = at::Tensor();
  }
  if (master != nullptr) {
    if (!p.master.defined()) throw std::invalid_argument("checkpoint has a master copy for a parameter that keeps none");
    check_same_shape("master", T(master), p.param);
    p.master.copy_(T(master));
  }
  p.step = step;
  p.step_t = at::Tensor();  // rebuilt from step at the next fused step
  TS_CATCH
}

}  // extern "C"

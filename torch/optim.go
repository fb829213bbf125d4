package torch

// #include "tshim.h"
import "C"

import (
	"fmt"
)

// AdamWGroup is a set of parameters sharing hyperparameters.
type AdamWGroup struct {
	Params      []*Tensor
	LR          float64
	Beta1       float64
	Beta2       float64
	Eps         float64
	WeightDecay float64
}

// AdamW is torch.optim.AdamW (decoupled weight decay, no amsgrad) over
// parameter groups, stepping every parameter in one shim call. Where the
// state lives is its AdamWMode: float32 moments by default; with master
// weights, each non-float32 parameter (bf16 on GPU) is updated through a
// float32 master copy, so small updates are not lost to bf16 rounding; with
// AdamWOwnDType, moments of each parameter's dtype and no master, as
// torch.optim.AdamW runs on bf16 parameters.
type AdamW struct {
	h      C.ts_adamw
	params []*Tensor
	groups int
}

// AdamWState is one parameter's optimizer state, for checkpoints. ExpAvg and
// ExpAvgSq are nil before the parameter's first step; Master is nil unless
// the parameter keeps a float32 master copy.
type AdamWState struct {
	Step             int64
	ExpAvg, ExpAvgSq *Tensor
	Master           *Tensor
}

// AdamWMode is where AdamW keeps its state and runs its update for a
// non-float32 parameter (a float32 one is updated in place under all three).
type AdamWMode int

const (
	AdamWFloat32Moments AdamWMode = iota // float32 moments; the parameter updated through a float32 copy made for the step
	AdamWMasters                         // float32 moments and a float32 master copy the update runs on
	AdamWOwnDType                        // moments of the parameter's dtype, no master: every operation rounds to it
)

// NewAdamWMode builds the optimizer with the given mode; NewAdamW is
// NewAdamWMode with AdamWMasters or AdamWFloat32Moments.
func NewAdamWMode(groups []AdamWGroup, mode AdamWMode) *AdamW {
	return newAdamW(groups, C.int(mode))
}

// NewAdamW builds the optimizer. The parameters stay owned by the caller;
// the optimizer holds its own references until Free.
func NewAdamW(groups []AdamWGroup, masterWeights bool) *AdamW {
	if masterWeights {
		return newAdamW(groups, C.int(AdamWMasters))
	}
	return newAdamW(groups, C.int(AdamWFloat32Moments))
}

func newAdamW(groups []AdamWGroup, state C.int) *AdamW {
	var params []*Tensor
	var groupOf []C.int
	lr := make([]C.double, len(groups))
	b1 := make([]C.double, len(groups))
	b2 := make([]C.double, len(groups))
	eps := make([]C.double, len(groups))
	wd := make([]C.double, len(groups))
	for g, grp := range groups {
		lr[g], b1[g], b2[g], eps[g], wd[g] = C.double(grp.LR), C.double(grp.Beta1), C.double(grp.Beta2), C.double(grp.Eps), C.double(grp.WeightDecay)
		for _, p := range grp.Params {
			params = append(params, p)
			groupOf = append(groupOf, C.int(g))
		}
	}
	if len(params) == 0 || len(groups) == 0 {
		panic(&Error{Op: "adamw", Msg: "no parameters to optimize"})
	}
	hs, n := handles(params)
	var h C.ts_adamw
	check("adamw", C.ts_adamw_new(hs, n, &groupOf[0], C.int(len(groups)), &lr[0], &b1[0], &b2[0], &eps[0], &wd[0], state, &h))
	return &AdamW{h: h, params: params, groups: len(groups)}
}

func (o *AdamW) handle() C.ts_adamw {
	if o == nil || o.h == nil {
		panic(&Error{Op: "adamw", Msg: "use of a freed optimizer"})
	}
	return o.h
}

// Params lists the parameters in order (group by group).
func (o *AdamW) Params() []*Tensor { return o.params }

// SetLR sets the learning rate of a group (for schedules).
func (o *AdamW) SetLR(group int, lr float64) {
	check("adamw_set_lr", C.ts_adamw_set_lr(o.handle(), C.int(group), C.double(lr)))
}

// Step applies one update to every parameter that has a grad.
func (o *AdamW) Step() { check("adamw_step", C.ts_adamw_step(o.handle())) }

// ZeroGrad resets every parameter's grad to undefined.
func (o *AdamW) ZeroGrad() { check("adamw_zero_grad", C.ts_adamw_zero_grad(o.handle())) }

// State returns parameter i's state; the tensors share storage with the live
// state (read them before the next Step) and belong to the caller's scope.
func (o *AdamW) State(i int) AdamWState {
	var st C.int64_t
	check("adamw_step_count", C.ts_adamw_step_count(o.handle(), C.int(i), &st))
	var m, v, master C.ts_tensor
	check("adamw_state", C.ts_adamw_state(o.handle(), C.int(i), &m, &v, &master))
	return AdamWState{Step: int64(st), ExpAvg: wrap(m), ExpAvgSq: wrap(v), Master: wrap(master)}
}

// LoadState copies s into parameter i's state (shapes must match the parameter).
func (o *AdamW) LoadState(i int, s AdamWState) {
	if (s.ExpAvg == nil) != (s.ExpAvgSq == nil) {
		panic(&Error{Op: "adamw_load_state", Msg: fmt.Sprintf("parameter %d: exp_avg and exp_avg_sq must both be given or both be absent", i)})
	}
	var m, v, master C.ts_tensor
	if s.ExpAvg != nil {
		m, v = s.ExpAvg.handle(), s.ExpAvgSq.handle()
	}
	if s.Master != nil {
		master = s.Master.handle()
	}
	check("adamw_load_state", C.ts_adamw_load_state(o.handle(), C.int(i), C.int64_t(s.Step), m, v, master))
}

// Free releases the optimizer state (not the parameters). Idempotent.
func (o *AdamW) Free() {
	if o == nil || o.h == nil {
		return
	}
	h := o.h
	o.h = nil
	check("adamw_free", C.ts_adamw_free(h))
}

// FusedAdamW reports whether this build steps CUDA parameters with ATen's
// fused AdamW kernel (GPU builds where it compiles; never on CPU builds).
func FusedAdamW() bool {
	var out C.int
	check("adamw_fused", C.ts_adamw_fused(&out))
	return out != 0
}

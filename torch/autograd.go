package torch

// #include "tshim.h"
import "C"

import "runtime"

// RequiresGrad reports whether autograd records operations on t.
func (t *Tensor) RequiresGrad() bool {
	var v C.int
	check("requires_grad", C.ts_requires_grad(t.handle(), &v))
	return v != 0
}

// SetRequiresGrad turns gradient recording on or off for a leaf tensor and
// returns t.
func (t *Tensor) SetRequiresGrad(on bool) *Tensor {
	check("requires_grad_", C.ts_set_requires_grad(t.handle(), cbool(on)))
	return t
}

// Backward accumulates d(t)/d(leaf) into every leaf's grad; t must be a scalar.
func (t *Tensor) Backward() {
	check("backward", C.ts_backward(t.handle(), nil))
}

// BackwardWith is Backward for a non-scalar t, seeded with grad (t's shape).
func (t *Tensor) BackwardWith(grad *Tensor) {
	check("backward", C.ts_backward(t.handle(), grad.handle()))
}

// Grad returns a handle to t's accumulated gradient, or nil when it is
// undefined (never computed, or reset by ZeroGrad).
func (t *Tensor) Grad() *Tensor {
	var out C.ts_tensor
	check("grad", C.ts_grad(t.handle(), &out))
	return wrap(out)
}

// SetGrad makes g (t's shape, dtype and device; shared, not copied) t's
// grad; nil makes it undefined.
func (t *Tensor) SetGrad(g *Tensor) {
	var h C.ts_tensor
	if g != nil {
		h = g.handle()
	}
	check("set_grad", C.ts_set_grad(t.handle(), h))
}

// Detach returns a tensor sharing t's data with no autograd history.
func (t *Tensor) Detach() *Tensor {
	var out C.ts_tensor
	check("detach", C.ts_detach(t.handle(), &out))
	return wrap(out)
}

// ZeroGrad resets t's gradient to undefined (treated as zero everywhere).
func (t *Tensor) ZeroGrad() {
	check("zero_grad", C.ts_zero_grad(t.handle()))
}

// NoGrad runs fn with gradient recording off. Grad mode is thread-local in
// libtorch and a goroutine may move between OS threads between cgo calls, so
// NoGrad pins the calling goroutine to its thread while fn runs and restores
// the previous mode afterwards, even if fn panics. Torch work inside fn must
// stay on the calling goroutine.
func NoGrad(fn func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var prev C.int
	check("set_grad_enabled", C.ts_set_grad_enabled(0, &prev))
	defer func() { check("set_grad_enabled", C.ts_set_grad_enabled(prev, nil)) }()
	fn()
}

// GenerationKernels runs fn with the shim's CPU generation kernels on for
// the calling thread (a prefill): no-grad float32/float64 CPU calls of
// VarlenAttention, RoPE and RMSNorm take single passes (csrc/cpu_fast.cc,
// csrc/attention_cpu.cc), and Linear too on AVX-512 (csrc/linear_cpu.cc).
// They equal the ATen math up to float rounding and compute each sequence
// (each row) the same way whatever shares the call.
// For generation only: the update's log-prob passes stay on the ATen math so
// that their no-grad and grad forwards agree bit for bit.
func GenerationKernels(fn func()) { generationKernels(1, fn) }

// DecodeKernels is GenerationKernels for a decode step: Linear takes the
// CPU kernel from AVX2 up (csrc/linear_cpu.cc), which reads each weight once
// per call and gives a row the same bits whatever rows share the call.
func DecodeKernels(fn func()) { generationKernels(2, fn) }

// CPUKernelsVariant names the vector code the CPU generation kernels run:
// "avx512", "avx2" or "baseline" (TROUPE_CPU_SIMD=avx2 or baseline picks a
// lesser one, to measure or test it).
func CPUKernelsVariant() string {
	var p *C.char
	check("cpu_kernels_variant", C.ts_cpu_kernels_variant(&p))
	return C.GoString(p)
}

func generationKernels(mode C.int, fn func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var prev C.int
	check("set_generation_kernels", C.ts_set_generation_kernels(mode, &prev))
	defer func() { check("set_generation_kernels", C.ts_set_generation_kernels(prev, nil)) }()
	fn()
}

// GradEnabled reports the grad mode of the calling OS thread.
func GradEnabled() bool {
	var v C.int
	check("is_grad_enabled", C.ts_is_grad_enabled(&v))
	return v != 0
}

// ClipGradNorm scales the grads of params so that their total 2-norm is at
// most maxNorm (when maxNorm > 0) and returns the norm before clipping.
// Undefined grads count as zero; a non-finite norm leaves every grad as it
// is, so the caller can skip the step.
func ClipGradNorm(params []*Tensor, maxNorm float64) float64 {
	hs, n := handles(params)
	var total C.double
	check("clip_grad_norm", C.ts_clip_grad_norm(hs, n, C.double(maxNorm), &total))
	return float64(total)
}

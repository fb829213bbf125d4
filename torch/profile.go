package torch

// profile.go — where the time of a piece of torch work goes, per ATen
// operator (csrc/opprofile.cc), for `--profile`.

// #include <stdlib.h>
// #include "tshim.h"
import "C"

import "unsafe"

// OpProfile is a running operator profile; Stop ends it.
type OpProfile struct{ on bool }

// StartOpProfile starts timing every ATen operator call, on every thread,
// until Stop. One profile at a time.
func StartOpProfile() *OpProfile {
	check("op_profile_start", C.ts_op_profile_start())
	return &OpProfile{on: true}
}

// Stop ends the profile and returns its table: per operator, the calls and
// the self and total host milliseconds, by self time. Idempotent ("" after
// the first).
func (p *OpProfile) Stop() string {
	if !p.on {
		return ""
	}
	p.on = false
	var table *C.char
	check("op_profile_stop", C.ts_op_profile_stop(&table))
	defer C.free(unsafe.Pointer(table))
	return C.GoString(table)
}

// KernelProfile is a running profile of device kernels; Stop ends it.
type KernelProfile struct{ on bool }

// StartKernelProfile starts torch's profiler (Kineto) recording the
// kernels run on CUDA devices (cuda) or, on a machine without one, the CPU
// operators, until Stop. One at a time; an OpProfile may run beside it.
func StartKernelProfile(cuda bool) *KernelProfile {
	check("kernel_profile_start", C.ts_kernel_profile_start(cbool(cuda)))
	return &KernelProfile{on: true}
}

// Stop ends the profile and returns its table — per kernel (or operator)
// name: total and mean time, calls and share, by total time — and the
// number of events in it: 0 when this libtorch records none (built
// without Kineto, or without CUPTI on a GPU). Idempotent ("", 0 after the
// first).
func (p *KernelProfile) Stop() (table string, events int64) {
	if !p.on {
		return "", 0
	}
	p.on = false
	var t *C.char
	var n C.int64_t
	check("kernel_profile_stop", C.ts_kernel_profile_stop(&t, &n))
	defer C.free(unsafe.Pointer(t))
	return C.GoString(t), int64(n)
}

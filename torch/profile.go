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

package torch

// #include <stdlib.h>
// #include "tshim.h"
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"unsafe"
)

func init() {
	// Set before any op runs: threads created later read this value once.
	n := DefaultThreads(runtime.NumCPU())
	if s := os.Getenv("TROUPE_THREADS"); s != "" {
		if v, err := strconv.Atoi(s); err == nil && v > 0 {
			n = v
		}
	}
	SetNumThreads(n)
	// the CPU level (TROUPE_CPU_SIMD, csrc/cpu_level.cc) is fixed before
	// the first op, which it may route differently
	CPUKernelsVariant()
	if !strings.Contains(os.Getenv("GLIBC_TUNABLES"), "glibc.malloc.") {
		keepFreedMemory()
	}
}

// keepFreedMemory stops glibc from handing a forward pass's freed tensors
// back to the system only to take them again, page fault by page fault, in
// the next one. glibc's default returns the top of the heap once 128 KiB
// or more of it is free, and maps each block above a threshold (that grows
// to at most 32 MiB) separately, unmapping it when freed. A prefill of the
// tiny model at batch 32 spent a third of its time in the kernel's page-
// fault handler that way: 150k prompt tokens/s, 210–230k with freed memory
// kept (docs/performance.md). Now blocks up to 32 MiB come from the heap
// and up to 256 MiB of freed memory stays with the process, to be reused;
// the process's resident memory then shrinks only past that. Larger
// tensors (weights, the key/value arena) are mapped and unmapped as before.
// A GLIBC_TUNABLES that sets any glibc.malloc tunable is left to rule.
func keepFreedMemory() {
	var ok C.int
	check("keep_freed_memory", C.ts_keep_freed_memory(256<<20, 32<<20, &ok))
}

// DefaultThreads is the intra-op thread count used on cpus CPUs without
// TROUPE_THREADS: half of them, at least one. libtorch's CPU kernels run in
// OpenMP teams whose threads wait for each other at every op's end; when a
// team is larger than the cores idle at that moment — other processes on a
// shared machine, or this process's own environments and tokenizers on other
// goroutines — a descheduled member stalls the rest, and an update that takes
// 0.8 s on one thread took 3–4 s on two of a busy two-core machine
// (docs/performance.md). Half the CPUs leaves room for both, and on machines
// with two hardware threads per core is about one thread per core, which is
// where dense kernels stop gaining.
func DefaultThreads(cpus int) int { return max(1, cpus/2) }

// ShimPath is the file libtshim.so was loaded from.
func ShimPath() string {
	var p *C.char
	check("shim_path", C.ts_shim_path(&p))
	return C.GoString(p)
}

// CUDABuild reports whether the shim was built for CUDA (scripts/gpu/
// build-shim.sh, `make gpu`) and, if so, the CUDA runtime version it was
// compiled against ("13.0"). A CUDA build runs on a machine without a GPU
// too, with no CUDA device.
func CUDABuild() (cuda bool, runtime string) {
	var v C.int
	check("build_cuda", C.ts_build_cuda(&v))
	switch {
	case v == 0:
		return false, ""
	case v == 1:
		return true, "unknown"
	}
	return true, fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}

// Version is libtorch's version as major, minor, patch.
func Version() (major, minor, patch int) {
	var a, b, c C.int
	check("version", C.ts_version(&a, &b, &c))
	return int(a), int(b), int(c)
}

// VersionString is libtorch's version as "major.minor.patch".
func VersionString() string {
	a, b, c := Version()
	return fmt.Sprintf("%d.%d.%d", a, b, c)
}

// SetNumThreads sets libtorch's intra-op thread count.
func SetNumThreads(n int) { check("set_num_threads", C.ts_set_num_threads(C.int(n))) }

// NumThreads is libtorch's intra-op thread count.
func NumThreads() int {
	var n C.int
	check("get_num_threads", C.ts_get_num_threads(&n))
	return int(n)
}

// ManualSeed seeds the global CPU (and CUDA) generators.
func ManualSeed(seed uint64) { check("manual_seed", C.ts_manual_seed(C.uint64_t(seed))) }

// CUDAAvailable reports whether the shim was built with CUDA and a device is present.
func CUDAAvailable() bool {
	var v C.int
	check("cuda_available", C.ts_cuda_available(&v))
	return v != 0
}

// CUDADeviceCount is the number of CUDA devices (0 on CPU builds).
func CUDADeviceCount() int {
	var v C.int
	check("cuda_device_count", C.ts_cuda_device_count(&v))
	return int(v)
}

// FusedSDPAAvailable reports whether ScaledDotProductAttention can use
// libtorch's fused kernel (libtorch ≥ 2.1) rather than explicit math.
func FusedSDPAAvailable() bool {
	var v C.int
	check("fused_sdpa_available", C.ts_fused_sdpa_available(&v))
	return v != 0
}

// Synchronize waits for all work queued on a CUDA device (no-op on CPU).
func Synchronize(dev Device) {
	if dev.IsCUDA() {
		check("cuda_synchronize", C.ts_cuda_synchronize(C.int(dev)))
	}
}

// SetDevice makes cuda:index the current CUDA device of the calling OS
// thread. A data-parallel rank calls it once, before any CUDA work, so that
// nothing it does creates a context on another GPU (cuda:0 by default).
func SetDevice(index int) (err error) {
	defer Recover(&err)
	check("cuda_set_device", C.ts_cuda_set_device(C.int(index)))
	return nil
}

// CUDAPCIBusID is cuda:ordinal's PCI bus id ("0000:3B:00.0"), the name
// NVML knows the device by whatever CUDA_VISIBLE_DEVICES or a cgroup did to
// the ordinals; "" on CPU-only builds.
func CUDAPCIBusID(ordinal int) (id string, err error) {
	defer Recover(&err)
	var p *C.char
	check("cuda_pci_bus_id", C.ts_cuda_pci_bus_id(C.int(ordinal), &p))
	defer C.free(unsafe.Pointer(p))
	return C.GoString(p), nil
}

// MemoryStats are a device's allocator figures in bytes: the CUDA caching
// allocator's, or for the CPU what libtorch's CPU allocator holds once
// TrackCPUMemory is on (Reserved is then Allocated); zeros otherwise.
type MemoryStats struct {
	Allocated, Reserved, PeakAllocated int64
}

// TrackCPUMemory counts what libtorch's CPU allocator holds from now on
// (csrc/cpu_memory.cc): Memory(CPU) reports it. Tensors made before are
// never counted. It returns false where the allocator cannot be wrapped.
func TrackCPUMemory() bool {
	var ok C.int
	check("cpu_memory_track", C.ts_cpu_memory_track(&ok))
	return ok != 0
}

// Memory returns dev's allocator statistics.
func Memory(dev Device) MemoryStats {
	if !dev.IsCUDA() {
		var a, p C.int64_t
		check("cpu_memory", C.ts_cpu_memory(&a, &p))
		return MemoryStats{Allocated: int64(a), Reserved: int64(a), PeakAllocated: int64(p)}
	}
	var a, r, p C.int64_t
	check("cuda_memory", C.ts_cuda_memory(C.int(dev), &a, &r, &p))
	return MemoryStats{Allocated: int64(a), Reserved: int64(r), PeakAllocated: int64(p)}
}

// ResetPeakMemory restarts dev's peak-allocation figure.
func ResetPeakMemory(dev Device) {
	if dev.IsCUDA() {
		check("cuda_reset_peak", C.ts_cuda_reset_peak(C.int(dev)))
		return
	}
	check("cpu_reset_peak", C.ts_cpu_reset_peak())
}

// EmptyCache returns cached, unused CUDA memory to the driver.
func EmptyCache() { check("cuda_empty_cache", C.ts_cuda_empty_cache()) }

// OpCount is what CountOps counted.
type OpCount struct {
	// Ops is every ATen operator call, composite ones and those they make.
	Ops int64
	// Leaves is the calls that made no further calls, less those that only
	// create views or allocate: on a GPU, roughly the kernels launched.
	Leaves int64
}

// CountOps runs fn and counts the ATen operator calls it makes, on every
// thread. Meant for benchmarks: a GPU's cost at small batches is its kernel
// launches, and their count can be read on a CPU. No other torch work may
// begin or end at the moment counting starts or stops. On a CPU build, an op
// that CUDA runs as one fused kernel may decompose into several leaves, so
// compare counts from the same build.
func CountOps(fn func()) (n OpCount) {
	check("op_count_start", C.ts_op_count_start())
	defer func() {
		var ops, leaves C.int64_t
		check("op_count_stop", C.ts_op_count_stop(&ops, &leaves))
		n = OpCount{Ops: int64(ops), Leaves: int64(leaves)}
	}()
	fn()
	return n
}

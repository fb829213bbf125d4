// Package cpulevel runs a test at every x86-64 instruction-set level the
// machine has — AVX-512, AVX2 (with FMA), the baseline — so that one
// machine checks what machines of each level compute. It is for the tests
// whose outcome depends on the level: troupe's own vector kernels (one
// variant per level, torch/csrc/simd.h), bit-identity claims, and bfloat16
// arithmetic, whose GEMMs ATen routes by level.
//
// A level is an environment, applied to a child process (the test binary
// itself, running the one test):
//
//	TROUPE_CPU_SIMD      troupe's kernel variant, and below AVX-512 ATen
//	                     kept off oneDNN's bf16 GEMMs, as a CPU without
//	                     AVX-512 keeps it (torch/csrc/cpu_level.cc)
//	ATEN_CPU_CAPABILITY  ATen's own vectorised kernels (default, avx2, avx512)
//	ONEDNN_MAX_CPU_ISA   oneDNN's, for PyTorch in the reference processes a
//	                     test starts (transformers' side of a comparison)
//	OPENBLAS_CORETYPE    OpenBLAS's float32 GEMM kernels
//
// What it is not: an emulator. A level runs the code a CPU of that level
// would run, on this CPU; it cannot raise the level above the machine's.
package cpulevel

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/cpu"
)

// Level is one instruction-set level and the environment that runs a
// process at it.
type Level struct {
	Name string   // "avx512", "avx2", "baseline" (torch.CPUKernelsVariant's names)
	Env  []string // KEY=value
}

var levels = []Level{
	{"avx512", []string{"TROUPE_CPU_SIMD=avx512", "ATEN_CPU_CAPABILITY=avx512"}},
	{"avx2", []string{"TROUPE_CPU_SIMD=avx2", "ATEN_CPU_CAPABILITY=avx2", "ONEDNN_MAX_CPU_ISA=AVX2", "OPENBLAS_CORETYPE=Haswell"}},
	{"baseline", []string{"TROUPE_CPU_SIMD=baseline", "ATEN_CPU_CAPABILITY=default", "ONEDNN_MAX_CPU_ISA=SSE41", "OPENBLAS_CORETYPE=Prescott"}},
}

// pinEnv are the variables that pin a level; a process started with any of
// them set runs at the level it was given and starts no others.
var pinEnv = []string{"TROUPE_CPU_SIMD", "ATEN_CPU_CAPABILITY"}

// childEnv marks a child started by Each.
const childEnv = "TROUPE_TEST_CPU_LEVEL"

// cudaEnv set to 1 runs the tests on a GPU (model, policy, ckpt, torch).
const cudaEnv = "TROUPE_CUDA"

// Levels lists the levels this machine can run, its own first (the tests
// of torch/csrc's variant choice use the same CPUID bits: AVX-512F and DQ,
// AVX2 and FMA).
func Levels() []Level {
	switch {
	case cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ:
		return levels
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return levels[1:]
	case cpu.X86.HasSSE2:
		return levels[2:]
	}
	return nil // not x86-64: one level, the process's own
}

// Each runs the calling test once more at every lesser level the machine
// has, each in a child process, as subtests named cpu=<level>, and then
// returns so that the test goes on at the machine's own level. Call it
// early in a top-level test; env adds KEY=value settings for the children
// (fixtures the parent has written already, say, so that each child does
// not write them again). In a child, where the environment pins a level
// (TROUPE_CPU_SIMD or ATEN_CPU_CAPABILITY set), or in a GPU run
// (TROUPE_CUDA=1: the tests compute on the GPU, and a GPU window has no
// time to spare), it does nothing: the test runs once.
func Each(t *testing.T, env ...string) {
	t.Helper()
	if os.Getenv(childEnv) != "" {
		t.Logf("at CPU level %s (a child of the machine's own run)", os.Getenv(childEnv))
		return
	}
	for _, k := range pinEnv {
		if v := os.Getenv(k); v != "" {
			t.Logf("at the level %s=%s pins; the other levels are not run", k, v)
			return
		}
	}
	if os.Getenv(cudaEnv) == "1" {
		return
	}
	all := Levels()
	if len(all) < 2 {
		return
	}
	for _, l := range all[1:] {
		t.Run("cpu="+l.Name, func(t *testing.T) { runChild(t, l, env) })
	}
}

// runChild runs the parent test (t's parent's name) at level l, with env
// added to the child's environment.
func runChild(t *testing.T, l Level, env []string) {
	name := t.Name()[:strings.LastIndex(t.Name(), "/")]
	args := []string{"-test.run", "^" + strings.ReplaceAll(regexp.QuoteMeta(name), "/", "$/^") + "$", "-test.count", "1"}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	if d, ok := t.Deadline(); ok {
		args = append(args, "-test.timeout", time.Until(d).Round(time.Second).String())
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(append(os.Environ(), childEnv+"="+l.Name), l.Env...), env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start).Round(100 * time.Millisecond)
	switch {
	case err != nil:
		t.Errorf("%s at CPU level %s (%s) failed after %v: %v\n%s", name, l.Name, strings.Join(l.Env, " "), took, err, out)
	case strings.Contains(string(out), "no tests to run"):
		t.Errorf("%s at CPU level %s: the child ran no test (%s)\n%s", name, l.Name, strings.Join(args, " "), out)
	case testing.Verbose():
		t.Logf("passed at %s in %v:\n%s", strings.Join(l.Env, " "), took, out)
	default:
		t.Logf("passed at %s in %v", strings.Join(l.Env, " "), took)
	}
}

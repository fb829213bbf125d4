// Package torch is troupe's Go API over libtorch: tensors, the ops a Qwen
// transformer, its sampler and the RL losses need, autograd, AdamW, seeded
// generators and the runtime (threads, CUDA, memory).
//
// It calls libtorch through libtshim.so, a hand-written C ABI (tshim.h,
// sources in csrc/) built by `make shim` against Debian's libtorch 1.13, or by
// scripts/gpu/build-shim.sh against the PyTorch wheel on GPU machines. This is
// the only package with cgo besides internal/gpu.
//
// # Lifetimes
//
// Tensor memory is never left to the garbage collector. A *Tensor is freed
// by Free (idempotent) or by the Scope that was innermost when it was made:
//
//	s := torch.NewScope()
//	defer s.Close()            // frees every temporary below
//	h := x.Matmul(w)           // owned by s
//	y := s.Keep(h.Silu())      // moved to the parent scope (or to the caller)
//
// Tensors made outside any scope (model weights, optimizer state) belong to
// whoever made them. LiveTensors counts handles alive in the process; leak
// tests compare it before and after a loop.
//
// # Errors
//
// Ops panic with a *Error carrying libtorch's message (a shape mismatch, a
// dtype libtorch refuses); the process survives. Package boundaries — model
// loading, the forward pass, generation, the update step — defer Recover to
// return it as an ordinary error.
//
// # Threads
//
// libtorch keeps grad mode (and the current CUDA device and stream) per OS
// thread, and numbers autograd nodes with a per-thread counter that orders
// the backward pass; a goroutine may move between OS threads between two cgo
// calls. troupe's rule: all torch work of a process runs on one goroutine
// locked to its OS thread (runtime.LockOSThread; cmd/train locks the main
// goroutine). Results are correct on any thread, but only a locked goroutine
// gives bit-identical gradients from run to run: forward ops recorded on
// different threads make the backward pass sum some gradients in a different
// order (seen in about one run in six on this project's resume test).
// policy.Trainer.Update locks its goroutine for the length of a step itself,
// so a caller that forgets still gets repeatable updates.
//
// The only thread-local state troupe changes is grad mode, and only inside
// NoGrad, which itself locks the goroutine to its thread for the duration and
// restores the previous mode on the way out. Device placement is carried by
// the tensors (ops run on their inputs' device), so the current-device
// setting is never relied on. Scopes are process-wide: open and close them on
// the torch goroutine. Pure-Go work (tokenizing, rewards, environments) may
// run on any goroutine.
//
// The one exception is a Thread (thread.go): a goroutine locked to an OS
// thread of its own, with a scope stack of its own, for torch work that runs
// beside the torch goroutine (the team's models updating at once on their
// devices, run.concurrent_updates). A process that starts no Thread takes exactly
// the single-stack path above.
//
// The intra-op thread count is set at start-up to half the CPUs (at least
// one), or to TROUPE_THREADS when set (DefaultThreads says why: OpenMP teams
// larger than the idle cores collapse on a shared machine;
// docs/performance.md has the measurements).
//
// On the CPU, generation (GenerationKernels, DecodeKernels) takes
// single-pass kernels where the inputs allow (csrc/attention_cpu.cc,
// csrc/cpu_fast.cc, csrc/linear_cpu.cc): varlen attention reads the
// key/value arena in place, a decode step's linear layers read each weight
// once, RoPE and RMSNorm are one loop each; every one computes a row the
// same way whatever rows share the call. Which of their vector variants
// runs is the CPU's level (csrc/cpu_level.cc): its best, or a lesser one
// named by TROUPE_CPU_SIMD=avx2|baseline, which also keeps ATen off
// oneDNN's bfloat16 GEMMs as such a CPU does (CPUKernelsVariant names it).
//
// bfloat16 and float16 GEMMs on the CPU sum in float32 and round once
// whatever the CPU: attention's always, Linear and LinearTokenLogProbs
// where ATen's own GEMM would sum in the reduced type (libtorch 1.13
// without oneDNN, i.e. CPUs without AVX-512).
//
// # Files
//
//	doc.go        this overview
//	cgo.go        the package's only #cgo block, and the shim's error handling
//	dtype.go      element types and devices
//	tensor.go     Tensor, Free, Scope and the live-tensor counter
//	thread.go     Thread: a second torch thread with its own scope stack
//	create.go     making tensors: from Go slices, zeros, ranges, random
//	math.go       elementwise and reduction ops
//	shape.go      views and copies: reshape, narrow, cat, index
//	nn.go         softmax, RMSNorm, attention and the other network ops
//	autograd.go   grad mode, backward, gradients
//	optim.go      AdamW over parameter groups
//	generator.go  seeded per-device random-number generators
//	graph.go      CUDA graphs
//	dist.go       collectives across processes (Gloo, NCCL)
//	storage.go    the memory under a tensor, freed and re-allocated for sharded weights
//	runtime.go    the loaded shim, versions, threads, CUDA devices and memory
//	profile.go    the ATen operator profiler behind --profile
//
// # Versions
//
// The shim compiles against libtorch 1.13 and 2.x. Where 2.x has the fused
// scaled-dot-product attention kernel it is used; 1.13 (and Attention.Explicit)
// compute the same attention with explicit math. RMSNorm always uses the
// Hugging Face Qwen formula rather than at::rms_norm.
package torch

package bench

// profile.go — `--profile PREFIX` for any command: a Go CPU profile of the
// whole command (PREFIX.cpu.pprof, for `go tool pprof`), a table of the
// ATen operators it ran with their calls and self and total times
// (PREFIX.ops.txt, torch.OpProfile: libtorch's RecordFunction hooks, which
// every libtorch build has, on the host clock) and, where CUDA is there, a
// table of the CUDA kernels with their device times (PREFIX.kernels.txt,
// torch.KernelProfile: torch's profiler, Kineto with CUPTI, which the PyPI
// wheels ship; a libtorch without it records no kernels, and the command
// says so instead of writing the file). The tables cover the whole command,
// model loading and warm-up included: profile `train bench`, whose work is
// the measured one.

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"troupe/torch"
)

// StartProfile starts both profiles; the returned stop writes them.
// It refuses a prefix whose files exist and are not an earlier profile's
// (a pprof file is gzip; an operator table comes with one).
func StartProfile(prefix string) (stop func() error, err error) {
	if err := refuseForeign(prefix); err != nil {
		return nil, err
	}
	f, err := os.Create(prefix + ".cpu.pprof")
	if err != nil {
		return nil, fmt.Errorf("--profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--profile: %w", err)
	}
	ops := torch.StartOpProfile()
	var kernels *torch.KernelProfile
	if torch.CUDAAvailable() {
		if err := startKernels(&kernels); err != nil {
			fmt.Fprintf(os.Stderr, "profile: no kernel table: torch's profiler did not start (%v)\n", err)
		}
	}
	return func() error {
		pprof.StopCPUProfile()
		table := ops.Stop()
		if err := f.Close(); err != nil {
			return fmt.Errorf("--profile: %w", err)
		}
		if err := os.WriteFile(prefix+".ops.txt", []byte(table), 0o644); err != nil {
			return fmt.Errorf("--profile: %w", err)
		}
		kernelFile := ""
		if kernels != nil {
			table, n := kernels.Stop()
			if n == 0 {
				fmt.Fprintf(os.Stderr, "profile: no CUDA kernel was recorded (none ran, or this libtorch's profiler has no CUPTI); %s.kernels.txt not written\n", prefix)
			} else if err := os.WriteFile(prefix+".kernels.txt", []byte(table), 0o644); err != nil {
				return fmt.Errorf("--profile: %w", err)
			} else {
				kernelFile = ", " + prefix + ".kernels.txt"
			}
		}
		fmt.Fprintf(os.Stderr, "profile: %s.cpu.pprof (go tool pprof -top bin/train %s.cpu.pprof), %s.ops.txt%s\n", prefix, prefix, prefix, kernelFile)
		return nil
	}, nil
}

// startKernels starts the CUDA kernel profile into *k, returning the
// profiler's refusal as an error.
func startKernels(k **torch.KernelProfile) (err error) {
	defer torch.Recover(&err)
	*k = torch.StartKernelProfile(true)
	return nil
}

// refuseForeign refuses to replace PREFIX.cpu.pprof, PREFIX.ops.txt or
// PREFIX.kernels.txt when they are not the files of an earlier --profile
// PREFIX.
func refuseForeign(prefix string) error {
	pprofPath, opsPath, kernelsPath := prefix+".cpu.pprof", prefix+".ops.txt", prefix+".kernels.txt"
	head := make([]byte, 2)
	isProfile := false
	if f, err := os.Open(pprofPath); err == nil {
		n, _ := io.ReadFull(f, head)
		f.Close()
		isProfile = n == 2 && head[0] == 0x1f && head[1] == 0x8b // gzip: what pprof writes
		if !isProfile {
			return fmt.Errorf("--profile %s: %s exists and is not a CPU profile; choose another PREFIX", prefix, pprofPath)
		}
	}
	if st, err := os.Stat(opsPath); err == nil && (st.IsDir() || !isProfile) {
		return fmt.Errorf("--profile %s: %s exists and is not the operator table of an earlier profile; choose another PREFIX", prefix, opsPath)
	}
	if st, err := os.Stat(kernelsPath); err == nil && (st.IsDir() || !isProfile) {
		return fmt.Errorf("--profile %s: %s exists and is not the kernel table of an earlier profile; choose another PREFIX", prefix, kernelsPath)
	}
	return nil
}

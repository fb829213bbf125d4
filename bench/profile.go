package bench

// profile.go — `--profile PREFIX` for any command: a Go CPU profile of the
// whole command (PREFIX.cpu.pprof, for `go tool pprof`) and a table of the
// ATen operators it ran with their calls and self and total times
// (PREFIX.ops.txt, torch.OpProfile: libtorch's RecordFunction hooks, which
// every libtorch build has).

import (
	"fmt"
	"os"
	"runtime/pprof"

	"troupe/torch"
)

// StartProfile starts both profiles; the returned stop writes them.
func StartProfile(prefix string) (stop func() error, err error) {
	f, err := os.Create(prefix + ".cpu.pprof")
	if err != nil {
		return nil, fmt.Errorf("--profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--profile: %w", err)
	}
	ops := torch.StartOpProfile()
	return func() error {
		pprof.StopCPUProfile()
		table := ops.Stop()
		if err := f.Close(); err != nil {
			return fmt.Errorf("--profile: %w", err)
		}
		if err := os.WriteFile(prefix+".ops.txt", []byte(table), 0o644); err != nil {
			return fmt.Errorf("--profile: %w", err)
		}
		fmt.Fprintf(os.Stderr, "profile: %s.cpu.pprof (go tool pprof -top bin/train %s.cpu.pprof), %s.ops.txt\n", prefix, prefix, prefix)
		return nil
	}, nil
}

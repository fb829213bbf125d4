package bench

// profile.go — `--profile PREFIX` for any command: a Go CPU profile of the
// whole command (PREFIX.cpu.pprof, for `go tool pprof`) and a table of the
// ATen operators it ran with their calls and self and total times
// (PREFIX.ops.txt, torch.OpProfile: libtorch's RecordFunction hooks, which
// every libtorch build has).

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

// refuseForeign refuses to replace PREFIX.cpu.pprof or PREFIX.ops.txt when
// they are not the two files of an earlier --profile PREFIX.
func refuseForeign(prefix string) error {
	pprofPath, opsPath := prefix+".cpu.pprof", prefix+".ops.txt"
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
	return nil
}

package main

// launch.go — `train --nproc N`: start N ranks of this program on this node
// (data parallel, package dist) and wait for them.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"troupe/dist"
)

// launch runs nproc ranks of this program with the given arguments on this
// node and waits for them. Rank 0's output is this command's; the others'
// stderr is passed through with a "[rank N]" prefix. When a rank fails the
// others are stopped, and the error names the rank that failed first; when
// the ranks stop in order after a signal (exitInterrupted), rank 0's line
// is the only one. When this process dies the ranks stop too
// (launch_linux.go, dist/launcher.go).
func launch(nproc int, args []string, stdout, stderr io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("--nproc: finding a free port for the rendezvous: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	threads := os.Getenv("TROUPE_THREADS")
	if threads == "" {
		threads = strconv.Itoa(max(1, runtime.NumCPU()/nproc))
	}
	cmds := make([]*exec.Cmd, nproc)
	for r := range nproc {
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), "WORLD_SIZE="+strconv.Itoa(nproc), "RANK="+strconv.Itoa(r), "LOCAL_RANK="+strconv.Itoa(r),
			"MASTER_ADDR=127.0.0.1", "MASTER_PORT="+strconv.Itoa(port), "TROUPE_THREADS="+threads, asTrainEnv+"=1",
			dist.LauncherEnv+"="+strconv.Itoa(os.Getpid()))
		cmd.SysProcAttr = rankProcAttr() // signals reach the ranks once, through this process; its death stops them
		if r == 0 {
			cmd.Stdout, cmd.Stderr = stdout, stderr
		} else {
			cmd.Stdout, cmd.Stderr = io.Discard, &prefixWriter{w: stderr, prefix: fmt.Sprintf("[rank %d] ", r)}
		}
		cmds[r] = cmd
	}
	for r, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			for _, c := range cmds[:r] {
				c.Process.Kill()
			}
			return fmt.Errorf("--nproc: starting rank %d: %w", r, err)
		}
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		for sig := range sigs {
			for _, c := range cmds {
				c.Process.Signal(sig)
			}
		}
	}()
	type exit struct {
		rank int
		err  error
	}
	exits := make(chan exit, nproc)
	for r, cmd := range cmds {
		go func() { exits <- exit{r, cmd.Wait()} }()
	}
	var first *exit
	stopped := 0 // ranks that a signal stopped in order (exitInterrupted)
	for range nproc {
		e := <-exits
		var ee *exec.ExitError
		if errors.As(e.err, &ee) && ee.ExitCode() == exitInterrupted {
			stopped++
			continue
		}
		if e.err != nil && first == nil {
			first = &e
			// the others fail at their next collective; stop any that hang
			go func() {
				time.Sleep(30 * time.Second)
				for _, c := range cmds {
					c.Process.Kill()
				}
			}()
		}
	}
	switch {
	case first != nil:
		return fmt.Errorf("rank %d of %d failed first (%v); every rank has stopped; a checkpoint is written whole or not at all, so whatever the run saved is intact", first.rank, nproc, first.err)
	case stopped > 0: // an orderly stop: rank 0 has printed what was saved and the command that continues
		return quietExit{code: exitInterrupted}
	}
	return nil
}

// asTrainEnv tells a test binary started by launch to act as the train
// command (see TestMain).
const asTrainEnv = "TROUPE_AS_TRAIN"

// prefixWriter prefixes every line.
type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	mid    bool
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out bytes.Buffer
	for _, c := range b {
		if !p.mid {
			out.WriteString(p.prefix)
			p.mid = true
		}
		out.WriteByte(c)
		if c == '\n' {
			p.mid = false
		}
	}
	if _, err := p.w.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(b), nil
}

// withoutNproc is the command line without its --nproc flag: what each rank
// runs.
func withoutNproc(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--nproc" && i+1 < len(args):
			i++
		case strings.HasPrefix(a, "--nproc="):
		default:
			out = append(out, a)
		}
	}
	return out
}

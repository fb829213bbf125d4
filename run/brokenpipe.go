package run

// brokenpipe.go — a console that goes away never kills a run, or any
// other command (QuietConsole). `train … |
// tee log` and Ctrl-C interrupts tee as well as the run; the run's next
// line would then meet a closed pipe, and Go ends a program whose standard
// output meets a closed pipe with SIGPIPE, without a message or a
// checkpoint. A run ignores SIGPIPE instead, and its console writer takes
// the first EPIPE as "stop printing": the run finishes its step, saves its
// checkpoint and stops as on a terminal. Errors still go to stderr.
//
// What it is not: the run's files (metrics.jsonl, checkpoints) are written
// as before; a full disk is still an error.

import (
	"errors"
	"io"
	"os/signal"
	"sync"
	"syscall"
)

// QuietConsole is what every command prints through (cmd/train): SIGPIPE
// ignored, and the first write that meets a closed pipe silences the
// console instead of ending the command, which finishes its work
// (`train export … | head -1` still writes the whole export).
func QuietConsole(w io.Writer) io.Writer {
	ignoreBrokenPipe()
	return quietOnBrokenPipe(w)
}

// ignoreBrokenPipe makes writes to a closed pipe return EPIPE instead of
// ending the process.
func ignoreBrokenPipe() { signal.Ignore(syscall.SIGPIPE) }

// quietOnBrokenPipe wraps the console: after the first write that meets a
// closed pipe, writes are dropped and reported as done.
func quietOnBrokenPipe(w io.Writer) io.Writer { return &pipeWriter{w: w} }

type pipeWriter struct {
	mu     sync.Mutex
	w      io.Writer
	broken bool
}

func (p *pipeWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.broken {
		return len(b), nil
	}
	n, err := p.w.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		p.broken = true
		return len(b), nil
	}
	return n, err
}

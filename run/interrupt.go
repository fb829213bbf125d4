package run

// interrupt.go — SIGINT and SIGTERM in the commands other than the run
// (export, sft): the first asks the command to stop at its next safe point
// — export writes nothing, sft writes what it has trained — and the
// command says what it did; a second quits at once, leaving only hidden
// temporary files that the next command of the kind removes. (The run's
// own interrupts, which checkpoint, are console.go's.)

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// commandStop watches SIGINT and SIGTERM. The first is reported on out with
// then (what the command will do) and returned by stopped from then on; a
// second prints quitting and ends the process. release ends the watch.
func commandStop(out io.Writer, cmd, then, quitting string) (stopped func() os.Signal, release func()) {
	sigs := make(chan os.Signal, 2)
	done := make(chan struct{})
	var mu sync.Mutex
	var got os.Signal
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		for {
			select {
			case <-done:
				return
			case sig := <-sigs:
				mu.Lock()
				first := got == nil
				if first {
					got = sig
				}
				mu.Unlock()
				if first {
					fmt.Fprintf(out, "%s: %v: %s; interrupt again to quit now\n", cmd, sig, then)
					continue
				}
				fmt.Fprintf(out, "%s: %v again: quitting now; %s\n", cmd, sig, quitting)
				forceQuit()
			}
		}
	}()
	stopped = func() os.Signal {
		mu.Lock()
		defer mu.Unlock()
		return got
	}
	var once sync.Once
	return stopped, func() { once.Do(func() { signal.Stop(sigs); close(done) }) }
}

// Command train is troupe's CLI: reinforcement learning of multi-agent LLM
// systems from a YAML config (the root command), and the tools around it —
// init, sft, eval, generate, export, tokenize, plot, bench, version.
//
// All torch work runs on the main goroutine, locked to the main OS thread
// (see package torch on thread-local state).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"troupe/dist"
	"troupe/internal/cmdline"
	"troupe/run"
)

var version = "dev"

// commandArgs is the command line being executed (train --nproc runs it
// again in every rank).
var commandArgs []string

func init() { runtime.LockOSThread() }

func main() {
	cmdline.Program = os.Args[0] // the commands messages print start as this one did
	os.Exit(execute(os.Args[1:], os.Stdout, os.Stderr))
}

// execute runs the command line and returns the exit status; an error is
// printed as one line on stderr.
func execute(args []string, stdout, stderr io.Writer) int {
	// torch work stays on this OS thread: libtorch numbers autograd nodes per
	// thread, so ops spread over threads would change the order in which the
	// backward pass sums gradients, and resumed runs would not be bit-identical.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := resumeWithoutEquals(args); err != nil {
		fmt.Fprintln(stderr, "train: "+escapeControl(err.Error()))
		return 1
	}
	if err := checkEnv(); err != nil { // strict.go
		fmt.Fprintln(stderr, "train: "+escapeControl(err.Error()))
		return 1
	}
	commandArgs = args
	run.Version = version
	stdout = run.QuietConsole(stdout) // a closed pipe silences a command, never kills it
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	var quiet quietExit
	switch {
	case err == nil:
		return 0
	case errors.As(err, &quiet): // a launcher whose ranks said it all
		return quiet.code
	case run.IsInterrupted(err) && !leadRank():
		return exitInterrupted // an orderly stop: rank 0 alone says what was saved and how to continue
	}
	msg := "train: " + escapeControl(err.Error()) // a typed escape sequence is shown, never acted on (strict.go)
	fmt.Fprintln(stderr, msg)
	if run.IsInterrupted(err) {
		return exitInterrupted
	}
	dist.ReportToLauncher(msg) // torchrun's summary of the failure shows it
	return 1
}

// exitInterrupted is the exit status of a run that a signal stopped in
// order (128 + SIGINT, as shells report an interrupted command): a
// launcher tells it from a failure.
const exitInterrupted = 130

// quietExit ends the command with code and no line of its own.
type quietExit struct{ code int }

func (q quietExit) Error() string { return fmt.Sprintf("exit status %d", q.code) }

// leadRank: this process is rank 0 of a data-parallel run, or no rank.
func leadRank() bool {
	r := os.Getenv("RANK")
	return r == "" || r == "0"
}

// resumeWithoutEquals catches `--resume DIR`: --resume alone means "latest",
// so the directory would be read as a command name and cobra would answer
// "unknown command".
func resumeWithoutEquals(args []string) error {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--" {
			return nil
		}
		if args[i] == "--resume" && !strings.HasPrefix(args[i+1], "-") {
			return fmt.Errorf("--resume %s: write --resume=%s (with =); --resume alone continues the newest checkpoint of run.output_dir", args[i+1], args[i+1])
		}
	}
	return nil
}

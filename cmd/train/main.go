// Command train is troupe's CLI: reinforcement learning of multi-agent LLM
// systems from a YAML config (the root command), and the tools around it —
// init, sft, eval, generate, export, tokenize, plot, version.
//
// All torch work runs on the main goroutine, locked to the main OS thread
// (see package torch on thread-local state).
package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
)

var version = "dev"

func init() { runtime.LockOSThread() }

func main() { os.Exit(execute(os.Args[1:], os.Stdout, os.Stderr)) }

// execute runs the command line and returns the exit status; an error is
// printed as one line on stderr.
func execute(args []string, stdout, stderr io.Writer) int {
	// torch work stays on this OS thread: libtorch numbers autograd nodes per
	// thread, so ops spread over threads would change the order in which the
	// backward pass sums gradients, and resumed runs would not be bit-identical.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(stderr, "train: "+err.Error())
		return 1
	}
	return 0
}

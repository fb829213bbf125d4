// harness.go — how a joint program is tested without letting it judge
// itself. Two sandboxed processes per scored program, joined by two pipes:
//
//	program  worker.py + solution.py             untrusted: runs the program
//	runner   runner.py + solution.py + tests     trusted: runs the tests
//
// The runner compiles the program (the syntax check: no code of it runs),
// then executes the hidden tests in its own process, with the program's
// functions replaced by proxies: a call sends its arguments down one pipe,
// the worker calls the real function and sends the value back up the
// other, and the runner decodes it as plain data (builtin types only) for
// the test's own assertions. The tests never enter the program's sandbox,
// and the verdict leaves the runner on its standard output, which only
// troupe reads. Whatever the program prints, patches, exits with or writes
// to any descriptor it holds, the one way to pass a test is to return
// values that satisfy it.
//
// The task's own tests are trusted code and run in the runner. Tests a
// model wrote (ScoreWrittenTests: the code-test workflow's tester) are not:
// they would run beside the verdict and could report anything. The runner
// reads each as data instead (an assert of the entry point's value on
// literal arguments against a literal) and evaluates none of it, so no
// model-written code, program or test, runs where the verdict is written.
//
// Not kept from the in-process harness this replaces: arguments and return
// values must be plain data (numbers, strings, bytes, lists, tuples,
// dicts, sets; the worker says so when they are not), and a test sees the
// program's top-level functions but not its other globals.
package coding

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"troupe/internal/sandbox"
)

var (
	//go:embed harness/codec.py
	codecPy string
	//go:embed harness/worker.py
	workerPy string
	//go:embed harness/runner.py
	runnerPy string
)

// programGrace is how long the program's process may take to leave once
// the runner is done (it leaves at once when the runner's pipe closes,
// unless it is still busy: looping at import, say).
const programGrace = 2 * time.Second

// trial is what one test run of a joint program found.
type trial struct {
	judged       bool      // the runner reported the syntax check
	syntax       bool      // the program compiles
	compileError string    // why not
	passed       int       // tests that passed (each counted once)
	total        int       // the task's tests
	failures     []failure // the failing tests the runner reported, in order
	complete     bool      // the runner reported every test
	program      sandbox.Result
	runner       sandbox.Result
}

// failure is one failing test and the error it raised.
type failure struct {
	test  int
	error string
}

// try runs tests against program (the joint source) and reads the
// runner's verdict. written marks tests a model wrote: the runner reads
// them as data and runs none of them.
func (e *Env) try(program, entry string, tests []string, written bool) trial {
	spec, _ := json.Marshal(map[string]any{"entry": entry, "tests": tests, "written": written})
	calls, err1 := pipe()   // runner → program
	answers, err2 := pipe() // program → runner
	if err := firstError(err1, err2); err != nil {
		closeFiles(calls[:], answers[:])
		fail := sandbox.Result{Outcome: sandbox.Unavailable, Detail: err.Error()}
		return trial{total: len(tests), program: fail, runner: fail}
	}
	stop, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan sandbox.Result, 1)
	go func() {
		ran <- e.box.Exec(stop, sandbox.Program{
			Args:       []string{e.python, "-I", "worker.py"},
			Files:      map[string][]byte{"worker.py": []byte(codecPy + workerPy), "solution.py": []byte(program)},
			ExtraFiles: []*os.File{calls[0], answers[1]},
		})
	}()
	runner := e.judge.Exec(context.Background(), sandbox.Program{
		Args:       []string{e.python, "-I", "runner.py"},
		Files:      map[string][]byte{"runner.py": []byte(codecPy + runnerPy), "solution.py": []byte(program), "tests.json": spec},
		ExtraFiles: []*os.File{calls[1], answers[0]},
	})
	var prog sandbox.Result
	select {
	case prog = <-ran:
	case <-time.After(programGrace):
		cancel()
		prog = <-ran
	}
	t := readVerdict(runner.Stdout, len(tests))
	t.program, t.runner = prog, runner
	return t
}

// readVerdict reads the runner's lines: {"syntax": …}, then {"test": i,
// "passed": …, "error": …} per test, then {"done": true}. A test the runner
// did not report (it was stopped) counts as failed.
func readVerdict(out []byte, total int) trial {
	t := trial{total: total}
	seen := make([]bool, total)
	for _, line := range bytes.Split(out, []byte("\n")) {
		var r struct {
			Syntax *bool  `json:"syntax"`
			Test   *int   `json:"test"`
			Passed bool   `json:"passed"`
			Error  string `json:"error"`
			Done   bool   `json:"done"`
		}
		if json.Unmarshal(line, &r) != nil {
			continue
		}
		switch {
		case r.Syntax != nil:
			t.judged, t.syntax, t.compileError = true, *r.Syntax, r.Error
		case r.Test != nil && *r.Test >= 0 && *r.Test < total && !seen[*r.Test]:
			seen[*r.Test] = true
			if r.Passed {
				t.passed++
			} else {
				t.failures = append(t.failures, failure{*r.Test, r.Error})
			}
		case r.Done:
			t.complete = true
		}
	}
	return t
}

// pipe returns a pipe's read and write ends.
func pipe() ([2]*os.File, error) {
	r, w, err := os.Pipe()
	return [2]*os.File{r, w}, err
}

func closeFiles(sets ...[]*os.File) {
	for _, fs := range sets {
		for _, f := range fs {
			if f != nil {
				f.Close()
			}
		}
	}
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("coding: pipe: %w", err)
		}
	}
	return nil
}

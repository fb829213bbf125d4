package coding

// solutions.go — a dataset's tasks checked against themselves once, when
// the data is read: each task with a reference solution (HumanEval's
// prompt + canonical_solution, MBPP's code) runs it on its own tests in the
// sandbox, and a task whose solution fails a test, or does not finish
// within the limits (tests that loop forever), is set aside with a line
// naming it. Before, such a task cost a full sandbox timeout every time a
// rollout or a demonstration used it: two HumanEval-style tasks, one with
// looping tests, kept `train sft` writing demonstrations for more than 13
// minutes. `train check` reads the data the same way, so it names them too.
//
// What it is not: a check of tasks without a reference solution (there is
// nothing to run them against), or of the procedural set (its solutions
// and tests are computed together).

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"troupe/internal/sandbox"
	"troupe/rollout"
)

// checkSolutions runs every task's reference solution on its tests (in
// parallel, one sandbox pair per CPU) and returns the tasks whose solution
// passes them all, or that have none, and one line per task set aside.
func (e *Env) checkSolutions(tasks rollout.SliceSource) (kept rollout.SliceSource, aside []string) {
	verdicts := make([]string, len(tasks)) // "" passes
	work := make(chan int)
	var wg sync.WaitGroup
	for range max(1, runtime.NumCPU()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				verdicts[i] = e.solutionVerdict(tasks[i])
			}
		}()
	}
	for i := range tasks {
		work <- i
	}
	close(work)
	wg.Wait()
	for i, t := range tasks {
		if verdicts[i] == "" {
			kept = append(kept, t)
			continue
		}
		aside = append(aside, fmt.Sprintf("%s (%s)", t.ID, verdicts[i]))
	}
	return kept, aside
}

// solutionVerdict is why a task's reference solution does not pass its own
// tests ("" when it does, or when the task has none).
func (e *Env) solutionVerdict(t rollout.Task) string {
	solution := t.Meta["solution"]
	if strings.TrimSpace(solution) == "" {
		return ""
	}
	tests, err := taskTests(t)
	if err != nil {
		return err.Error()
	}
	tr := e.try(solution, t.Meta["entry_point"], tests, false)
	switch {
	case tr.runner.Outcome == sandbox.TimedOut || tr.program.Outcome == sandbox.TimedOut:
		return "its reference solution did not finish its tests within env.coding.timeout_s"
	case tr.judged && !tr.syntax:
		return "its reference solution does not compile: " + firstLine(tr.compileError)
	case !tr.complete:
		return fmt.Sprintf("its tests did not run to the end with its reference solution (%s)", tr.runner.Outcome)
	case tr.passed < tr.total:
		msg := fmt.Sprintf("its reference solution passes %d of its %d tests", tr.passed, tr.total)
		if len(tr.failures) > 0 {
			msg += "; test " + fmt.Sprint(tr.failures[0].test+1) + ": " + firstLine(tr.failures[0].error)
		}
		return msg
	}
	return ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// taskTests are a task's own tests.
func taskTests(t rollout.Task) ([]string, error) {
	var tests []string
	if err := json.Unmarshal([]byte(t.Meta["tests"]), &tests); err != nil || len(tests) == 0 {
		return nil, fmt.Errorf("it has no tests to run")
	}
	return tests, nil
}

// SetAside lists the tasks this split left out when it read its data, one
// line each (checkSolutions); the run and `train check` print them.
func (e *Env) SetAside() []string {
	if e == nil {
		return nil
	}
	return e.aside
}

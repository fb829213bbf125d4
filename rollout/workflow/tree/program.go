package tree

// program.go — agents that answer with a program (workflow.tree.programs):
// with program_output: last-line (the math workflow's tool agent) the action
// is instead the last line a program that exited cleanly printed.
//
// as in the AT-GRPO paper, the games' tool agent writes a short Python
// program (BFS or A* over the grid it was shown) instead of a move list;
// the program runs in the sandbox (internal/sandbox: its own namespaces, no
// network, a read-only system, CPU, memory and output limits), and the
// last "Actions List: …" line it prints is the action the environment
// steps. A program that fails, times out or prints no such line proposes
// nothing, which the environment scores as an unparsed action (the
// reference scores a tool agent without an action −2).
//
// What this file is not: a judge of the program. Nothing of the trainer or
// the task's answer reaches the sandbox; the program sees only the text the
// model wrote into it, and its reward is the environment's, for the action
// it printed.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"troupe/internal/sandbox"
)

// programs runs agents' programs in one sandbox.
type programs struct {
	box      *sandbox.Sandbox
	python   string // the interpreter, symbolic links resolved
	lastLine bool   // the action is the last line printed, not an "Actions List" line
}

// newPrograms builds the sandbox for the configured interpreter and checks
// it runs a Python 3 there.
func newPrograms(o Options) (*programs, error) {
	real, err := filepath.EvalSymlinks(o.Interpreter)
	if err != nil {
		return nil, fmt.Errorf("workflow.tree.interpreter: %w (install python3, or name another Python 3)", err)
	}
	dirs := []string{filepath.Dir(real)}
	if prefix := filepath.Dir(filepath.Dir(real)); prefix != "/" {
		for _, lib := range []string{"lib", "lib64"} {
			if fi, err := os.Stat(filepath.Join(prefix, lib)); err == nil && fi.IsDir() {
				dirs = append(dirs, filepath.Join(prefix, lib))
			}
		}
	}
	d := time.Duration(o.ProgramSeconds * float64(time.Second))
	box, err := sandbox.New(sandbox.Limits{Wall: d, CPU: d, Memory: 512 << 20, Scratch: 16 << 20, Processes: 8, Output: 64 << 10}, dirs...)
	if err != nil {
		return nil, fmt.Errorf("workflow.tree.programs: %w", err)
	}
	p := &programs{box: box, python: real, lastLine: o.ProgramOutput == OutputLastLine}
	res := box.Run(context.Background(), nil, real, "-I", "-c", "print(6 * 7)")
	if res.Outcome != sandbox.Passed || strings.TrimSpace(string(res.Stdout)) != "42" {
		return nil, fmt.Errorf("workflow.tree.interpreter: %s does not run a Python program in the sandbox (%s: %s %s)", o.Interpreter, res.Outcome, res.Detail, strings.TrimSpace(string(res.Stderr)))
	}
	return p, nil
}

// programRun is what one program did.
type programRun struct {
	action  string // the last "Actions List: …" value printed, "" if none
	outcome sandbox.Outcome
	report  string // what the teammates are shown: outcome, output tail, action
}

var actionsLine = regexp.MustCompile(`(?i)\**actions list\**\s*:\s*(.*)`)

// maxShown bounds the program output shown to the teammates.
const maxShown = 1500

// run runs one program (the agent's parsed value) and reads its action.
func (p *programs) run(code string) programRun {
	if strings.TrimSpace(code) == "" {
		return programRun{outcome: sandbox.Failed, report: "the tool agent wrote no program"}
	}
	res := p.box.Run(context.Background(), map[string][]byte{"main.py": []byte(code)}, p.python, "-I", "main.py")
	out := programRun{outcome: res.Outcome}
	switch {
	case p.lastLine && res.Outcome == sandbox.Passed:
		out.action = lastLine(string(res.Stdout))
	case !p.lastLine:
		if m := actionsLine.FindAllStringSubmatch(string(res.Stdout), -1); len(m) > 0 {
			out.action = strings.TrimSpace(m[len(m)-1][1])
		}
	}
	shown := strings.TrimSpace(string(res.Stdout))
	if len(shown) > maxShown {
		shown = "…" + shown[len(shown)-maxShown:]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the program %s", res.Outcome)
	if res.Outcome != sandbox.Passed {
		if errTail := lastLine(string(res.Stderr)); errTail != "" {
			fmt.Fprintf(&b, " (%s)", errTail)
		}
	}
	fmt.Fprintf(&b, "; it printed: %q", shown)
	switch {
	case out.action != "" && p.lastLine:
		fmt.Fprintf(&b, "; its answer: %s", out.action)
	case out.action != "":
		fmt.Fprintf(&b, "; its action: %s", out.action)
	case p.lastLine:
		b.WriteString("; it gave no answer")
	default:
		b.WriteString("; it printed no 'Actions List: [...]' line")
	}
	out.report = b.String()
	return out
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 200 {
		l = l[:200] + "…"
	}
	return l
}

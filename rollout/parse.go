// parse.go — output parsers: what an agent's response means, and whether it
// kept the required format (the validity check behind the format penalty).
//
// What it is: three parsers selected by name in the agent config:
//
//	boxed           a final answer in \boxed{…} after any </think>  (math Solver, single agent)
//	verdict         <verify>approve</verify> or <verify>reject</verify> (math Verifier)
//	python-program  the last fenced Python block (a tool agent's program)
//	free            anything; always valid
//
// PythonBlocks and PythonParser read fenced Python blocks for the plug-ins
// whose agents write code.
//
// What it deliberately is not: the reward. An invalid response is still
// acted on (Dr. MAS executes invalid actions and penalises the row); whether
// the answer is right is the environment's Scorer.
package rollout

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"troupe/rollout/answer"

	"troupe/internal/suggest"
)

// Parsed is a parser's reading of one response.
type Parsed struct {
	Valid   bool   // the response kept the agent's format
	Value   string // the extracted part (final answer, verdict…); "" if none
	Problem string // why it is invalid ("" when valid)
}

// Parser reads one response. Implementations must be safe for concurrent use.
type Parser interface {
	Parse(response string) Parsed
}

// ParserFunc adapts a function to Parser.
type ParserFunc func(response string) Parsed

func (f ParserFunc) Parse(response string) Parsed { return f(response) }

// Verdict values produced by the verdict parser.
const (
	VerdictApprove = "approve"
	VerdictReject  = "reject"
)

var parsers = map[string]Parser{
	"boxed":   ParserFunc(parseBoxed),
	"verdict": ParserFunc(parseVerdict),
	"free":    ParserFunc(func(r string) Parsed { return Parsed{Valid: true, Value: strings.TrimSpace(r)} }),
	// the program a tool agent writes (math-tool; the games' -tool-program presets)
	"python-program": PythonParser("a program"),
}

// pythonFence is a fenced block opened by ```python, ```py, ```python3 or
// a bare ```.
var pythonFence = regexp.MustCompile("(?s)```(?:python|py|python3)?[ \t]*\n(.*?)```")

// PythonBlocks returns the contents of a response's fenced Python blocks,
// in order.
func PythonBlocks(response string) []string {
	var out []string
	for _, m := range pythonFence.FindAllStringSubmatch(response, -1) {
		out = append(out, m[1])
	}
	return out
}

// PythonParser reads the last fenced Python block of a response; it is
// invalid when there is none or it is blank, saying that it should hold
// what ("a program", "the function").
func PythonParser(what string) Parser {
	return ParserFunc(func(response string) Parsed {
		b := PythonBlocks(response)
		if len(b) == 0 || strings.TrimSpace(b[len(b)-1]) == "" {
			return Parsed{Problem: "no ```python block holding " + what}
		}
		return Parsed{Valid: true, Value: b[len(b)-1]}
	})
}

// ParserNames lists the built-in parsers.
func ParserNames() []string {
	names := make([]string, 0, len(parsers))
	for n := range parsers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ParserByName returns a built-in parser.
func ParserByName(name string) (Parser, error) {
	p, ok := parsers[name]
	if !ok {
		return nil, fmt.Errorf("unknown parser %q%s; use one of %s", name, suggest.DidYouMean(name, ParserNames()), strings.Join(ParserNames(), ", "))
	}
	return p, nil
}

func parseBoxed(response string) Parsed {
	rest, ok := answer.AfterThink(response)
	if !ok {
		return Parsed{Problem: "a <think> block is never closed"}
	}
	if c, ok := answer.LastBoxed(rest); ok {
		return Parsed{Valid: true, Value: c}
	}
	return Parsed{Problem: `no \boxed{} answer`}
}

// parseVerdict reads the last <verify>…</verify>. Value is "approve",
// "reject", or "" when no such tag (or an unknown word) is present; what a
// missing verdict means is the workflow's option, not the parser's.
func parseVerdict(response string) Parsed {
	rest, ok := answer.AfterThink(response)
	if !ok {
		return Parsed{Problem: "a <think> block is never closed"}
	}
	content, n := answer.LastTag(rest, "verify")
	if n == 0 {
		return Parsed{Problem: "no <verify>approve|reject</verify> tag"}
	}
	v := strings.ToLower(strings.TrimSpace(content))
	if v != VerdictApprove && v != VerdictReject {
		return Parsed{Problem: fmt.Sprintf("verdict %q is neither approve nor reject", v)}
	}
	return Parsed{Valid: true, Value: v}
}

// RegisterParser adds a parser; a plug-in package calls it from init.
// Registering a name twice is a programming error and panics.
func RegisterParser(name string, p Parser) {
	if _, dup := parsers[name]; dup {
		panic(fmt.Sprintf("rollout: parser %q registered twice", name))
	}
	parsers[name] = p
}

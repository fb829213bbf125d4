// tasks.go — the coding tasks: HumanEval/MBPP-style JSONL, a procedural
// offline set, and the two roles' prompts and demonstrations.
package coding

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"troupe/rollout"
	"troupe/rollout/env/internal/jsonl"
)

// LoadJSONL reads HumanEval-style records (prompt, entry_point, test: a
// check(candidate) function) or MBPP-style ones (text, test_list: asserts;
// the entry point is the function the first assert calls, or entry_point;
// test_setup_code and test_imports, where present, open every assert: the
// tests run in a namespace of their own, not the program's). A record's
// reference solution, where it has one (HumanEval: prompt +
// canonical_solution; MBPP: code), is kept as Meta["solution"]: the golden
// program AT-GRPO's code team scores its tester's asserts against.
func LoadJSONL(path string) (rollout.SliceSource, error) {
	return jsonl.Tasks("coding", path, func(line int, b string) (rollout.Task, error) {
		if err := jsonl.ObjectLine(b, `{"prompt": "def f(x): …", "entry_point": "f", "test": "…"}`); err != nil {
			return rollout.Task{}, fmt.Errorf("coding: dataset %s:%d: %w", path, line, err)
		}
		var rec struct {
			TaskID     any      `json:"task_id"`
			Prompt     string   `json:"prompt"`
			Text       string   `json:"text"`
			EntryPoint string   `json:"entry_point"`
			Test       string   `json:"test"`
			TestList   []string `json:"test_list"`
			Setup      string   `json:"test_setup_code"`
			Imports    []string `json:"test_imports"`
			Canonical  string   `json:"canonical_solution"` // HumanEval: the body after prompt
			Code       string   `json:"code"`               // MBPP: the whole function
		}
		if err := json.Unmarshal([]byte(b), &rec); err != nil {
			return rollout.Task{}, fmt.Errorf("coding: dataset %s:%d: %v", path, line, err)
		}
		where := fmt.Sprintf("coding: dataset %s:%d", path, line)
		question := rec.Prompt
		if question == "" {
			question = rec.Text
		}
		if strings.TrimSpace(question) == "" {
			return rollout.Task{}, fmt.Errorf("%s: no prompt (HumanEval) or text (MBPP)", where)
		}
		entry := rec.EntryPoint
		var tests []string
		switch {
		case rec.Test != "":
			if entry == "" {
				return rollout.Task{}, fmt.Errorf("%s: a check(candidate) test needs entry_point", where)
			}
			if tests = checkAsserts(rec.Test, entry); tests == nil {
				tests = []string{rec.Test + "\ncheck(" + entry + ")\n"}
			}
		case len(rec.TestList) > 0:
			prelude := strings.TrimSpace(rec.Setup + "\n" + strings.Join(rec.Imports, "\n"))
			for _, t := range rec.TestList {
				if prelude != "" {
					t = prelude + "\n" + t
				}
				tests = append(tests, t)
			}
			if entry == "" {
				entry = calledIn(rec.TestList[0])
			}
			if entry == "" {
				return rollout.Task{}, fmt.Errorf("%s: no entry_point, and the first assert calls no function", where)
			}
		default:
			return rollout.Task{}, fmt.Errorf("%s: no test (HumanEval) or test_list (MBPP)", where)
		}
		enc, _ := json.Marshal(tests)
		id := fmt.Sprintf("%s:%d", path, line)
		if rec.TaskID != nil {
			id = fmt.Sprint(rec.TaskID)
		}
		meta := map[string]string{"entry_point": entry, "tests": string(enc)}
		switch {
		case strings.TrimSpace(rec.Canonical) != "" && rec.Prompt != "":
			meta["solution"] = rec.Prompt + rec.Canonical
		case strings.TrimSpace(rec.Code) != "":
			meta["solution"] = rec.Code
		}
		return rollout.Task{ID: id, Question: question, Meta: meta}, nil
	})
}

// checkAsserts splits a HumanEval check(candidate) into one test per
// single-line assert that names candidate, candidate replaced by the entry
// point, as the reference's extract_test_cases does (asserts that do not
// name candidate are dropped there and here). When the body holds anything
// but such asserts, blank lines and comments (set-up, loops, an assert over
// several lines), it returns nil and the check runs whole, as one test.
func checkAsserts(test, entry string) []string {
	lines := strings.Split(test, "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "def check(candidate)") {
			start = i + 1
			break
		}
	}
	if start < 0 {
		return nil
	}
	var out []string
	for _, l := range lines[start:] {
		s := strings.TrimSpace(l)
		switch {
		case s == "" || strings.HasPrefix(s, "#"):
		case l == strings.TrimLeft(l, " \t"):
			return out // the body ended
		case !strings.HasPrefix(s, "assert"):
			return nil
		case strings.Contains(s, "candidate"):
			out = append(out, strings.ReplaceAll(s, "candidate", entry))
		}
	}
	return out
}

var call = regexp.MustCompile(`([A-Za-z_][\w.]*)\s*\(`)

// notEntry are the names an MBPP assert calls around the function under
// test: Python's keywords and builtins.
var notEntry = map[string]bool{}

func init() {
	for _, n := range strings.Fields("assert and or not in is if else lambda abs all any bool dict enumerate filter float frozenset int isinstance len list map max min next range repr reversed round set sorted str sum tuple type zip") {
		notEntry[n] = true
	}
}

// calledIn is the first function an assert calls that is not a builtin
// (nor a method or a module's function): "similar_elements" in
// "assert set(similar_elements(a, b)) == set(c)".
func calledIn(assert string) string {
	for _, m := range call.FindAllStringSubmatch(assert, -1) {
		if !notEntry[m[1]] && !strings.Contains(m[1], ".") {
			return m[1]
		}
	}
	return ""
}

// problem is one procedural task family: a description with a parameter
// k, the entry point, a reference solution (helper + main, used for
// demonstrations) and its Go twin for computing the tests' answers.
type problem struct {
	entry, describe string
	helper, main    string
	inputs          func(r *rollout.Rand) string // a Python literal argument list
	answer          func(k int, args string) string
	ks              []int
}

// pyList renders ints as a Python list.
func pyList(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

func randInts(r *rollout.Rand) []int {
	xs := make([]int, 1+r.IntN(7))
	for i := range xs {
		xs[i] = r.IntN(21) - 10
	}
	return xs
}

func parseList(s string) []int {
	var xs []int
	_ = json.Unmarshal([]byte(s), &xs)
	return xs
}

var words = []string{"apple", "to", "river", "sky", "banana", "a", "mountain", "code", "tree", "sun", "wind", "lantern"}

func randText(r *rollout.Rand) string {
	n := 1 + r.IntN(6)
	ws := make([]string, n)
	for i := range ws {
		ws[i] = words[r.IntN(len(words))]
	}
	return strings.Join(ws, " ")
}

var problems = []problem{
	{
		entry:    "sum_scaled_evens",
		describe: "def sum_scaled_evens(xs):\n    \"\"\"Return the sum of k times each even number in the list xs, with k = %d.\"\"\"",
		helper:   "def aux(x):\n    return x %% 2 == 0\n",
		main:     "def sum_scaled_evens(xs):\n    result = sum(%d * x for x in xs if aux(x))\n    return result\n",
		inputs:   func(r *rollout.Rand) string { return pyList(randInts(r)) },
		answer: func(k int, args string) string {
			s := 0
			for _, x := range parseList(args) {
				if x%2 == 0 {
					s += k * x
				}
			}
			return fmt.Sprint(s)
		},
		ks: []int{1, 2, 3, 4, 5, 6, 7, 8},
	},
	{
		entry:    "count_long_words",
		describe: "def count_long_words(text):\n    \"\"\"Return how many space-separated words of text have more than %d letters.\"\"\"",
		helper:   "def aux(word, k):\n    return len(word) > k\n",
		main:     "def count_long_words(text):\n    result = sum(1 for w in text.split() if aux(w, %d))\n    return result\n",
		inputs:   func(r *rollout.Rand) string { return fmt.Sprintf("%q", randText(r)) },
		answer: func(k int, args string) string {
			var text string
			_ = json.Unmarshal([]byte(args), &text)
			n := 0
			for _, w := range strings.Fields(text) {
				if len(w) > k {
					n++
				}
			}
			return fmt.Sprint(n)
		},
		ks: []int{1, 2, 3, 4, 5, 6},
	},
	{
		entry:    "shift_all",
		describe: "def shift_all(xs):\n    \"\"\"Return a new list with %d added to every number of xs.\"\"\"",
		helper:   "def aux(x, k):\n    return x + k\n",
		main:     "def shift_all(xs):\n    result = [aux(x, %d) for x in xs]\n    return result\n",
		inputs:   func(r *rollout.Rand) string { return pyList(randInts(r)) },
		answer: func(k int, args string) string {
			xs := parseList(args)
			for i := range xs {
				xs[i] += k
			}
			return pyList(xs)
		},
		ks: []int{-3, -2, -1, 1, 2, 3, 4, 5, 10},
	},
	{
		entry:    "count_above",
		describe: "def count_above(xs):\n    \"\"\"Return how many numbers of xs are greater than %d.\"\"\"",
		helper:   "def aux(x, k):\n    return 1 if x > k else 0\n",
		main:     "def count_above(xs):\n    result = sum(aux(x, %d) for x in xs)\n    return result\n",
		inputs:   func(r *rollout.Rand) string { return pyList(randInts(r)) },
		answer: func(k int, args string) string {
			n := 0
			for _, x := range parseList(args) {
				if x > k {
					n++
				}
			}
			return fmt.Sprint(n)
		},
		ks: []int{-5, -2, 0, 1, 3, 5, 7},
	},
}

// Procedural returns the offline tasks of a split: every (family, k), with
// a seeded fifth of the pairs kept for test; each task has 5 asserts on
// seeded inputs whose answers are computed here.
func Procedural(seed uint64, split string) rollout.SliceSource {
	type pair struct{ p, k int }
	var pairs []pair
	for pi, p := range problems {
		for _, k := range p.ks {
			pairs = append(pairs, pair{pi, k})
		}
	}
	perm := rollout.NewRand(rollout.DeriveSeed(seed, 0xc0de)).Perm(len(pairs))
	test := map[int]bool{}
	for _, i := range perm[:len(pairs)/5] {
		test[i] = true
	}
	var tasks rollout.SliceSource
	for i, pk := range pairs {
		if test[i] != (split == "test") {
			continue
		}
		p := problems[pk.p]
		r := rollout.NewRand(rollout.DeriveSeed(seed, uint64(i)))
		var tests []string
		for j := 0; j < 5; j++ {
			args := p.inputs(r)
			tests = append(tests, fmt.Sprintf("assert %s(%s) == %s", p.entry, args, p.answer(pk.k, args)))
		}
		enc, _ := json.Marshal(tests)
		tasks = append(tasks, rollout.Task{
			ID:       fmt.Sprintf("coding-%s-%d", p.entry, pk.k),
			Question: fmt.Sprintf(p.describe, pk.k),
			Meta: map[string]string{"entry_point": p.entry, "tests": string(enc),
				"helper": strings.ReplaceAll(p.helper, "%%", "%"), "main": fmt.Sprintf(p.main, pk.k)},
		})
	}
	return tasks
}

// UserTemplate lays out a coding prompt. From the second turn of the
// joint workflow on, it carries the agent's own earlier code, its
// teammate's, and the diagnostics of each earlier attempt (every failing
// test with its error), as the reference's level_feedback prompts do.
const UserTemplate = `# Task
Complete this Python function:
{{.Task}}
{{- with index .Extra "previous"}}

# Your earlier code
{{.}}
{{- end}}
{{- with index .Extra "teammates"}}

# Your teammate's earlier code
{{.}}
{{- end}}
{{- with index .Extra "feedback"}}

# Diagnostics of the team's earlier attempts
{{.}}

Revise your function accordingly.
{{- end}}

# Your Role
{{.Role}}`

const teamSystem = "You are one of two programmers who write one Python program together. Each writes only their own function."

func init() {
	rollout.RegisterRoles(teamSystem, UserTemplate, "free", map[string]string{
		"coding-helper": "Write only a helper function named aux that does one useful part of the task and returns its result; your teammate writes the main function and may call aux. Answer with one ```python block.",
		"coding-main":   "Write only the main function with the exact name and arguments above. A helper aux(...) written by your teammate will be defined next to it: call it, use the value it returns, and add logic of your own. Answer with one ```python block.",
	})
	rollout.RegisterPreset("coding-single", rollout.Preset{
		System: "You are a programmer who writes Python functions.",
		Role:   "Write the function with the exact name and arguments above; you may define helper functions of your own next to it. Answer with one ```python block.",
		User:   UserTemplate,
		Parser: "free",
	})
	rollout.RegisterPreset("coding-single-aux", rollout.Preset{
		System: "You are a programmer who writes Python functions.",
		Role:   "Write a helper function named aux that does one useful part of the task and returns its result, then the main function with the exact name and arguments above, which calls aux and uses its value. Answer with one ```python block holding both.",
		User:   UserTemplate,
		Parser: "free",
	})
}

// Demonstrate writes one demonstration (see rollout.Demonstrator) for the
// procedural tasks: the reference helper or main function; a wrong one
// returns nothing useful. File tasks have no reference: an empty aux and a
// stub.
func (e *Env) Demonstrate(agent string, task rollout.Task, prompt string, right bool) string {
	helper, main := task.Meta["helper"], task.Meta["main"]
	if helper == "" {
		helper = "def aux(x):\n    return x\n"
		main = fmt.Sprintf("def %s(*args):\n    return None\n", task.Meta["entry_point"])
	}
	if !right {
		main = fmt.Sprintf("def %s(*args):\n    return None\n", task.Meta["entry_point"])
	}
	code := main
	switch {
	case strings.Contains(prompt, "holding both"), strings.Contains(prompt, "helper functions of your own"):
		code = strings.TrimSpace(helper) + "\n\n\n" + main
	case agent == "first" || strings.Contains(prompt, "Write only a helper function"):
		code = helper
	}
	return "```python\n" + strings.TrimSpace(code) + "\n```"
}

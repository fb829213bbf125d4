// workflow.go — Dr. MAS's search orchestra: a Verifier routes, a Search
// agent queries the retriever, an Answer agent answers.
//
// Per episode, for env step s = 0 … max_steps−1:
//
//	Verifier judges whether the information gathered so far suffices:
//	  <verify>yes</verify> → Answer writes <think>…</think><answer>…</answer>;
//	                         the episode ends, scored by exact match;
//	  <verify>no</verify>  → on the last step the episode ends with reward 0;
//	                         otherwise Search writes <think>…</think><search>q</search>,
//	                         the environment retrieves the top passages, and
//	                         the query and <information>…</information> join
//	                         the team memory; next step.
//
// The team memory (each agent's .TeamContext) is the list of past queries
// and their retrieved information, oldest first. The Search agent also sees
// the Verifier's whole output of the same step, its reasoning included
// (.Extra.review, `The output of "verifier": …`), as the reference's Search
// Agent reads the step's team context; the Verifier and the Answer agent
// see only the memory, as there. Every row of an episode shares its team
// reward (Dr. MAS).
//
// Departures and options:
//  1. missing_verdict: a Verifier output without a yes/no tag counts as
//     "yes" in the reference (default); "no" is the other choice.
//  2. Validity per agent (the format penalty): the required tag, at most one
//     <think> block before it (Search and Answer: exactly one), and no CJK
//     characters. An invalid row is penalised but still acted on: a Search
//     output without a query retrieves nothing and says so.
//  3. Retrieval errors (an unreachable server after its retries) stop the
//     step with the error rather than training on empty information.
package search

import (
	"fmt"
	"strings"
	"unicode"

	"troupe/rollout"
	"troupe/rollout/answer"
)

// Options configures the search workflow.
type Options struct {
	Verifier       string `yaml:"verifier"`        // name of the routing agent
	Search         string `yaml:"search"`          // name of the querying agent
	Answer         string `yaml:"answer"`          // name of the answering agent
	MaxSteps       int    `yaml:"max_steps"`       // env steps (Verifier turns) at most
	MissingVerdict string `yaml:"missing_verdict"` // "yes" (reference) or "no"
}

// Verdicts of the route parser.
const (
	RouteYes = "yes"
	RouteNo  = "no"
)

// DefaultOptions returns the reference settings.
func DefaultOptions() Options {
	return Options{Verifier: "verifier", Search: "search", Answer: "answer", MaxSteps: 4, MissingVerdict: RouteYes}
}

// Validate checks ranges; errors name the key and the fix.
func (o Options) Validate() error {
	names := map[string]string{"verifier": o.Verifier, "search": o.Search, "answer": o.Answer}
	seen := map[string]string{}
	for _, key := range []string{"verifier", "search", "answer"} {
		n := names[key]
		if n == "" {
			return fmt.Errorf("workflow.search.%s: must name an agent", key)
		}
		if other, dup := seen[n]; dup {
			return fmt.Errorf("workflow.search.%s: agent %q already plays %s; the three roles need three agents (they may share a model)", key, n, other)
		}
		seen[n] = key
	}
	switch {
	case o.MaxSteps < 1:
		return fmt.Errorf("workflow.search.max_steps: must be >= 1, got %d", o.MaxSteps)
	case o.MissingVerdict != RouteYes && o.MissingVerdict != RouteNo:
		return fmt.Errorf("workflow.search.missing_verdict: must be %q or %q, got %q", RouteYes, RouteNo, o.MissingVerdict)
	}
	return nil
}

// Workflow is the search orchestra.
type Workflow struct {
	opts                     Options
	verifier, search, answer *rollout.Agent
	env                      Searcher
}

type state struct{ step int }

// ReviewKey is the .Extra field that carries the Verifier's output of the
// step into the Search agent's prompt.
const ReviewKey = "review"

// SearchEngine is the name the retrieved information carries in the team
// memory.
const SearchEngine = "search engine"

// NewWorkflow builds the orchestra; agents must include the three roles and
// env must be able to search.
func NewWorkflow(opts Options, agents []*rollout.Agent, env rollout.Scorer) (*Workflow, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	s, ok := env.(Searcher)
	if !ok {
		return nil, fmt.Errorf("workflow search: the environment (%T) cannot search; use env.name: search", env)
	}
	w := &Workflow{opts: opts, env: s}
	for _, r := range []struct {
		key, name string
		dst       **rollout.Agent
	}{{"verifier", opts.Verifier, &w.verifier}, {"search", opts.Search, &w.search}, {"answer", opts.Answer, &w.answer}} {
		var names []string
		for _, a := range agents {
			if a.Name == r.name {
				*r.dst = a
			}
			names = append(names, a.Name)
		}
		if *r.dst == nil {
			return nil, fmt.Errorf("workflow.search.%s: no agent named %q (agents: %s)", r.key, r.name, strings.Join(names, ", "))
		}
	}
	return w, nil
}

func (w *Workflow) Name() string { return "search" }
func (w *Workflow) Agents() []*rollout.Agent {
	return []*rollout.Agent{w.verifier, w.search, w.answer}
}

func (w *Workflow) call(ep *rollout.Episode, a *rollout.Agent, step int) *rollout.Call {
	c := ep.Linear(a, rollout.NewPromptData(ep.Task.Question, ep.Context, 0))
	c.Data.Loop, c.Data.MaxLoops = step, w.opts.MaxSteps
	return c
}

func (w *Workflow) Begin(ep *rollout.Episode) ([]*rollout.Call, error) {
	ep.State = &state{}
	return []*rollout.Call{w.call(ep, w.verifier, 0)}, nil
}

func (w *Workflow) Advance(ep *rollout.Episode, done []*rollout.Call) ([]*rollout.Call, error) {
	st, ok := ep.State.(*state)
	if !ok || len(done) != 1 {
		return nil, fmt.Errorf("search: episode %d: expected one completed call and the workflow's state, got %d calls", ep.Traj, len(done))
	}
	c := done[0]
	switch c.Agent {
	case w.verifier:
		if w.route(c) == RouteYes {
			return []*rollout.Call{w.call(ep, w.answer, st.step)}, nil
		}
		if st.step == w.opts.MaxSteps-1 {
			ep.Finish(rollout.Score{Metrics: map[string]float64{"f1": 0}})
			return nil, nil
		}
		sc := w.call(ep, w.search, st.step)
		review := rollout.TeamEntry{Agent: w.verifier.Name, Text: strings.TrimSpace(c.Response)}
		sc.Data.Extra = map[string]string{ReviewKey: review.String()}
		return []*rollout.Call{sc}, nil
	case w.search:
		ep.Remember(c)
		info, err := w.env.Search(c.Parsed.Value)
		if err != nil {
			return nil, fmt.Errorf("search: episode %d, step %d: %w", ep.Traj, st.step, err)
		}
		ep.Context = append(ep.Context, rollout.TeamEntry{Agent: SearchEngine, Text: info})
		st.step++
		return []*rollout.Call{w.call(ep, w.verifier, st.step)}, nil
	case w.answer:
		ep.Finish(w.env.Score(ep.Task, c.Response))
		return nil, nil
	}
	return nil, fmt.Errorf("search: episode %d: call from unexpected agent %q", ep.Traj, c.Agent.Name)
}

// route applies missing_verdict to a Verifier output.
func (w *Workflow) route(c *rollout.Call) string {
	if c.Parsed.Value == RouteYes || c.Parsed.Value == RouteNo {
		return c.Parsed.Value
	}
	return w.opts.MissingVerdict
}

// thinkThen checks the think rule before the action tag at index at:
// zero or one <think>…</think> (exactly one when required), closed before
// the action.
func thinkThen(text string, at int, required bool) string {
	opens, closes := strings.Count(text, "<think>"), strings.Count(text, "</think>")
	switch {
	case opens == 0 && closes == 0 && !required:
		return ""
	case opens != 1 || closes != 1:
		return fmt.Sprintf("want exactly one <think>…</think> block, found %d <think> and %d </think>", opens, closes)
	}
	o, cl := strings.Index(text, "<think>"), strings.Index(text, "</think>")
	if cl < o || at < cl {
		return "the <think> block must close before the action tag"
	}
	return ""
}

func hasCJK(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			return true
		}
	}
	return false
}

// tagParser reads the last <tag>…</tag> under the search format rules.
func tagParser(tag string, thinkRequired bool, check func(v string) (string, string)) rollout.Parser {
	return rollout.ParserFunc(func(response string) rollout.Parsed {
		content, n := answer.LastTag(response, tag)
		if n == 0 {
			return rollout.Parsed{Problem: fmt.Sprintf("no <%s>…</%s> tag", tag, tag)}
		}
		v, problem := check(strings.TrimSpace(content))
		p := rollout.Parsed{Value: v, Problem: problem}
		if p.Problem == "" {
			p.Problem = thinkThen(response, strings.LastIndex(response, "<"+tag+">"), thinkRequired)
		}
		if p.Problem == "" && hasCJK(response) {
			p.Problem = "the output contains CJK characters"
		}
		p.Valid = p.Problem == ""
		return p
	})
}

var (
	routeParser = tagParser("verify", false, func(v string) (string, string) {
		v = strings.ToLower(v)
		if v != RouteYes && v != RouteNo {
			return "", fmt.Sprintf("verdict %q is neither yes nor no", v)
		}
		return v, ""
	})
	queryParser = tagParser("search", true, func(v string) (string, string) {
		if v == "" {
			return "", "the search query is empty"
		}
		return v, ""
	})
	answerParser = tagParser("answer", true, func(v string) (string, string) {
		if v == "" {
			return "", "the answer is empty"
		}
		return v, ""
	})
)

// UserTemplate lays out a search agent's prompt: the question, the memory,
// the role.
const UserTemplate = `# Question
{{.Task}}
{{- if .TeamContext}}

# Searches So Far
{{.TeamContext}}
{{- end}}
{{- with index .Extra "review"}}

# The Verifier's Review
{{.}}
{{- end}}

# Your Role
{{.Role}}`

const teamSystem = "You are one member of a team that answers questions by searching a collection of documents. Each member has its own role; follow yours exactly."

func init() {
	rollout.RegisterParser("search-route", routeParser)
	rollout.RegisterParser("search-query", queryParser)
	rollout.RegisterParser("search-answer", answerParser)
	rollout.RegisterPreset("search-verifier", rollout.Preset{
		System: teamSystem,
		Role: `You are the Verifier. Decide whether the searches so far give enough information to answer the question.
Think briefly inside <think> and </think>, then end with <verify>yes</verify> if the information is enough, or <verify>no</verify> if more searching is needed.`,
		User:   UserTemplate,
		Parser: "search-route",
	})
	rollout.RegisterPreset("search-search", rollout.Preset{
		System: teamSystem,
		Role: `You are the Searcher. Think inside <think> and </think> about what is still missing, given the searches so far and the Verifier's review, then write one short search query inside <search> and </search>.
The matching documents will be shown to your team.`,
		User:   UserTemplate,
		Parser: "search-query",
	})
	rollout.RegisterPreset("search-answer", rollout.Preset{
		System: teamSystem,
		Role:   `You are the Answerer. Think inside <think> and </think> about what the documents say, then give the final answer, a few words only, inside <answer> and </answer>.`,
		User:   UserTemplate,
		Parser: "search-answer",
	})
	rollout.RegisterWorkflow("search", rollout.WorkflowSpec{
		Build: func(o any, agents []*rollout.Agent, env rollout.Scorer) (rollout.Workflow, error) {
			opts, err := rollout.OptionsOf("search", o, DefaultOptions)
			if err != nil {
				return nil, err
			}
			return NewWorkflow(opts, agents, env)
		},
		Agents: func() []rollout.AgentConfig {
			return []rollout.AgentConfig{
				{Name: "verifier", Model: "policy", Preset: "search-verifier", FormatPenalty: 0.01},
				{Name: "search", Model: "policy", Preset: "search-search", FormatPenalty: 0.01},
				{Name: "answer", Model: "policy", Preset: "search-answer", FormatPenalty: 0.01},
			}
		},
		Estimators: rollout.LinearEstimators,
		Oracle:     Oracle,
		Key:        "search",
		Defaults:   func() any { return DefaultOptions() },
		Roles: func(o any) map[string]string {
			s := o.(Options)
			return map[string]string{"workflow.search.verifier": s.Verifier, "workflow.search.search": s.Search, "workflow.search.answer": s.Answer}
		},
	})
}

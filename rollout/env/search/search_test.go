package search_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"troupe/retrieval"
	"troupe/rollout"
	"troupe/rollout/env/search"
	"troupe/rollout/scripted"
	"troupe/tokenizer"
)

func TestNormalizeExactMatchAndF1(t *testing.T) {
	for in, want := range map[string]string{
		"The  Eiffel Tower!":    "eiffel tower",
		"An apple, a day":       "apple day",
		"  Théâtre   d'Orsay. ": "théâtre dorsay",
		"the":                   "",
		"Anna":                  "anna", // "an" only as a word
	} {
		if got := search.Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
	if !search.ExactMatch("the Brelmoor.", []string{"Qel", "brelmoor"}) || search.ExactMatch("Brelmoor city", []string{"Brelmoor"}) {
		t.Error("ExactMatch")
	}
	// pred "new york city" vs gold "york city": common 2, p = 2/3, r = 1 → F1 = 0.8
	for _, c := range []struct {
		pred  string
		golds []string
		want  float64
	}{
		{"new york city", []string{"York City"}, 0.8},
		{"new york city", []string{"boston", "the York City"}, 0.8},
		{"paris", []string{"london"}, 0},
		{"x y y", []string{"y y z"}, 2.0 / 3},
		{"a b b", []string{"b b c"}, 0.8}, // "a" is an article: "b b" vs "b b c"
		{"", []string{"x"}, 0},
	} {
		if got := search.F1(c.pred, c.golds); fmt.Sprintf("%.9f", got) != fmt.Sprintf("%.9f", c.want) {
			t.Errorf("F1(%q, %q) = %g, want %g", c.pred, c.golds, got, c.want)
		}
	}
}

func TestSyntheticWorld(t *testing.T) {
	cfg := search.DefaultSyntheticConfig()
	cfg.MaxHops = 3
	a, err := search.NewWorld(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := search.NewWorld(cfg)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two worlds of one seed differ")
	}
	cfg.Seed++
	if c, _ := search.NewWorld(cfg); reflect.DeepEqual(a.Corpus, c.Corpus) {
		t.Fatal("another seed gives the same corpus")
	}
	people := func(ts rollout.SliceSource) map[string]bool {
		m := map[string]bool{}
		for _, tk := range ts {
			m[tk.Meta["gold_doc"]] = true
		}
		return m
	}
	train, test := people(a.Train), people(a.Test)
	for p := range test {
		if train[p] {
			t.Fatalf("%s is asked about in both splits", p)
		}
	}
	if len(test) != 48 || len(train) != 192 || len(a.Train)+len(a.Test) != 240*6 {
		t.Fatalf("split: %d train people, %d test people, %d questions", len(train), len(test), len(a.Train)+len(a.Test))
	}

	// every answer follows from the corpus: walk the chain the question names
	docs := map[string]string{}
	byTitle := map[string]string{}
	for _, d := range a.Corpus {
		docs[d.ID] = d.Contents
		byTitle[d.Title()] = d.Text()
	}
	after := func(text, marker string) string {
		_, rest, ok := strings.Cut(text, marker)
		if !ok {
			t.Fatalf("%q has no %q", text, marker)
		}
		return strings.TrimSuffix(strings.Fields(strings.SplitN(rest, ".", 2)[0] + " ")[0], ".")
	}
	companyOf := func(text string) string {
		_, rest, _ := strings.Cut(text, "works for ")
		return strings.TrimSuffix(rest, ".")
	}
	for _, tk := range append(append(rollout.SliceSource{}, a.Train...), a.Test...) {
		person := docs[tk.Meta["gold_doc"]]
		var got string
		switch q := tk.Question; {
		case strings.HasPrefix(q, "In which city was"):
			got = after(person, "born in ")
		case strings.HasPrefix(q, "What is the profession"):
			got = after(person, "is a ")
		case strings.HasPrefix(q, "Which company"):
			got = companyOf(person)
		case strings.HasPrefix(q, "In which country was"):
			got = after(byTitle[after(person, "born in ")], "city in ")
		case strings.HasPrefix(q, "In which city is the company"):
			got = after(byTitle[companyOf(person)], "headquartered in ")
		case strings.HasPrefix(q, "In which country is the company"):
			got = after(byTitle[after(byTitle[companyOf(person)], "headquartered in ")], "city in ")
		default:
			t.Fatalf("unknown question %q", q)
		}
		if got != tk.Answer {
			t.Fatalf("%s: %q: the corpus says %q, the task %q", tk.ID, tk.Question, got, tk.Answer)
		}
	}
}

// The gold document is in BM25's top 3 for at least 90 % of the one-hop
// questions.
func TestBM25FindsOneHopGoldDocuments(t *testing.T) {
	w, err := search.NewWorld(search.DefaultSyntheticConfig())
	if err != nil {
		t.Fatal(err)
	}
	ix, err := retrieval.Build(w.Corpus)
	if err != nil {
		t.Fatal(err)
	}
	n, found := 0, 0
	for _, tk := range append(append(rollout.SliceSource{}, w.Train...), w.Test...) {
		if tk.Meta["hops"] != "1" {
			continue
		}
		n++
		for _, h := range ix.Search(tk.Question, 3) {
			if h.Document.ID == tk.Meta["gold_doc"] {
				found++
				break
			}
		}
	}
	if rate := float64(found) / float64(n); rate < 0.9 {
		t.Fatalf("gold document in the top 3 for %d of %d one-hop questions (%.1f %%), want >= 90 %%", found, n, 100*rate)
	} else {
		t.Logf("gold document in the top 3 for %d of %d one-hop questions (%.1f %%)", found, n, 100*rate)
	}
}

// stubEnv is a search environment over a fixed corpus.
func stubEnv(t *testing.T, tasks ...rollout.Task) *search.Env {
	t.Helper()
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus.jsonl")
	err := retrieval.WriteCorpus(corpus, []retrieval.Document{
		{ID: "1", Contents: "Zorva Kelin\nZorva Kelin is a painter. Zorva Kelin was born in Brelmoor."},
		{ID: "2", Contents: "Brelmoor\nBrelmoor is a city in Qelandia."},
		{ID: "3", Contents: "Tandrix Works\nTandrix Works is a company."},
	})
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "train.jsonl")
	var lines []string
	for _, tk := range tasks {
		lines = append(lines, fmt.Sprintf(`{"question": %q, "golden_answers": [%q, "Brel"], "data_source": "test"}`, tk.Question, tk.Answer))
	}
	os.WriteFile(data, []byte(strings.Join(lines, "\n")), 0o644)
	cfg := search.DefaultConfig()
	cfg.Source, cfg.Train = "file", data
	cfg.Retriever.Corpus = corpus
	cfg.Retriever.TopK = 2
	train, _, err := search.Envs(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return train
}

func newTeam(t *testing.T, bind rollout.Binding) []*rollout.Agent {
	t.Helper()
	cfgs, err := rollout.DefaultAgentConfigs("search")
	if err != nil {
		t.Fatal(err)
	}
	var agents []*rollout.Agent
	for i, c := range cfgs {
		a, err := rollout.NewAgent("agents["+strconv.Itoa(i)+"]", c, rollout.AgentDefaults{Sampling: rollout.DefaultSampling, MaxNewTokens: 256}, bind)
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, a)
	}
	return agents
}

func play(t *testing.T, opts search.Options, env *search.Env, respond scripted.Responder) (*rollout.Rollout, *scripted.Generator) {
	t.Helper()
	agents := newTeam(t, scripted.Binding())
	wf, err := rollout.NewWorkflow("search", opts, agents, env)
	if err != nil {
		t.Fatal(err)
	}
	gen := scripted.New(respond)
	s := rollout.Sampler{Generators: map[string]rollout.Generator{"policy": gen}}
	it, _ := rollout.NewTaskIterator(env, 1, false)
	out, err := s.Run(wf, it.Next(env.Len()), 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	return out, gen
}

func roles(verify, query, ans scripted.Responder) scripted.Responder {
	return scripted.Match(
		scripted.Rule{Contains: "You are the Verifier", Reply: verify},
		scripted.Rule{Contains: "You are the Searcher", Reply: query},
		scripted.Rule{Contains: "You are the Answerer", Reply: ans},
	)
}

func agentsOf(rows []rollout.Sample) string {
	var s []string
	for _, r := range rows {
		s = append(s, r.Agent)
	}
	return strings.Join(s, ",")
}

var question = rollout.Task{Question: "In which city was Zorva Kelin born?", Answer: "Brelmoor"}

func TestRouteAnswerAtOnce(t *testing.T) {
	env := stubEnv(t, question)
	out, _ := play(t, search.DefaultOptions(), env, roles(
		scripted.Fixed("<think>I know this.</think><verify>yes</verify>"),
		scripted.Fixed("unused"),
		scripted.Fixed("<think>From memory.</think><answer>The Brelmoor</answer>"),
	))
	if got := agentsOf(out.Samples); got != "verifier,answer" {
		t.Fatalf("rows %s", got)
	}
	ep := out.Episodes[0]
	if !ep.Success || ep.Reward != 1 || ep.Extracted != "The Brelmoor" || ep.Metrics["f1"] != 1 {
		t.Fatalf("episode: success %v reward %g extracted %q f1 %g", ep.Success, ep.Reward, ep.Extracted, ep.Metrics["f1"])
	}
	for i, r := range out.Samples {
		if r.Turn != i || r.Node != i || r.Candidate != 0 || r.Traj != 0 || r.Prompt != 0 || !r.Valid || r.Reward != 1 || r.TeamReward != 1 {
			t.Errorf("row %d: turn %d node %d cand %d traj %d valid %v reward %g", i, r.Turn, r.Node, r.Candidate, r.Traj, r.Valid, r.Reward)
		}
	}
}

func TestRouteSearchThenAnswer(t *testing.T) {
	env := stubEnv(t, question)
	verify := func(prompt string, _ uint64) string {
		if strings.Contains(prompt, "<information>") {
			return "<think>The document says it.</think><verify>yes</verify>"
		}
		return "<think>Nothing yet.</think><verify>no</verify>"
	}
	out, gen := play(t, search.DefaultOptions(), env, roles(verify,
		scripted.Fixed("<think>Look up the person.</think><search>Zorva Kelin Brelmoor</search>"),
		scripted.Fixed("<think>Doc 1.</think><answer>brelmoor</answer>"),
	))
	if got := agentsOf(out.Samples); got != "verifier,search,verifier,answer" {
		t.Fatalf("rows %s", got)
	}
	// the memory the second Verifier and the Answerer saw: the query and
	// the top 2 passages, best first
	wantMemory := `The output of "search": <search>Zorva Kelin Brelmoor</search>

The output of "search engine": <information>Doc 1(Title: Zorva Kelin) Zorva Kelin is a painter. Zorva Kelin was born in Brelmoor.
Doc 2(Title: Brelmoor) Brelmoor is a city in Qelandia.</information>`
	prompts := gen.Calls
	if len(prompts) != 4 {
		t.Fatalf("%d generate calls", len(prompts))
	}
	for _, i := range []int{2, 3} {
		if !strings.Contains(prompts[i].Prompts[0], "# Searches So Far\n"+wantMemory+"\n\n# Your Role") {
			t.Errorf("call %d prompt lacks the memory:\n%s", i, prompts[i].Prompts[0])
		}
	}
	if strings.Contains(prompts[0].Prompts[0], "Searches So Far") {
		t.Error("the first Verifier saw a memory")
	}
	// the Searcher reads the Verifier's whole output of its step, reasoning
	// included (the reference's team context); nobody else does
	review := "# The Verifier's Review\n" + `The output of "verifier": <think>Nothing yet.</think><verify>no</verify>` + "\n\n# Your Role"
	if !strings.Contains(prompts[1].Prompts[0], review) {
		t.Errorf("the Searcher's prompt lacks the Verifier's review:\n%s", prompts[1].Prompts[0])
	}
	for _, i := range []int{0, 2, 3} {
		if strings.Contains(prompts[i].Prompts[0], "Verifier's Review") {
			t.Errorf("call %d saw the Verifier's review:\n%s", i, prompts[i].Prompts[0])
		}
	}
	if ep := out.Episodes[0]; !ep.Success || ep.Reward != 1 {
		t.Fatalf("reward %g", ep.Reward)
	}
	for _, r := range out.Samples {
		if r.TeamReward != 1 || !r.Valid {
			t.Errorf("%s: team %g valid %v (%s)", r.Agent, r.TeamReward, r.Valid, r.Problem)
		}
	}
}

func TestRouteMaxStepsEndsWithZero(t *testing.T) {
	env := stubEnv(t, question)
	opts := search.DefaultOptions()
	opts.MaxSteps = 2
	out, _ := play(t, opts, env, roles(
		scripted.Fixed("<think>Not enough.</think><verify>no</verify>"),
		scripted.Fixed("<think>Try.</think><search>Tandrix</search>"),
		scripted.Fixed("unused"),
	))
	if got := agentsOf(out.Samples); got != "verifier,search,verifier" {
		t.Fatalf("rows %s", got)
	}
	ep := out.Episodes[0]
	if !ep.Done || ep.Success || ep.Reward != 0 || ep.Metrics["f1"] != 0 {
		t.Fatalf("episode done %v success %v reward %g", ep.Done, ep.Success, ep.Reward)
	}
}

// Malformed outputs are penalised and still acted on: a verdict with no tag
// counts as yes (the reference quirk) or no (the option); a search with no
// query retrieves nothing; an answer without a think block is still scored.
func TestRouteMalformedOutputs(t *testing.T) {
	env := stubEnv(t, question)
	out, _ := play(t, search.DefaultOptions(), env, roles(
		scripted.Fixed("Probably fine."),
		scripted.Fixed("unused"),
		scripted.Fixed("<answer>Brelmoor</answer>"),
	))
	if got := agentsOf(out.Samples); got != "verifier,answer" {
		t.Fatalf("missing verdict = yes: rows %s", got)
	}
	for _, r := range out.Samples {
		if r.Valid || r.Penalty != 0.01 || r.Reward != 0.99 || r.Problem == "" {
			t.Errorf("%s: valid %v penalty %g reward %g problem %q", r.Agent, r.Valid, r.Penalty, r.Reward, r.Problem)
		}
	}

	opts := search.DefaultOptions()
	opts.MissingVerdict, opts.MaxSteps = search.RouteNo, 2
	out, gen := play(t, opts, env, roles(
		scripted.Fixed("<think>hmm</think><verify>maybe</verify>"),
		scripted.Fixed("<think>no idea</think> I would search for the person."),
		scripted.Fixed("unused"),
	))
	if got := agentsOf(out.Samples); got != "verifier,search,verifier" {
		t.Fatalf("missing verdict = no: rows %s", got)
	}
	if p := gen.Calls[2].Prompts[0]; !strings.Contains(p, "<information>No query was given.") {
		t.Errorf("the empty search's information:\n%s", p)
	}
	probs := map[string]string{}
	for _, r := range out.Samples {
		probs[r.Agent] = r.Problem
	}
	if !strings.Contains(probs["verifier"], "neither yes nor no") || !strings.Contains(probs["search"], "no <search>") {
		t.Errorf("problems: %q", probs)
	}

	for resp, wantProblem := range map[string]string{
		"<think>a</think><think>b</think><search>q</search>": "exactly one",
		"<search>q</search><think>late</think>":              "close before",
		"<think>好</think><search>q</search>":                 "CJK",
		"<think>ok</think><search>  </search>":               "empty",
	} {
		p, _ := rollout.ParserByName("search-query")
		if got := p.Parse(resp); got.Valid || !strings.Contains(got.Problem, wantProblem) {
			t.Errorf("%q: %+v, want a problem with %q", resp, got, wantProblem)
		}
	}
}

func TestWorkflowRefusesWrongEnvironmentAndTeam(t *testing.T) {
	agents := newTeam(t, scripted.Binding())
	if _, err := rollout.NewWorkflow("search", search.DefaultOptions(), agents, scoreOnly{}); err == nil || !strings.Contains(err.Error(), "cannot search") {
		t.Errorf("non-search env: %v", err)
	}
	o := search.DefaultOptions()
	o.Answer = "oracle"
	if _, err := rollout.NewWorkflow("search", o, agents, stubEnv(t, question)); err == nil || !strings.Contains(err.Error(), `no agent named "oracle"`) {
		t.Errorf("missing role: %v", err)
	}
	o = search.DefaultOptions()
	o.Answer = o.Search
	if err := o.Validate(); err == nil {
		t.Error("one agent in two roles was accepted")
	}
	est, _ := rollout.WorkflowEstimators("search")
	if !reflect.DeepEqual(est, []string{"grpo", "grpo-step", "drmas", "rloo"}) {
		t.Errorf("estimators %v", est)
	}
}

type scoreOnly struct{}

func (scoreOnly) Score(rollout.Task, string) rollout.Score { return rollout.Score{} }

// A search episode's rows decode back to their rendered messages with the
// real Qwen3 tokenizer and chat template.
func TestRowsDecodeWithRealTokenizer(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", ".cache", "tokenizer", "qwen3")
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err != nil {
		msg := "missing fixture " + dir + ": run scripts/tokenizer/fetch-fixtures.sh (make test does it during setup)"
		if os.Getenv("TROUPE_OFFLINE") == "1" {
			t.Skip(msg)
		}
		t.Fatal(msg)
	}
	tok, err := tokenizer.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	im, ok := tok.TokenID("<|im_end|>")
	if !ok {
		t.Fatal("no <|im_end|>")
	}
	bind := rollout.Binding{Codec: tok, Stop: []int{im}, Chat: func(msgs []rollout.Message) (string, error) {
		tm := make([]tokenizer.Message, len(msgs))
		for i, m := range msgs {
			tm[i] = tokenizer.Message{Role: m.Role, Content: m.Content}
		}
		return tok.ApplyChatTemplate(tm, tokenizer.ChatOptions{AddGenerationPrompt: true, DisableThinking: true})
	}}
	env := stubEnv(t, question)
	wf, err := rollout.NewWorkflow("search", search.DefaultOptions(), newTeam(t, bind), env)
	if err != nil {
		t.Fatal(err)
	}
	verify := func(prompt string, _ uint64) string {
		if strings.Contains(prompt, "<information>") {
			return "<think>Found.</think><verify>yes</verify>"
		}
		return "<think>Nothing yet.</think><verify>no</verify>"
	}
	gen := scripted.New(roles(verify, scripted.Fixed("<think>Ask.</think><search>Zorva Kelin</search>"), scripted.Fixed("<think>Doc 1.</think><answer>Brelmoor</answer>")))
	gen.Codec = tok
	s := rollout.Sampler{Generators: map[string]rollout.Generator{"policy": gen}}
	out, err := s.Run(wf, []rollout.Task{env.Task(0)}, 2, 9)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Samples) != 8 {
		t.Fatalf("%d rows, want 2 episodes × 4", len(out.Samples))
	}
	for _, r := range out.Samples {
		if got := tok.Decode(r.PromptTokens); got != r.PromptText {
			t.Errorf("%s: prompt tokens decode to\n%q\nwant\n%q", r.Agent, got, r.PromptText)
		}
		if !strings.HasPrefix(r.PromptText, "<|im_start|>system\n") || !strings.HasSuffix(r.PromptText, "<|im_start|>assistant\n<think>\n\n</think>\n\n") {
			t.Errorf("%s: not a Qwen3 chat: %q", r.Agent, r.PromptText)
		}
		resp := r.ResponseTokens[:len(r.ResponseTokens)-1]
		if r.ResponseTokens[len(r.ResponseTokens)-1] != im || tok.Decode(resp) != r.ResponseText {
			t.Errorf("%s: response tokens decode to %q, want %q + <|im_end|>", r.Agent, tok.Decode(r.ResponseTokens), r.ResponseText)
		}
		if !r.Valid || r.Reward != 1 {
			t.Errorf("%s: valid %v reward %g (%s)", r.Agent, r.Valid, r.Reward, r.Problem)
		}
	}
}

// The demonstration oracle, played through the real workflow over the
// synthetic world and BM25, solves the questions of every hop count: the
// lookup chains, the retrieval and the Verifier's rule agree.
func TestOracleSolvesTheSyntheticWorld(t *testing.T) {
	cfg := search.DefaultConfig()
	cfg.Synthetic.MaxHops = 3
	train, _, err := search.Envs(cfg)
	if err != nil {
		t.Fatal(err)
	}
	it, _ := rollout.NewTaskIterator(train, 3, true)
	tasks := it.Next(60)
	opts := search.DefaultOptions()
	agents := newTeam(t, scripted.Binding())
	wf, err := rollout.NewWorkflow("search", opts, agents, train)
	if err != nil {
		t.Fatal(err)
	}
	respond := func(role string) scripted.Responder {
		return func(prompt string, _ uint64) string {
			for _, tk := range tasks {
				if strings.Contains(prompt, tk.Question) {
					return search.Oracle(opts, role, tk, prompt, true)
				}
			}
			return "no task"
		}
	}
	gen := scripted.New(roles(respond("verifier"), respond("search"), respond("answer")))
	s := rollout.Sampler{Generators: map[string]rollout.Generator{"policy": gen}}
	out, err := s.Run(wf, tasks, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	byHops := map[string][2]int{}
	for _, ep := range out.Episodes {
		h := byHops[ep.Task.Meta["hops"]]
		h[1]++
		if ep.Success {
			h[0]++
		}
		byHops[ep.Task.Meta["hops"]] = h
		if !ep.Success && testing.Verbose() {
			for _, c := range ep.Calls {
				t.Logf("%s: %s", c.Agent.Name, c.Response)
			}
			t.Logf("gold %q", ep.Task.Answer)
		}
		for _, c := range ep.Calls {
			if !c.Parsed.Valid {
				t.Errorf("%s wrote an invalid demonstration: %q (%s)", c.Agent.Name, c.Response, c.Parsed.Problem)
			}
		}
	}
	for hops, h := range byHops {
		t.Logf("%s hops: %d of %d solved", hops, h[0], h[1])
		if float64(h[0]) < 0.95*float64(h[1]) {
			t.Errorf("%s hops: the oracle solved %d of %d", hops, h[0], h[1])
		}
	}
	if len(byHops) != 3 {
		t.Errorf("hop counts seen: %v", byHops)
	}
}

// Search-R1's NQ/HotpotQA layouts load from Parquet and JSONL alike, over a
// corpus in its JSONL layout, and the exact-match scorer reads every gold.
func TestSearchR1Files(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	data := filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "search")
	var loaded []rollout.SliceSource
	for _, name := range []string{"qa_tiny.parquet", "qa_tiny.jsonl"} {
		cfg := search.DefaultConfig()
		cfg.Source, cfg.Train, cfg.Test = "file", filepath.Join(data, name), ""
		cfg.Retriever.Corpus = filepath.Join(data, "corpus_tiny.jsonl")
		train, test, err := search.Envs(cfg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if test != nil {
			t.Errorf("%s: a test split without a test file", name)
		}
		var tasks rollout.SliceSource
		for i := 0; i < train.Len(); i++ {
			tasks = append(tasks, train.Task(i))
		}
		loaded = append(loaded, tasks)
		if len(tasks) != 4 || tasks[0].Answer != "Esk" || !reflect.DeepEqual(tasks[0].Answers, []string{"the River Esk"}) ||
			tasks[2].Meta["data_source"] != "hotpotqa" || tasks[3].Question != "the architect of the seven arches bridge was born in which town" {
			t.Fatalf("%s: tasks %+v", name, tasks)
		}
		if s := train.Score(tasks[0], "<think>the river</think><answer>River Esk</answer>"); !s.Success || s.Metrics["f1"] != 1 {
			t.Errorf("%s: a second gold is not accepted: %+v", name, s)
		}
		info, err := train.Search("bridge seven arches designed")
		if err != nil || !strings.HasPrefix(info, `<information>Doc 1(Title: "Bridge of Seven Arches") The Bridge of Seven Arches crosses`) {
			t.Errorf("%s: search: %q %v", name, info, err)
		}
	}
	for i := range loaded[0] {
		a, b := loaded[0][i], loaded[1][i]
		a.ID, b.ID = "", ""
		if !reflect.DeepEqual(a, b) {
			t.Errorf("task %d: parquet %+v, jsonl %+v", i, a, b)
		}
	}
}

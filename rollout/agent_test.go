package rollout_test

import (
	"strings"
	"testing"

	"troupe/rollout"
	"troupe/rollout/scripted"
	"troupe/rollout/workflow/mathrefine"
	"troupe/rollout/workflow/single"
)

func TestAgentConfigErrors(t *testing.T) {
	neg := -0.5
	for _, tc := range []struct {
		cfg  rollout.AgentConfig
		want string
	}{
		{rollout.AgentConfig{Model: "m", Preset: "math-single"}, "agents[1].name: must be set"},
		{rollout.AgentConfig{Name: "a", Preset: "math-single"}, `agents[1].model: must name the model agent "a" runs on`},
		{rollout.AgentConfig{Name: "a", Model: "m", Preset: "poet"}, `agents[1].preset: unknown preset "poet"; use one of math-single, math-solver, math-verifier`},
		{rollout.AgentConfig{Name: "a", Model: "m"}, "has no role text; set agents[1].role"},
		{rollout.AgentConfig{Name: "a", Model: "m", Preset: "math-single", Parser: "xml"}, `agents[1].parser: unknown parser "xml"; use one of boxed, free, python-program, verdict`},
		{rollout.AgentConfig{Name: "a", Model: "m", Role: "Solve {{.Tsak}}"}, "agents[1].role: template does not render"},
		{rollout.AgentConfig{Name: "a", Model: "m", Role: "Solve {{.Task"}, "agents[1].role: bad template"},
		{rollout.AgentConfig{Name: "a", Model: "m", Preset: "math-single", FormatPenalty: -1}, "agents[1].format_penalty: must be a finite number >= 0"},
		{rollout.AgentConfig{Name: "a", Model: "m", Preset: "math-single", Sampling: rollout.SamplingOverride{TopP: &neg}}, "agents[1].sampling.top_p: must be in (0, 1] (1 = off), got -0.5"},
	} {
		_, err := rollout.NewAgent("agents[1]", tc.cfg, defaults, scripted.Binding())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want it to contain %q", err, tc.want)
		}
	}
	_, err := rollout.NewAgent("agents[0]", rollout.AgentConfig{Name: "a", Model: "m", Preset: "math-single"}, rollout.AgentDefaults{Sampling: rollout.DefaultSampling}, scripted.Binding())
	if err == nil || !strings.Contains(err.Error(), "agents[0].max_new_tokens: must be > 0") {
		t.Errorf("missing max_new_tokens: %v", err)
	}
}

func TestAgentCustomTemplates(t *testing.T) {
	cfg := rollout.AgentConfig{
		Name:   "critic",
		Model:  "m",
		System: "You are {{.Agent}}.",
		Role:   "Critique loop {{.Loop}} of {{.MaxLoops}}.",
		User:   "Q: {{.Task}}\n{{range .Teammates}}[{{.Agent}}] {{.Text}}\n{{end}}{{.Role}} step={{.Step}} {{index .Extra \"hint\"}}",
	}
	a, err := rollout.NewAgent("agents[2]", cfg, defaults, scripted.Binding())
	if err != nil {
		t.Fatal(err)
	}
	d := rollout.NewPromptData("1+1?", []rollout.TeamEntry{{Agent: "solver", Text: "2"}}, 3)
	d.Loop, d.MaxLoops, d.Extra = 1, 2, map[string]string{"hint": "be brief"}
	sys, user, err := a.Messages(d)
	if err != nil {
		t.Fatal(err)
	}
	if sys != "You are critic." {
		t.Errorf("system %q", sys)
	}
	if want := "Q: 1+1?\n[solver] 2\nCritique loop 1 of 2. step=3 be brief"; user != want {
		t.Errorf("user %q, want %q", user, want)
	}
	if d.TeamContext != `The output of "solver": 2` {
		t.Errorf("team context %q", d.TeamContext)
	}
	text, ids, err := a.Render(d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(text, "<|im_start|>system\nYou are critic.<|im_end|>") || !strings.HasSuffix(text, "<|im_start|>assistant\n") || len(ids) != len(text) {
		t.Errorf("rendered chat %q (%d ids)", text, len(ids))
	}
	if a.Parser.Parse("anything").Valid != true {
		t.Error("an agent without a parser should accept any output (free)")
	}
}

func TestParsers(t *testing.T) {
	boxed, _ := rollout.ParserByName("boxed")
	verdict, _ := rollout.ParserByName("verdict")
	for _, tc := range []struct {
		p     rollout.Parser
		text  string
		valid bool
		value string
	}{
		{boxed, `so \boxed{\frac{1}{2}}.`, true, `\frac{1}{2}`},
		{boxed, `<think>maybe \boxed{3}</think> no box here`, false, ""},
		{boxed, `<think>\boxed{3} still thinking`, false, ""},
		{boxed, `#### 42`, false, ""},
		{verdict, "ok <verify> Approve </verify>", true, "approve"},
		{verdict, "<verify>approve</verify> wait <verify>reject</verify>", true, "reject"},
		{verdict, "<verify>maybe</verify>", false, ""},
		{verdict, "<think><verify>reject</verify></think>fine", false, ""},
		{verdict, "no tag", false, ""},
	} {
		got := tc.p.Parse(tc.text)
		if got.Valid != tc.valid || got.Value != tc.value || (got.Valid == (got.Problem != "")) {
			t.Errorf("parse %q = %+v, want valid %v value %q (and a problem iff invalid)", tc.text, got, tc.valid, tc.value)
		}
	}
}

func TestNewAgents(t *testing.T) {
	cfgs, _ := rollout.DefaultAgentConfigs("math-refine")
	cfgs[1].Thinking = true
	var thinking []bool
	agents, err := rollout.NewAgents(cfgs, defaults, func(c rollout.AgentConfig) (rollout.Binding, error) {
		thinking = append(thinking, c.Thinking)
		return scripted.Binding(), nil
	})
	if err != nil || len(agents) != 2 || agents[1].Name != "verifier" || agents[1].FormatPenalty != 0.1 {
		t.Fatalf("agents %v, err %v", agents, err)
	}
	if thinking[0] || !thinking[1] {
		t.Errorf("bind saw thinking %v, want [false true]", thinking)
	}
	cfgs[1].Name = "solver"
	if _, err := rollout.NewAgents(cfgs, defaults, func(rollout.AgentConfig) (rollout.Binding, error) { return scripted.Binding(), nil }); err == nil ||
		!strings.Contains(err.Error(), `agents[1].name: "solver" is used twice`) {
		t.Errorf("duplicate name error: %v", err)
	}
	opts := mathrefine.DefaultOptions()
	opts.MaxLoops = -1
	mr, _ := rollout.WorkflowOf("math-refine")
	if err := mr.Validate(opts); err == nil || !strings.Contains(err.Error(), "max_loops") {
		t.Errorf("Validate(math-refine): %v", err)
	}
	sg, _ := rollout.WorkflowOf("single")
	if err := sg.Validate(single.DefaultOptions()); err != nil {
		t.Errorf("Validate(single) looked at math-refine's options: %v", err)
	}
}

// An agent's own earlier turns render between the system message and the
// new user message, in order, through the binding's chat template.
func TestAgentRendersHistory(t *testing.T) {
	a := compileAgents(t, []rollout.AgentConfig{{Name: "searcher", Model: "policy", Role: "Search.", User: "{{.Task}}"}})[0]
	d := rollout.PromptData{Task: "next question", History: []rollout.Message{
		{Role: "user", Content: "first question"},
		{Role: "assistant", Content: "<search>q</search>"},
		{Role: "tool", Content: "<information>doc</information>"},
	}}
	text, _, err := a.Render(d)
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>system\n<|im_end|>\n" +
		"<|im_start|>user\nfirst question<|im_end|>\n" +
		"<|im_start|>assistant\n<search>q</search><|im_end|>\n" +
		"<|im_start|>tool\n<information>doc</information><|im_end|>\n" +
		"<|im_start|>user\nnext question<|im_end|>\n<|im_start|>assistant\n"
	if text != want {
		t.Errorf("rendered\n%q\nwant\n%q", text, want)
	}
}

// PythonParser takes the last fenced Python block (```python, ```py,
// ```python3 or bare) and names what it wanted when there is none.
func TestPythonParser(t *testing.T) {
	p := rollout.PythonParser("the function")
	got := p.Parse("first\n```py\nx = 1\n```\nthen\n```python3\ndef f():\n    return 2\n```\ntrailing")
	if !got.Valid || got.Value != "def f():\n    return 2\n" {
		t.Fatalf("got %+v", got)
	}
	for _, bad := range []string{"no fence", "```python\n   \n```", "```go\nx := 1\n```"} {
		if got := p.Parse(bad); got.Valid || got.Problem != "no ```python block holding the function" {
			t.Fatalf("%q: got %+v", bad, got)
		}
	}
	if b := rollout.PythonBlocks("```\na\n```\n```python\nb\n```"); len(b) != 2 || b[0] != "a\n" || b[1] != "b\n" {
		t.Fatalf("PythonBlocks: %q", b)
	}
}

package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// fakeModel makes a directory that passes the path checks (config.json and
// tokenizer.json present; their contents are not read here).
func fakeModel(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"config.json", "tokenizer.json"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func base(t *testing.T) string {
	return `
run: {name: t, output_dir: ` + t.TempDir() + `, steps: 3}
models:
  tiny: {path: ` + fakeModel(t) + `}
agents:
  - {name: solver, preset: math-solver, format_penalty: 0.1}
  - {name: verifier, preset: math-verifier, format_penalty: 0.1}
`
}

func TestParseAndResolve(t *testing.T) {
	c, err := Parse([]byte(base(t)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Run.Steps != 3 || c.Advantage.Estimator != "drmas" || c.Optim.LR != 1e-6 || c.Batch.N != 4 {
		t.Fatalf("defaults under the file: %+v", c)
	}
	tr := c.Trained()
	if len(tr) != 2 || tr[0].Name != "solver" || tr[1].Name != "verifier" || tr[0].Source != "tiny" || tr[0].Model.DType != "float32" {
		t.Fatalf("separate assignment: %+v", tr)
	}
	if ac := c.AgentConfigs(); ac[1].Model != "verifier" {
		t.Fatalf("agents act with their own trained copy: %+v", ac[1])
	}
	// shared: one trained model named after the checkpoint
	c2, err := Parse([]byte(base(t)+"assignment: shared\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if tr := c2.Trained(); len(tr) != 1 || tr[0].Name != "tiny" || len(tr[0].Agents) != 2 {
		t.Fatalf("shared assignment: %+v", tr)
	}
	// lora: an adapter per agent with its overrides; lora.full trains a full copy
	c3, err := Parse([]byte(base(t)+"assignment: lora\nlora: {rank: 8}\n"), []string{"agents[1].lora.alpha=4", "agents[1].lora.targets=[q_proj]"})
	if err != nil {
		t.Fatal(err)
	}
	tr3 := c3.Trained()
	if len(tr3) != 2 || tr3[0].Name != "solver" || tr3[0].LoRA == nil || tr3[0].LoRA.Rank != 8 || tr3[0].LoRA.Alpha != 32 || len(tr3[0].LoRA.Targets) != 7 ||
		tr3[1].LoRA.Rank != 8 || tr3[1].LoRA.Alpha != 4 || len(tr3[1].LoRA.Targets) != 1 {
		t.Fatalf("lora assignment: %+v %+v", tr3[0].LoRA, tr3[1].LoRA)
	}
	if ac := c3.AgentConfigs(); ac[1].Model != "verifier" {
		t.Fatalf("under lora, agents act with their own adapter: %+v", ac[1])
	}
	c4, err := Parse([]byte(base(t)+"assignment: lora\n"), []string{"agents[0].lora.full=true"})
	if err != nil {
		t.Fatal(err)
	}
	if tr := c4.Trained(); tr[0].LoRA != nil || tr[1].LoRA == nil {
		t.Fatalf("lora.full: %+v %+v", tr[0].LoRA, tr[1].LoRA)
	}
	// the resolved config round-trips
	out, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(out, nil)
	if err != nil {
		t.Fatalf("resolved config does not parse back: %v\n%s", err, out)
	}
	again, _ := back.Marshal()
	if string(again) != string(out) {
		t.Fatalf("resolved config is not stable:\n%s\n---\n%s", out, again)
	}
}

func TestSetOverridesFile(t *testing.T) {
	c, err := Parse([]byte(base(t)+"optim: {lr: 2e-6}\n"), []string{
		"run.steps=7", "optim.lr=3e-6", "agents[1].optim.lr=3e-6", "agents.0.sampling.temperature=0.7",
		"advantage.estimator=grpo", "eval.ks=[1, 2]", "batch.n=2",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Run.Steps != 7 || c.Optim.LR != 3e-6 || *c.Agents[1].Optim.LR != 3e-6 || *c.Agents[0].Sampling.Temperature != 0.7 ||
		c.Advantage.Estimator != "grpo" || len(c.Eval.Ks) != 2 || c.Batch.N != 2 {
		t.Fatalf("--set not applied: %+v", c)
	}
	if c.Settings(c.Trained()[1]).LR != 3e-6 {
		t.Fatal("per-agent override not applied")
	}
}

// Each bad config gives one clear line naming the key and the fix.
func TestBadConfigs(t *testing.T) {
	cases := map[string]struct {
		yaml string
		sets []string
		want []string
	}{
		"unknown key":        {base(t) + "optim: {lrr: 1e-6}\n", nil, []string{"optim.lrr: unknown key", "did you mean lr?"}},
		"unknown nested":     {base(t), []string{"agents[1].optim.cliphigh=0.3"}, []string{"agents[1].optim.cliphigh: unknown key", "clip_high"}},
		"unknown top":        {base(t) + "steps: 3\n", nil, []string{"steps: unknown key"}},
		"negative lr":        {base(t) + "optim: {lr: -1e-6}\n", nil, []string{"optim.lr: must be >= 0", "-1e-06"}},
		"agent lr":           {base(t), []string{"agents[1].optim.lr=-1e-6"}, []string{"agents[1].optim.lr: must be >= 0"}},
		"shared conflict":    {base(t) + "assignment: shared\n", []string{"agents[1].optim.lr=2e-6", "agents[1].optim.clip_high=0.28"}, []string{`agents "solver" and "verifier" share model "tiny"`, "lr (1e-06 vs 2e-06)", "clip_high (0.2 vs 0.28)"}},
		"shared temperature": {base(t) + "assignment: shared\n", []string{"agents[1].sampling.temperature=0.7"}, []string{`share model "tiny"`, "temperatures 1 and 0.7"}},
		"missing model":      {strings.Replace(base(t), "path: /", "path: /nonexistent/", 1), nil, []string{"models.tiny.path:", "no config.json", "train init"}},
		"unknown workflow":   {base(t) + "workflow: {name: debate}\n", nil, []string{"workflow.name: unknown workflow \"debate\"", "math-refine"}},
		"unknown model":      {base(t), []string{"agents[0].model=big"}, []string{`agents[0].model: "big" is not one of models`}},
		"wrong type":         {base(t), []string{"run.steps=many"}, []string{`run.steps: "many" is not a valid integer`}},
		"bad set":            {base(t), []string{"run.steps"}, []string{"want key.path=value"}},
		"estimator":          {base(t) + "advantage: {estimator: ppo}\n", nil, []string{"advantage.estimator: unknown estimator \"ppo\"", "drmas"}},
		"assignment":         {base(t) + "assignment: mixed\n", nil, []string{"assignment: must be separate"}},
		"lora rank":          {base(t) + "assignment: lora\n", []string{"lora.rank=0"}, []string{"lora.rank: must be >= 1"}},
		"lora dropout":       {base(t) + "assignment: lora\n", []string{"lora.dropout=0.05"}, []string{"lora.dropout: only 0", "ratio"}},
		"lora target":        {base(t) + "assignment: lora\n", []string{"agents[1].lora.targets=[q_proj,qkv]"}, []string{`agents[1].lora.targets[1]: unknown projection "qkv"`}},
		"lora unasked":       {base(t), []string{"agents[0].lora.rank=4"}, []string{"agents[0].lora: set, but assignment is separate"}},
		"pass@k":             {base(t) + "eval: {n: 2, ks: [4]}\n", nil, []string{"eval.ks[0]"}},
		"nan temperature":    {base(t), []string{"eval.sampling.temperature=.nan"}, []string{"eval.sampling.temperature: must be a finite number"}},
		"inf temperature":    {base(t), []string{"sampling.temperature=.inf"}, []string{"sampling.temperature: must be a finite number"}},
		"nan top_p":          {base(t), []string{"sampling.top_p=.nan"}, []string{"sampling.top_p: must be in (0, 1]"}},
		"agent name as path": {base(t), []string{"agents[1].name=../../escaped"}, []string{`agents[1].name: "../../escaped" is not a usable name`}},
		"model name as path": {strings.Replace(base(t), "tiny:", "../up:", 1), []string{"agents[0].model=../up", "agents[1].model=../up"}, []string{`models.../up: "../up" is not a usable name`}},
		"engine sync":        {base(t), []string{"engine.sync_every=0"}, []string{"engine.sync_every: must be >= 1"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml), c.sets)
			if err == nil {
				t.Fatal("want an error")
			}
			msg := err.Error()
			if strings.Contains(msg, "sampling.sampling") {
				t.Fatalf("error repeats its key: %q", msg)
			}
			if strings.Contains(msg, "\n") {
				t.Fatalf("error spans several lines: %q", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Fatalf("error %q should mention %q", msg, w)
				}
			}
		})
	}
}

func TestLoadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.yaml")
	os.WriteFile(path, []byte(base(t)), 0o644)
	if _, err := Load(path, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "none.yaml"), nil); err == nil {
		t.Fatal("a missing file must fail")
	}
}

// A workflow with an environment or an estimator it cannot work with is
// refused in one line naming both.
func TestWorkflowPairsRefused(t *testing.T) {
	searchTeam := `
agents:
  - {name: verifier, preset: search-verifier}
  - {name: search, preset: search-search}
  - {name: answer, preset: search-answer}
`
	run := func(extra string) string {
		t.Helper()
		y := `
run: {name: t, output_dir: ` + t.TempDir() + `, steps: 3}
models:
  tiny: {path: ` + fakeModel(t) + `}
` + extra
		_, err := Parse([]byte(y), nil)
		if err == nil {
			return ""
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("error spans lines: %q", err)
		}
		return err.Error()
	}
	for _, c := range []struct{ yaml, want string }{
		{searchTeam + "workflow: {name: search}\nenv: {name: search}\n", ""},
		{searchTeam + "workflow: {name: search}\n", `environment "math" does not play workflow "search" (it plays "math-refine" or "single" or "math-tool")`},
		{"agents: [{name: solver, preset: math-solver}, {name: verifier, preset: math-verifier}]\nenv: {name: search}\n", `environment "search" does not play workflow "math-refine" (it plays "search")`},
		{"agents: [{name: solver, preset: math-solver}, {name: verifier, preset: math-verifier}]\nadvantage: {estimator: atgrpo}\n", `workflow "math-refine" does not produce the rows estimator "atgrpo" needs`},
		{searchTeam + "workflow: {name: search}\nenv: {name: search}\nadvantage: {estimator: magrpo}\n", `workflow "search" does not produce the rows estimator "magrpo" needs`},
		{searchTeam + "workflow: {name: search, search: {answer: oracle}}\nenv: {name: search}\n", `workflow.search.answer: names agent "oracle", which is not configured`},
		{searchTeam + "workflow: {name: search}\nenv: {name: search, search: {retriever: {kind: http, url: localhost:8000}}}\n", "env.search.retriever.url"},
		{searchTeam + "workflow: {name: search}\nenv: {name: search, search: {retriever: {kind: bm25, corpus: /no/such.jsonl}}}\n", `env.search.retriever.corpus: file "/no/such.jsonl" not found`},
		{searchTeam + "workflow: {name: search}\nenv: {name: search, search: {retriever: {topk: 3, tokp: 2}}}\n", "tokp"},
		{searchTeam + "workflow: {name: search}\nenv: {name: search, search: {retriever: {kind: http, url: \"http://127.0.0.1:8000/retrieve\", token_file: /no/such.token}}}\n", `env.search.retriever.token_file: file "/no/such.token" not found`},
		{searchTeam + "workflow: {name: search}\nenv: {name: search, search: {retriever: {token_file: /etc/hostname}}}\n", `env.search.retriever.token_file: set for kind "bm25"`},
	} {
		got := run(c.yaml)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s\ngot error %q, want one containing %q", c.yaml, got, c.want)
		}
	}
}

// Plug-in sections (env.<key>, workflow.<key>) decode over their defaults,
// refuse unknown keys with a suggestion, and survive the resolved config's
// round trip.
func TestPluginSectionsRoundTrip(t *testing.T) {
	y := `
run: {name: t, output_dir: ` + t.TempDir() + `, steps: 3}
models:
  tiny: {path: ` + fakeModel(t) + `}
agents:
  - {name: verifier, preset: search-verifier}
  - {name: search, preset: search-search}
  - {name: answer, preset: search-answer}
workflow: {name: search, search: {max_steps: 3}}
env: {name: search, search: {retriever: {topk: 2}}, plan_path: {rows: 7}}
`
	c, err := Parse([]byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	wo := c.Workflow.Options().(searchOptions)
	eo, _ := c.Env.Options()
	if wo.MaxSteps != 3 || wo.Verifier != "verifier" || eo.(searchConfig).Retriever.TopK != 2 || eo.(searchConfig).Retriever.Kind != "bm25" {
		t.Fatalf("decoded over the defaults: %+v %+v", wo, eo)
	}
	if pp := c.Env.Section("plan_path").(planPathConfig); pp.Rows != 7 || pp.Cols != 6 {
		t.Fatalf("another environment's section: %+v", pp)
	}
	out, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(out, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	again, _ := back.Marshal()
	if string(again) != string(out) || !strings.Contains(string(out), "    max_steps: 3\n") {
		t.Fatalf("round trip:\n%s\n---\n%s", out, again)
	}
	for set, want := range map[string]string{
		"workflow.serch.max_steps=2":   "workflow.serch: unknown key (did you mean search?)",
		"env.search.retriver.topk=2":   "env.search.retriver: unknown key (did you mean retriever?)",
		"env.sudoku.size=five":         `env.sudoku.size: "five" is not a valid integer`,
		"workflow.search.max_steps=-1": "workflow.search.max_steps: must be >= 1",
		// retired keys say where their meaning went
		"workflow.tree.alpha=0.5":                  "workflow.tree.alpha: no longer a key: AT-GRPO's α on the team reward is advantage.team_weight",
		"advantage.atgrpo.drop_zero_variance=true": "advantage.atgrpo.drop_zero_variance: no longer a key: the group filter applies after any estimator: set advantage.filter.zero_variance instead",
		"workflow.code_test.alpha=2":               "workflow.code_test.alpha: no longer a key",
	} {
		if _, err := Parse([]byte(y), []string{set}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--set %s: %v, want %q", set, err, want)
		}
	}
	// a retired key at its old default (as every config.yaml saved before it
	// went holds it) loads as if absent
	old := []string{"workflow.tree.alpha=1.0", "workflow.math_tool.alpha=1", "advantage.atgrpo.drop_zero_variance=false", "advantage.atgrpo.drop_lowest_mean_fraction=0"}
	if c, err := Parse([]byte(y), old); err != nil {
		t.Errorf("retired keys at their neutral values: %v", err)
	} else {
		again, _ := c.Marshal()
		var m struct {
			Workflow  map[string]any `yaml:"workflow"`
			Advantage struct {
				ATGRPO map[string]any `yaml:"atgrpo"`
			} `yaml:"advantage"`
		}
		if err := yaml.Unmarshal(again, &m); err != nil {
			t.Fatal(err)
		}
		tree, _ := m.Workflow["tree"].(map[string]any)
		mathTool, _ := m.Workflow["math_tool"].(map[string]any)
		if tree == nil || mathTool == nil {
			t.Fatalf("no workflow.tree or workflow.math_tool section in the resolved config:\n%s", again)
		}
		_, a1 := tree["alpha"]
		_, a2 := mathTool["alpha"]
		_, d := m.Advantage.ATGRPO["drop_zero_variance"]
		if a1 || a2 || d {
			t.Errorf("a retired key survived into the resolved config:\n%s", again)
		}
	}
}

// The dataset files an environment's options name (their Files method) must
// exist; a procedural source names none.
func TestDatasetFilesChecked(t *testing.T) {
	for _, env := range []string{"math", "writing", "coding"} {
		y := base(t) + "env: {name: " + env + ", " + env + ": {source: file, train: /no/such.jsonl}}\n"
		want := "env." + env + `.train: file "/no/such.jsonl" not found`
		if _, err := Parse([]byte(y), nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", env, err, want)
		}
		if _, err := Parse([]byte(base(t)+"env: {name: "+env+"}\n"), nil); err != nil && strings.Contains(err.Error(), "not found") {
			t.Errorf("%s, procedural: %v", env, err)
		}
	}
}

package config

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// A recipe fills only what the config leaves unset: a file's value and a
// --set value win and are reported as kept; a workflow a recipe does not
// cover, and an unknown recipe, are refused by name.
func TestRecipeIsUnderTheFile(t *testing.T) {
	const src = `recipe: magrpo-comlrl
models: {m: {path: M}}
agents: [{name: first, model: m, preset: writing-summary}, {name: second, model: m, preset: writing-expansion, format_penalty: 0}]
workflow: {name: joint}
env: {name: writing}
optim: {lr: 3.0e-4}
`
	cfg, err := parse([]byte(src), []string{"sampling.temperature=1.0"}, noModels)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Optim.LR != 3e-4 || cfg.Sampling.Temperature != 1.0 || cfg.Sampling.TopP != 0.9 {
		t.Errorf("lr %g, temperature %g, top_p %g; want the file's 3e-4, --set's 1.0 and the recipe's 0.9", cfg.Optim.LR, cfg.Sampling.Temperature, cfg.Sampling.TopP)
	}
	_, set, kept := cfg.RecipeReport()
	for _, k := range []string{"optim.lr", "sampling.temperature", "agents.1.format_penalty"} {
		if !contains(kept, k) || contains(set, k) {
			t.Errorf("%s: kept %v, set %v; want it kept", k, kept, set)
		}
	}
	if !contains(set, "agents.0.format_penalty") || !contains(set, "sampling.top_p") {
		t.Errorf("set %v: want the keys the file leaves out", set)
	}
	for bad, want := range map[string]string{
		strings.Replace(src, "magrpo-comlrl", "drmas", 1):  `recipe: drmas has no values for workflow "joint"`,
		strings.Replace(src, "magrpo-comlrl", "magrpo", 1): `recipe: must be drmas, atgrpo-pettingllms or magrpo-comlrl`,
	} {
		if _, err := parse([]byte(bad), nil, noModels); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Every shipped config that names a recipe resolves, and keeps the
// recipe's value for every key the recipe covers; a tiny config may scale
// the sizes down (steps, batch, lengths, turns, the learning rate and the
// evaluation's cadence) and compute in float32 on a CPU (run.dtype). A
// config that departs from its reference does so in keys the recipe leaves
// alone, or names no recipe.
func TestShippedRecipeConfigs(t *testing.T) {
	sizes := regexp.MustCompile(`^(run\.(steps|epochs|dtype)|batch\.(n|prompts_per_step)|max_new_tokens|optim\.(lr|micro_batch_tokens|micro_batch_size)|eval\.(every|n|tasks)|workflow\.\w+\.max_turns)$`)
	paths, _ := filepath.Glob(filepath.Join("..", "configs", "*.yaml"))
	n := 0
	for _, p := range paths {
		cfg := loadShipped(t, p)
		if cfg.Recipe == "" {
			continue
		}
		n++
		entries, _, err := recipeFor(cfg.Recipe, cfg.Workflow.Name, cfg.Env.Name)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		want := map[string]any{}
		for _, e := range entries {
			var v any
			yaml.Unmarshal([]byte(e.value), &v)
			want[e.path] = v
		}
		b, err := cfg.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		var doc yaml.Node
		yaml.Unmarshal(b, &doc)
		_, set, kept := cfg.RecipeReport()
		if len(set) == 0 {
			t.Errorf("%s: recipe %s set no key", p, cfg.Recipe)
		}
		for _, k := range kept {
			key := regexp.MustCompile(`^agents\.\d+\.`).ReplaceAllString(k, "agents.*.")
			var got any
			if node := nodeAt(doc.Content[0], splitPath(k)...); node != nil {
				node.Decode(&got)
			}
			if fmt.Sprint(got) == fmt.Sprint(want[key]) {
				continue
			}
			if sizes.MatchString(k) && strings.Contains(p, "tiny") {
				continue
			}
			t.Errorf("%s: %s is %v, recipe %s's %v; keep the recipe's value (or drop the recipe and say why)", p, k, got, cfg.Recipe, want[key])
		}
	}
	if n < 7 {
		t.Errorf("%d shipped configs name a recipe, want the real-size Dr. MAS and MAGRPO ones and AT-GRPO's as-run ones", n)
	}
}

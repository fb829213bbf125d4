package datasets_test

// configs_test.go — every shipped real-size config reads what `train data`
// writes for it: the files are written from the fixtures through the
// stand-in Hub, then the config is loaded as it ships (its dataset paths,
// its fields mapping) and its environment built by the registered Build a
// run uses, which reads and parses every record.

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"troupe/config"
	"troupe/datasets"
	"troupe/rollout"
)

// The shipped real-size configs: configs/*.yaml not ending in -tiny.
func realSizeConfigs(t *testing.T) []string {
	t.Helper()
	all, err := filepath.Glob("../configs/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range all {
		if !strings.HasSuffix(p, "-tiny.yaml") {
			out = append(out, "configs/"+filepath.Base(p))
		}
	}
	return out
}

// setOf is the one set that names the config.
func setOf(t *testing.T, cfg string) *datasets.Set {
	t.Helper()
	var found []*datasets.Set
	for _, s := range datasets.Sets {
		if slices.Contains(s.Configs, cfg) {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s is named by %d sets, want 1", cfg, len(found))
	}
	return found[0]
}

func TestEveryRealSizeConfigReadsItsData(t *testing.T) {
	want := map[string]struct {
		train, test int
		question    string // the first training task's, or a part of it
		answer      string
	}{
		"configs/drmas-math-qwen3-4b.yaml":                 {4, 56, "What is the remainder when $2^{10}$ is divided by $7$?", "2"},
		"configs/atgrpo-math-qwen3-1.7b.yaml":              {5, 3, "What is $6 \\times 7$?", "42"},
		"configs/atgrpo-code-qwen3-1.7b.yaml":              {3, 4, "Write a function to return three times n plus 6.", ""},
		"configs/drmas-search-qwen2.5-3b.yaml":             {5, 63, "what is the nq fact number 0?", "nq 0"},
		"configs/drmas-search-mixed-llama3.2-qwen2.5.yaml": {5, 73, "what is the nq fact number 0?", "nq 0"},
		"configs/magrpo-writing-qwen3-1.7b.yaml":           {3, 3, "TITLE: train post 0", ""},
		"configs/magrpo-coding-qwen2.5-coder.yaml":         {7, 32, "def add_33(x: int) -> int:", ""},
		"configs/atgrpo-planpath-qwen3-1.7b.yaml":          {-1, -1, "", ""}, // generated
		"configs/atgrpo-planpath-pettingllms.yaml":         {-1, -1, "", ""},
	}
	cfgs := realSizeConfigs(t)
	if len(cfgs) != 9 || len(want) != 9 {
		t.Fatalf("%d real-size configs (%v) and %d expectations, want 9 of each", len(cfgs), cfgs, len(want))
	}
	h := newFakeHub(t)
	for _, cfg := range cfgs {
		t.Run(filepath.Base(cfg), func(t *testing.T) {
			w, ok := want[cfg]
			if !ok {
				t.Fatalf("no expectation for %s", cfg)
			}
			set := setOf(t, cfg)
			abs, _ := filepath.Abs(filepath.Join("..", cfg))
			out := t.TempDir()
			write(t, h, set.Name, datasets.Options{Out: out})
			t.Chdir(out) // the configs' data/... paths are relative
			c, err := config.LoadSaved(abs, nil)
			if err != nil {
				t.Fatalf("%s does not load beside what data %s wrote: %v", cfg, set.Name, err)
			}
			if w.train < 0 {
				if len(set.Outputs) != 0 {
					t.Errorf("%s: set %s writes %d files for generated instances", cfg, set.Name, len(set.Outputs))
				}
				return
			}
			spec, err := rollout.EnvironmentOf(c.Env.Name)
			if err != nil {
				t.Fatal(err)
			}
			opts, err := c.Env.Options()
			if err != nil {
				t.Fatal(err)
			}
			train, test, err := spec.Build(opts)
			if err != nil {
				t.Fatalf("%s's environment does not read what data %s wrote: %v", cfg, set.Name, err)
			}
			if train.Len() != w.train || test == nil || test.Len() != w.test {
				t.Fatalf("%s: %d train and %v test tasks, want %d and %d", cfg, train.Len(), test, w.train, w.test)
			}
			task := train.Task(0)
			if !strings.Contains(task.Question, w.question) || task.Answer != w.answer {
				t.Errorf("%s: first task %q (answer %q), want %q (answer %q)", cfg, task.Question, task.Answer, w.question, w.answer)
			}
		})
	}
}

// CommandFor names the command for each path a shipped config reads, from
// the repository root (--out .) or anywhere else (--out DIR).
func TestCommandFor(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"data/drmas_math/test_sampled.parquet", "bin/train data drmas-math --out ."},
		{"./data/drmas_math/train.parquet", "bin/train data drmas-math --out ."},
		{"/scratch/me/data/pettingllms/AIME24.parquet", "bin/train data atgrpo-math --out /scratch/me"},
		{"my data/data/tldr-test.jsonl", "bin/train data magrpo-writing --out 'my data'"},
		{"data/search-r1/wiki-18.jsonl", "bin/train data drmas-search --out . --corpus"},
		{"data/search-r1/nq_hotpotqa_test.parquet", "bin/train data drmas-search --out ."},
	} {
		if got, ok := datasets.CommandFor(c.path); !ok || got != c.want {
			t.Errorf("CommandFor(%q) = %q, %v; want %q", c.path, got, ok, c.want)
		}
	}
	for _, p := range []string{"data/mytrain.parquet", "mydata/drmas_math/train.parquet", "xdata/mbpp-train.jsonl"} {
		if got, ok := datasets.CommandFor(p); ok {
			t.Errorf("CommandFor(%q) = %q, want none", p, got)
		}
	}
}

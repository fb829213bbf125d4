package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResumeRefusesChangesToWhatIsTrained: every key that changes what is
// trained is refused by name, harmless keys pass, and the allowed changes
// are logged.
func TestResumeRefusesChangesToWhatIsTrained(t *testing.T) {
	doc := base(t)
	dir := t.TempDir()
	saved, err := Parse([]byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := saved.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	savedPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(savedPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	other := fakeModel(t)
	for _, c := range []struct {
		name string
		doc  string
		sets []string
		want []string // keys named in the refusal; none: allowed
	}{
		{"same config", doc, nil, nil},
		{"the checkpoint's own config", string(raw), nil, nil},
		{"harmless keys", doc, []string{"run.steps=9", "run.log_samples=3", "eval.every=2", "checkpoint.every=1", "checkpoint.keep=0", "export.at_end=false", "run.tensorboard=false", "engine.max_slots=8", "run.name=again", "run.concurrent_updates=true"}, nil},
		{"another estimator", doc, []string{"advantage.estimator=grpo"}, []string{"advantage.estimator: drmas → grpo"}},
		{"an estimator option", doc, []string{"advantage.epsilon=0.5"}, []string{"advantage.epsilon"}},
		{"two agents resumed as one", strings.Replace(doc, "  - {name: verifier, preset: math-verifier, format_penalty: 0.1}\n", "", 1) + "workflow: {name: single}\n", nil,
			[]string{"agents[1]: {name: verifier, …} → (absent)", "workflow.name: math-refine → single"}},
		{"another model path", doc, []string{"models.tiny.path=" + other}, []string{"models.tiny.path"}},
		{"another assignment", doc, []string{"assignment=shared"}, []string{"assignment: separate → shared"}},
		{"an agent's preset", doc, []string{"agents[0].preset=math-verifier"}, []string{"agents[0].preset"}},
		{"the learning rate", doc, []string{"optim.lr=3e-6"}, []string{"optim.lr"}},
		{"the dtype", doc, []string{"run.dtype=bfloat16"}, []string{"run.dtype"}},
		{"the seed", doc, []string{"run.seed=7"}, []string{"run.seed"}},
	} {
		now, err := Parse([]byte(c.doc), c.sets)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		changes, err := CheckResume(savedPath, now, false, "--allow-config-change")
		if len(c.want) == 0 {
			if err != nil {
				t.Errorf("%s: refused: %v", c.name, err)
			}
			for _, ch := range changes {
				if ch.Trains {
					t.Errorf("%s: %s counted as changing training", c.name, ch)
				}
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted (changes %v)", c.name, changes)
			continue
		}
		for _, w := range append(c.want, "--allow-config-change") {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: the refusal should name %q: %v", c.name, w, err)
			}
		}
		// allowed: the same changes come back for the log
		changes, err = CheckResume(savedPath, now, true, "--allow-config-change")
		if err != nil || len(changes) == 0 {
			t.Fatalf("%s: allowed: %v %v", c.name, changes, err)
		}
		run := t.TempDir()
		if err := LogResumeChanges(run, "ck", 2, changes); err != nil {
			t.Fatal(err)
		}
		logged, err := os.ReadFile(filepath.Join(run, ResumeLogName))
		if err != nil || !strings.Contains(string(logged), "changes training") || !strings.Contains(string(logged), strings.SplitN(c.want[0], ":", 2)[0]) {
			t.Errorf("%s: the log says %q (%v)", c.name, logged, err)
		}
	}
}

// A resume cannot change a trained model's adapter, allowed or not: the
// checkpoint's adapter keeps its shape, so the change would be logged and
// never applied. Keys that change no adapter are not changes at all.
func TestResumeKeepsAdapters(t *testing.T) {
	doc := base(t)
	savedPath := func(sets ...string) string {
		c, err := Parse([]byte(doc), sets)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := c.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	lora := savedPath("assignment=lora", "lora.rank=4")
	full := savedPath()
	for _, c := range []struct {
		name  string
		saved string
		sets  []string
		want  string // in the refusal; "": accepted with no change listed
	}{
		{"the run-wide rank", lora, []string{"assignment=lora", "lora.rank=8"}, `trained model "solver": its adapter is rank 4, alpha 32`},
		{"an agent's targets", lora, []string{"assignment=lora", "lora.rank=4", "agents[1].lora.targets=[q_proj]"}, `trained model "verifier"`},
		{"an adapter made full", lora, []string{"assignment=lora", "lora.rank=4", "agents[0].lora.full=true"}, "none (full weights) in the config"},
		{"every agent overrides the new rank", lora, []string{"assignment=lora", "lora.rank=8", "agents[0].lora.rank=4", "agents[1].lora.rank=4"}, ""},
		{"lora keys of a run without adapters", full, []string{"lora.rank=8", "lora.targets=[q_proj]"}, ""},
	} {
		now, err := Parse([]byte(doc), c.sets)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		changes, err := CheckResume(c.saved, now, true, "--allow-config-change")
		switch {
		case c.want == "" && (err != nil || len(changes) != 0):
			t.Errorf("%s: %v, changes %v; want accepted with none", c.name, err, changes)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v (changes %v), want a refusal naming %q even with --allow-config-change", c.name, err, changes, c.want)
		}
	}
}

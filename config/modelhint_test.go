package config

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// A shipped tiny config whose model is not built yet names the make target
// and the commands that build it; a real model's config names the Hugging
// Face download and never `train init` (which makes a tiny random model).
func TestBadInputMissingModelHints(t *testing.T) {
	for _, c := range []struct {
		config      string
		want, never []string
	}{
		{"../configs/magrpo-writing-tiny.yaml", []string{"`make magrpo-demo`", "train init runs/magrpo-demo/base", "--out runs/magrpo-demo/sft"}, nil},
		{"../configs/drmas-math-tiny.yaml", []string{"`make math-demo`"}, nil},
		{"../configs/drmas-math-demo-tiny.yaml", []string{"shipped with the repository", "git checkout -- demo/warmup", "`make demo-warmup`"}, []string{"train init"}},
		{"../configs/drmas-math-qwen3-4b.yaml", []string{"/models/Qwen3-4B", "hf download Qwen/Qwen3-4B"}, []string{"train init", "make "}},
	} {
		_, err := Load(c.config, nil)
		if err == nil {
			t.Fatalf("%s: loads although its model is not there", c.config)
		}
		msg := err.Error()
		if !strings.Contains(msg, "has no config.json") {
			t.Fatalf("%s: another error came first: %v", c.config, err)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: the error should name %q:\n%s", c.config, w, msg)
			}
		}
		for _, n := range c.never {
			if strings.Contains(msg, n) {
				t.Errorf("%s: the error should not suggest %q:\n%s", c.config, n, msg)
			}
		}
	}
}

// Every make target the hints name exists in the Makefile and builds the
// run directory they say.
func TestMissingModelHintTargetsExist(t *testing.T) {
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Skip("no Makefile beside the package:", err)
	}
	for dir, target := range demoTargets {
		rule := regexp.MustCompile(`(?m)^([a-z-]+ )*` + regexp.QuoteMeta(target) + `( [a-z-]+)*:`)
		loc := rule.FindIndex(mk)
		if loc == nil {
			t.Errorf("the hints name `make %s`, which the Makefile does not have", target)
			continue
		}
		recipe := string(mk[loc[1]:])
		if end := strings.Index(recipe, "\n\n"); end >= 0 {
			recipe = recipe[:end]
		}
		if !strings.Contains(recipe, "runs/"+dir) && !strings.Contains(recipe, "runs/$(@:-demo=)-demo") && !strings.Contains(recipe, "scripts/") {
			t.Errorf("`make %s` does not build runs/%s:\n%s", target, dir, recipe)
		}
	}
}

package config

import (
	"strings"
	"testing"
)

// Values are taken as written or refused: a fraction for an integer key,
// a second YAML document, a key left empty under a recipe (which takes the
// recipe's value, not troupe's default) and a key with control characters
// (quoted in the message). Each case failed before: 2.5 ran as 2, the
// second document was dropped, the empty key got the default, the key was
// echoed raw.
func TestStrictValues(t *testing.T) {
	refused := []struct {
		name, yaml string
		sets       []string
		want       string
	}{
		{"fraction by --set", "", []string{"run.steps=2.5"}, "run.steps: 2.5 is not a whole number; the key takes an integer"},
		{"fraction in the file", "batch: {n: 4.5}\n", nil, "batch.n: 4.5 is not a whole number"},
		{"fraction of an unsigned key", "", []string{"run.seed=1.5"}, "run.seed: 1.5 is not a whole number; the key takes an non-negative integer"},
		{"fraction in a plug-in's section", "", []string{"env.math.procedural.train_size=10.5"}, "env.math.procedural.train_size: 10.5 is not a whole number"},
		{"fraction in a list item", "", []string{"agents[0].max_new_tokens=7.5"}, "agents[0].max_new_tokens: 7.5 is not a whole number"},
		{"infinity for an integer", "", []string{"eval.tasks=.inf"}, "eval.tasks"},
		{"a second document", "---\nrun: {steps: 9}\n", nil, "the file holds more than one YAML document (another starts at line 8, after ---)"},
		{"control characters in a key", "", []string{"run.st\x1beps=3"}, `run."st\x1beps": unknown key`},
	}
	for _, c := range refused {
		_, err := Parse([]byte(base(t)+c.yaml), c.sets)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
		if err != nil && strings.ContainsRune(err.Error(), 0x1b) {
			t.Errorf("%s: the message holds a raw escape character: %q", c.name, err)
		}
	}
	// whole numbers written as floats are whole numbers
	c, err := Parse([]byte(base(t)+"batch: {n: 8.0}\n"), []string{"run.steps=1e1"})
	if err != nil || c.Batch.N != 8 || c.Run.Steps != 10 {
		t.Fatalf("8.0 and 1e1: %v, %+v", err, c)
	}
	// an empty key takes the recipe's value (batch.n 8 under Dr. MAS's math
	// recipe), and troupe's default without a recipe (4)
	recipe := "recipe: drmas\nworkflow: {name: math-refine}\n"
	for _, doc := range []string{"batch:\n  n:\n", "batch: {n: ~}\n", "batch: {n: null}\n"} {
		c, err := Parse([]byte(base(t)+recipe+doc), nil)
		if err != nil || c.Batch.N != 8 {
			t.Errorf("%q under the recipe: batch.n %d (%v), want the recipe's 8", doc, c.Batch.N, err)
		}
		if _, set, _ := c.RecipeReport(); !contains(set, "batch.n") {
			t.Errorf("%q: the recipe report does not list batch.n as set by it: %v", doc, set)
		}
		c, err = Parse([]byte(base(t)+doc), nil)
		if err != nil || c.Batch.N != 4 {
			t.Errorf("%q without a recipe: batch.n %d (%v), want the default 4", doc, c.Batch.N, err)
		}
	}
}

package config

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// The AT-GRPO configs mirror PettingLLMs' recipe (docs/departures.md,
// "AT-GRPO"); the other configs leave the group filter off.
func TestATGRPOConfigsFollowTheReference(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "configs", "*.yaml"))
	for _, p := range paths {
		cfg := loadShipped(t, p)
		atgrpo := cfg.Workflow.Name == "tree" || filepath.Base(p)[:7] == "atgrpo-"
		f := cfg.Advantage.Filter
		switch {
		case atgrpo && f.LowestMeanFraction != 0.5:
			t.Errorf("%s: advantage.filter.lowest_mean_fraction %g, want the reference's 0.5", p, f.LowestMeanFraction)
		case !atgrpo && f.On():
			t.Errorf("%s: the group filter is on (%+v) outside an AT-GRPO config", p, f)
		}
	}
}

// loadShipped parses a shipped config as TestShippedConfigsValidate does:
// model directories unchecked, the dataset files it names created empty.
func loadShipped(t *testing.T, path string) *Config {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, m := range regexp.MustCompile(`(?m)^\s+(?:train|test|corpus|index):\s*(\S+)\s*$`).FindAllSubmatch(data, -1) {
		f := filepath.Join(dir, string(m[1]))
		os.MkdirAll(filepath.Dir(f), 0o755)
		os.WriteFile(f, nil, 0o644)
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	cfg, err := parse(data, nil, noModels)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return cfg
}

package config

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// Every config shipped in configs/ decodes strictly and validates. Model
// directories are not checked (as for a checkpoint's own config); the
// dataset files a config names are created empty in a scratch directory.
func TestShippedConfigsValidate(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "configs", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no configs found: %v", err)
	}
	fileKey := regexp.MustCompile(`(?m)^\s+(?:train|test|corpus|index):\s*(\S+)\s*$`)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(p), func(t *testing.T) {
			dir := t.TempDir()
			for _, m := range fileKey.FindAllSubmatch(data, -1) {
				f := filepath.Join(dir, string(m[1]))
				os.MkdirAll(filepath.Dir(f), 0o755)
				os.WriteFile(f, nil, 0o644)
			}
			wd, _ := os.Getwd()
			if err := os.Chdir(dir); err != nil {
				t.Fatal(err)
			}
			defer os.Chdir(wd)
			if _, err := parse(data, nil, noModels); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// `train plan` needs each model's config.json and nothing else: the Qwen3-4B
// config plans with a directory holding only config.json and no datasets,
// where a run's Load names the missing tokenizer; a missing config.json is
// still an error.
func TestLoadForPlanNeedsOnlyConfigJSON(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join("..", "configs", "drmas-math-qwen3-4b.yaml")
	set := []string{"models.qwen3_4b.path=" + dir}
	if _, err := LoadForPlan(cfg, set); err != nil {
		t.Fatalf("plan with only config.json: %v", err)
	}
	if _, err := Load(cfg, set); err == nil || !regexp.MustCompile(`tokenizer.*not found`).MatchString(err.Error()) {
		t.Fatalf("a run without the tokenizer: %v, want it named", err)
	}
	if _, err := LoadForPlan(cfg, []string{"models.qwen3_4b.path=" + t.TempDir()}); err == nil || !regexp.MustCompile(`no config.json`).MatchString(err.Error()) {
		t.Fatalf("plan without config.json: %v, want it named", err)
	}
}

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
			if _, err := parse(data, nil, true); err != nil {
				t.Fatal(err)
			}
		})
	}
}

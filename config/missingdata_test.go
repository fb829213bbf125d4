package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A shipped config whose datasets are missing names every missing file at
// once, in one line, with the `bin/train data` command that writes them
// (--out naming the directory the paths hang from); a path no command
// writes is named alone.
func TestMissingDatasetsNameTheirCommand(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "configs", "drmas-math-qwen3-4b.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	_, err = parse(data, nil, noModels)
	want := `env.math.test: file "data/drmas_math/test_sampled.parquet" not found; env.math.train: file "data/drmas_math/train.parquet" not found; bin/train data drmas-math --out . writes them (bin/train data list names every dataset)`
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v\nwant one line containing %q", err, want)
	}

	os.MkdirAll("data/drmas_math", 0o755)
	os.WriteFile("data/drmas_math/train.parquet", nil, 0o644)
	_, err = parse(data, nil, noModels)
	if err == nil || strings.Contains(err.Error(), "train.parquet") || !strings.Contains(err.Error(), "test_sampled.parquet") {
		t.Fatalf("with train.parquet there: %v", err)
	}

	dir := t.TempDir()
	_, err = parse(data, []string{"env.math.train=" + dir + "/data/drmas_math/train.parquet", "env.math.test=" + dir + "/data/pettingllms/AIME24.parquet"}, noModels)
	if err == nil || !strings.Contains(err.Error(), "bin/train data atgrpo-math --out "+dir+" and bin/train data drmas-math --out "+dir+" write them") {
		t.Fatalf("paths under another directory: %v", err)
	}

	_, err = parse(data, []string{"env.math.train=mine/train.parquet", "env.math.test=mine/test.parquet"}, noModels)
	if err == nil || !strings.HasSuffix(err.Error(), `env.math.train: file "mine/train.parquet" not found`) {
		t.Fatalf("paths no command writes: %v", err)
	}
}

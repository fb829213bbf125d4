package math

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzDataset writes data as a dataset file with the given extension and
// loads it: any input must give tasks with a question and an answer, or an
// error — never a panic.
func fuzzDataset(f *testing.F, ext string, seeds ...[]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "data"+ext)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		tasks, err := Load(path, Fields{})
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("empty error")
			}
			return
		}
		if len(tasks) == 0 {
			t.Fatal("no error and no tasks")
		}
		for _, task := range tasks {
			if task.Question == "" {
				t.Fatalf("a task without a question: %+v", task)
			}
		}
	})
}

func readSeed(f *testing.F, name string) []byte {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "math", name))
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// Run longer with: go test -run '^$' -fuzz=FuzzLoadJSONL ./rollout/env/math/
func FuzzLoadJSONL(f *testing.F) {
	fuzzDataset(f, ".jsonl", readSeed(f, "tiny.jsonl"),
		[]byte(`{"problem": "1+1", "solution": "\\boxed{2}", "id": 7}`+"\n"),
		[]byte(`{"question": {"text": "q"}, "answer": [1, 2]}`), []byte("\n\n{}\n"))
}

func FuzzLoadJSON(f *testing.F) {
	fuzzDataset(f, ".json", []byte(`[{"question": "What is 2+2?", "answer": "4"}]`),
		[]byte(`[{"problem": "x", "golden_answers": ["1", "2"]}, {"problem": "y", "golden_answers": 3}]`),
		[]byte(`{"question": "not an array"}`), []byte(`[]`))
}

func FuzzLoadParquet(f *testing.F) {
	fuzzDataset(f, ".parquet", readSeed(f, "tiny_flat.parquet"), readSeed(f, "tiny_verl.parquet"), []byte("PAR1\x00\x00\x00\x00PAR1"))
}

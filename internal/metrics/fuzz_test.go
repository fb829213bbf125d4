package metrics

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzJSONL feeds arbitrary bytes to the readers of the per-step logs
// (metrics.jsonl and samples.jsonl): an error, or records whose steps the
// truncation keeps below the resume step — never a panic.
// Run longer with: go test -run '^$' -fuzz=FuzzJSONL ./internal/metrics/
func FuzzJSONL(f *testing.F) {
	f.Add([]byte("{\"step\":1,\"time\":\"2026-01-01T00:00:00Z\",\"values\":{\"a\":1}}\n{\"step\":2,\"values\":{\"a\":-0.1}}\n"), 2)
	f.Add([]byte("{\"step\":1,\"agent\":\"solver\",\"reward\":0.5}\n{\"step\":3"), 1)
	f.Add([]byte("\n\n{}\n"), 0)
	f.Fuzz(func(t *testing.T, data []byte, next int) {
		path := filepath.Join(t.TempDir(), "log.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if recs, err := ReadJSONL(path); err == nil {
			for _, r := range recs {
				_ = r.Step
			}
		}
		if _, err := TruncateSteps(path, next); err != nil {
			return
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines, torn, err := splitLines(path, raw, anyStep)
		if err != nil || torn {
			t.Fatalf("after TruncateSteps the file should parse whole: torn=%v err=%v", torn, err)
		}
		for _, l := range lines {
			if l.step >= next {
				t.Fatalf("step %d kept, want < %d", l.step, next)
			}
		}
	})
}

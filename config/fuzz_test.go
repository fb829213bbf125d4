package config

import (
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary YAML and --set overrides to the config loader:
// an error, or a config that validated — never a panic.
// Run longer with: go test -run '^$' -fuzz=FuzzParse ./config/
func FuzzParse(f *testing.F) {
	f.Add([]byte("run: {steps: 3}\n"), "optim.lr=1e-6")
	f.Add([]byte("agents:\n  - {name: a, preset: math-solver}\n"), "agents[0].name=b")
	f.Add([]byte("models: {m: {path: /nonexistent}}\nbatch: {n: 4}\n"), "batch.n=")
	f.Add([]byte("&a [*a]"), "x.y.z=1")
	f.Add([]byte("run: !!binary aGVsbG8=\n"), "agents.7.optim.lr=.nan")
	f.Fuzz(func(t *testing.T, data []byte, set string) {
		var sets []string
		if set != "" {
			sets = strings.Split(set, "\x00")
		}
		c, err := Parse(data, sets)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if _, err := c.Marshal(); err != nil {
			t.Fatalf("a validated config does not marshal: %v", err)
		}
	})
}

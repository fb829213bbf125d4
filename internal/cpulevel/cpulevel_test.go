package cpulevel

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEachRunsTheLesserLevels: the machine's own run starts one child per
// lesser level, each with that level's environment; the children leave a
// file named after their level holding the pinning variables they saw,
// which the parent then reads.
func TestEachRunsTheLesserLevels(t *testing.T) {
	const dirEnv = "TROUPE_TEST_CPULEVEL_DIR"
	if dir := os.Getenv(dirEnv); dir != "" && os.Getenv(childEnv) != "" {
		Each(t) // a child: returns at once
		var seen []string
		for _, k := range pinEnv {
			seen = append(seen, k+"="+os.Getenv(k))
		}
		if err := os.WriteFile(filepath.Join(dir, os.Getenv(childEnv)), []byte(strings.Join(seen, " ")), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, k := range append(pinEnv, cudaEnv) {
		if os.Getenv(k) != "" {
			t.Skipf("%s is set: this run starts no other level", k)
		}
	}
	dir := t.TempDir()
	t.Setenv(dirEnv, dir)
	Each(t)
	all := Levels()
	for _, l := range all[min(1, len(all)):] {
		got, err := os.ReadFile(filepath.Join(dir, l.Name))
		if err != nil {
			t.Errorf("level %s: no child ran: %v", l.Name, err)
			continue
		}
		var want []string
		for _, kv := range l.Env {
			if k, _, _ := strings.Cut(kv, "="); slices.Contains(pinEnv, k) {
				want = append(want, kv)
			}
		}
		if string(got) != strings.Join(want, " ") {
			t.Errorf("level %s: the child saw %s, want %s", l.Name, got, strings.Join(want, " "))
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != max(0, len(all)-1) {
		t.Errorf("%d children ran, want one per lesser level of %v", len(entries), all)
	}
}

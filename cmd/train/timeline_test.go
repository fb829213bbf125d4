package main

// A resume from an older checkpoint with --force abandons the later
// timeline before its first new step: the later checkpoints and the export
// are gone even when the resumed run stops before writing one of its own,
// so the next plain --resume continues the new timeline, never the old.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/ckpt"
	"troupe/internal/metrics"
)

func TestForcedRewindAbandonsTheLaterTimeline(t *testing.T) {
	if testing.Short() {
		t.Skip("training runs; skipped with -short")
	}
	d := t.TempDir()
	base := filepath.Join(d, "tiny")
	cli(t, "init", base, "--merges", "0")
	cfg := filepath.Join(d, "run.yaml")
	run := filepath.Join(d, "run")
	writeTestFile(t, cfg, []byte(strings.ReplaceAll(strings.ReplaceAll(e2eConfig, "OUT", run), "MODEL", base)))
	cli(t, "-c", cfg, "-q", "--set", "run.steps=3", "--set", "checkpoint.every=1")
	ck1 := filepath.Join(run, "checkpoints", ckpt.DirName(1))

	// the forced resume stops before its first new step (here: run.steps
	// is its checkpoint's step, as an interrupt right after the start)
	out := cli(t, "--resume="+ck1, "-q", "--force", "--set", "run.steps=1", "--set", "export.at_end=false")
	if !strings.Contains(out, "resume --force: deleted what resuming from step 1 abandons") {
		t.Errorf("the forced resume did not say what it deleted:\n%s", tail(out, 800))
	}
	entries, err := ckpt.List(filepath.Join(run, "checkpoints"))
	if err != nil || len(entries) != 1 || entries[0].Step != 1 {
		t.Fatalf("checkpoints after the forced resume: %v %v, want step 1 alone", entries, err)
	}
	if _, err := os.Stat(filepath.Join(run, "export")); err == nil {
		t.Errorf("the old timeline's export (step 3) survived the forced resume")
	}
	recs, err := metrics.ReadJSONL(filepath.Join(run, "metrics.jsonl"))
	if err != nil || len(recs) != 1 || recs[0].Step != 1 {
		t.Errorf("metrics after the forced resume: %d records (%v), want step 1 alone", len(recs), err)
	}
	// a plain resume continues from step 1: the new timeline
	out = cli(t, "--resume="+run, "-q", "--set", "run.steps=2", "--set", "export.at_end=false")
	if !strings.Contains(out, "at step 1") {
		t.Errorf("the next plain resume did not continue from step 1:\n%s", tail(out, 800))
	}
}

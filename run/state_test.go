package run

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/ckpt"
)

func TestTrainStateBatchNames(t *testing.T) {
	for _, doc := range []string{
		`{"PromptsPerStep": 8, "N": 4, "MaxBatchRows": 64, "Shuffle": true}`,     // before 2026-11
		`{"prompts_per_step": 8, "n": 4, "max_batch_rows": 64, "shuffle": true}`, // now
	} {
		var b batchState
		if err := json.Unmarshal([]byte(doc), &b); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if want := (batchState{PromptsPerStep: 8, N: 4, MaxBatchRows: 64, Shuffle: true}); b != want {
			t.Errorf("%s: got %+v, want %+v", doc, b, want)
		}
	}
	out, err := json.Marshal(batchState{PromptsPerStep: 8, N: 4})
	if err != nil || !strings.Contains(string(out), `"prompts_per_step":8`) {
		t.Errorf("written as %s (%v), want snake_case names", out, err)
	}
	var b batchState
	if err := json.Unmarshal([]byte(`{"prompts": 8}`), &b); err == nil {
		t.Error("an unknown batch field was accepted")
	}
}

// --resume=DIR takes a checkpoint, or the newest checkpoint of a run
// directory or of its checkpoints directory.
func TestResumeFindsTheNewestCheckpointOfARun(t *testing.T) {
	run := t.TempDir()
	root := filepath.Join(run, "checkpoints")
	for _, step := range []int{2, 4} {
		w, err := ckpt.Begin(root, step)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(w.Path("x"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{run, root, filepath.Join(root, ckpt.DirName(4))} {
		cp, err := findCheckpoint(dir, "")
		if err != nil {
			t.Fatalf("--resume=%s: %v", dir, err)
		}
		if cp.Step != 4 {
			t.Errorf("--resume=%s: step %d, want the newest, 4", dir, cp.Step)
		}
	}
	if cp, err := findCheckpoint(filepath.Join(root, ckpt.DirName(2)), ""); err != nil || cp.Step != 2 {
		t.Errorf("an older checkpoint named itself: %v, %v", cp, err)
	}
	if _, err := findCheckpoint(t.TempDir(), ""); err == nil {
		t.Errorf("an empty directory: want an error")
	}
}

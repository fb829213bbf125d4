package ckpt

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"troupe/torch"
)

// LoadModelState checks the optimizer state before it copies any weight:
// a checkpoint whose weights fit but whose optimizer state does not changes
// neither the model nor the optimizer.
func TestLoadModelStateChecksBothFirst(t *testing.T) {
	saved := startRun(t, 1, 7, torch.BFloat16, true)
	saved.step(t)
	dir := filepath.Join(t.TempDir(), ModelStateDir("policy"))
	if err := SaveModelState(dir, saved.m, saved.opt); err != nil {
		t.Fatal(err)
	}
	target := startRun(t, 2, 7, torch.BFloat16, false) // no master weights
	weights, state := weightBytes(target.m), optimizerDump(target.opt)
	err := LoadModelState(dir, target.m, target.opt)
	if err == nil || !strings.Contains(err.Error(), "master copy") {
		t.Fatalf("LoadModelState: %v, want the master-copy mismatch", err)
	}
	if diff := diffBytes(weights, weightBytes(target.m)); len(diff) > 0 {
		t.Errorf("a refused load changed the weights %v", diff)
	}
	if !reflect.DeepEqual(state, optimizerDump(target.opt)) {
		t.Error("a refused load changed the optimizer")
	}
}

func TestModelStateWithoutOptimizer(t *testing.T) {
	r := startRun(t, 1, 7, torch.Float32, false)
	r.step(t)
	dir := filepath.Join(t.TempDir(), "m")
	if err := SaveModelState(dir, r.m, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, OptimizerFileName)); !os.IsNotExist(err) {
		t.Fatalf("weights-only save wrote %s (%v)", OptimizerFileName, err)
	}
	other := startRun(t, 2, 7, torch.Float32, false)
	err := LoadModelState(dir, other.m, other.opt)
	if err == nil || !strings.Contains(err.Error(), "saved without optimizer state") {
		t.Fatalf("resume from a weights-only save: %v", err)
	}
	if err := LoadModelState(dir, other.m, nil); err != nil {
		t.Fatal(err)
	}
	if diff := diffBytes(weightBytes(r.m), weightBytes(other.m)); len(diff) > 0 {
		t.Errorf("weights differ after a weights-only load: %v", diff)
	}
}

func TestCheckModelName(t *testing.T) {
	for name, ok := range map[string]bool{"policy": true, "solver-7b": true, "": false, ".": false, "..": false, "a/b": false, `a\b`: false, ".hidden": false} {
		if err := CheckModelName(name); (err == nil) != ok {
			t.Errorf("CheckModelName(%q) = %v", name, err)
		}
	}
	if got := ModelStateDir("policy"); got != "models/policy" {
		t.Errorf("ModelStateDir = %q", got)
	}
}

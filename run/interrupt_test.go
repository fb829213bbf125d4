package run

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"troupe/model"
	"troupe/torch"
)

// terminate sends this process SIGTERM and waits until the command's
// watcher has said it will stop.
func terminate(t *testing.T, out *lockedWriter, buf *bytes.Buffer) {
	t.Helper()
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		out.mu.Lock()
		said := strings.Contains(buf.String(), "interrupt again to quit now")
		out.mu.Unlock()
		if said {
			return
		}
	}
	t.Fatal("the command did not take the signal")
}

// SIGTERM stops export after the model being written with nothing
// installed (the previous export stays whole), and sft after its step with
// the model trained so far written; both say what they did.
func TestExportAndSFTStopOnSignal(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d := t.TempDir()
	base := filepath.Join(d, "base")
	initTiny(t, base, 5)
	cfgPath := filepath.Join(d, "run.yaml")
	yaml := strings.ReplaceAll(strings.ReplaceAll(tinyConfigYAML, "OUT", filepath.Join(d, "run")), "MODEL", base)
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := (&Train{Config: cfgPath, Sets: []string{"run.steps=1", "checkpoint.every=1", "export.at_end=false"}, Quiet: true}).Run(io.Discard); err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(d, "run", "checkpoints", "step-000001")
	exp := filepath.Join(d, "exp")
	if err := (&Export{Checkpoint: ck, Out: exp}).Run(io.Discard, nil); err != nil {
		t.Fatal(err)
	}
	weights := func() []byte {
		b, err := os.ReadFile(filepath.Join(exp, "solver", "model.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	before := weights()

	var buf bytes.Buffer
	out := &lockedWriter{w: &buf}
	staged := 0
	afterStagedModel = func() {
		if staged++; staged == 1 {
			terminate(t, out, &buf)
		}
	}
	err := (&Export{Checkpoint: ck, Out: exp, Force: true, Dtype: "bfloat16"}).Run(out, nil)
	afterStagedModel = func() {}
	if err == nil || !strings.Contains(err.Error(), "export: interrupted by terminated before every model was written: nothing was written to "+exp) {
		t.Fatalf("interrupted export: %v\n%s", err, buf.String())
	}
	if !bytes.Equal(weights(), before) {
		t.Errorf("the interrupted export replaced %s", filepath.Join(exp, "solver"))
	}
	if left, _ := filepath.Glob(filepath.Join(exp, ".*")); len(left) != 0 {
		t.Errorf("the interrupted export left %v", left)
	}

	buf.Reset()
	sft := filepath.Join(d, "sft")
	afterSFTStep = func(n int) {
		if n == 3 {
			terminate(t, out, &buf)
		}
	}
	err = (&SFT{Config: cfgPath, Out: sft, Tasks: 16, Steps: 50, Batch: 4, Lr: 1e-3, PCorrect: 1, Seed: 1, LogEvery: 100}).Run(out, nil)
	afterSFTStep = func(int) {}
	want := "sft: interrupted by terminated: model tiny took 3 of its 50 steps (written to " + filepath.Join(sft, "tiny") + " as trained so far); not trained: none"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("interrupted sft: %v, want %q\n%s", err, want, buf.String())
	}
	m, err := model.Load(filepath.Join(sft, "tiny"), model.Options{DType: torch.Float32, Device: torch.CPU})
	if err != nil {
		t.Fatalf("the model sft wrote on SIGTERM: %v", err)
	}
	m.Free()
}

package ckpt

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"troupe/safetensors"
	"troupe/torch"
)

// A checkpoint whose weights hold a NaN (a run that diverged before its
// save) is refused with the tensor named, before any weight of the live
// model is overwritten, even though its manifest verifies.
func TestLoadWeightsRefusesNonFinite(t *testing.T) {
	m := newModel(t, tinyConfig(), 1, torch.Float32)
	dir := filepath.Join(t.TempDir(), "w")
	if err := SaveWeights(dir, m); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "model.safetensors")
	f, err := safetensors.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	names := f.Names()
	last := names[len(names)-1] // the last tensor: the copy would have overwritten the rest first
	var out []safetensors.Tensor
	for _, n := range names {
		info, _ := f.Info(n)
		data, _ := f.Bytes(n)
		data = append([]byte(nil), data...)
		if n == last {
			binary.LittleEndian.PutUint32(data[4:], math.Float32bits(float32(math.Inf(1))))
		}
		out = append(out, safetensors.TensorFromBytes(n, info.DType, info.Shape, data))
	}
	f.Close()
	if err := safetensors.Write(path, out, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	into := newModel(t, tinyConfig(), 2, torch.Float32)
	before := weightBytes(into)
	err = LoadWeights(dir, into)
	if err == nil || !strings.Contains(err.Error(), last+" holds +Inf at element 1") {
		t.Fatalf("LoadWeights: %v, want the tensor %s named", err, last)
	}
	if diff := diffBytes(before, weightBytes(into)); len(diff) > 0 {
		t.Errorf("a refused load changed %v", diff)
	}
}

// An optimizer state with a NaN moment (saved after a diverged step) is
// refused with the tensor named, before the live optimizer changes.
func TestLoadOptimizerRefusesNonFinite(t *testing.T) {
	r := startRun(t, 1, 7, torch.Float32, false)
	r.step(t)
	names, err := OptimizerNames(r.m, r.opt)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), OptimizerFileName)
	if err := SaveOptimizer(path, r.opt, names); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	target := names[2] + expAvgSqSuffix
	var out []safetensors.Tensor
	for _, n := range f.Names() {
		info, _ := f.Info(n)
		data, _ := f.Bytes(n)
		data = append([]byte(nil), data...)
		if n == target {
			binary.LittleEndian.PutUint32(data[8:], math.Float32bits(float32(math.NaN())))
		}
		out = append(out, safetensors.TensorFromBytes(n, info.DType, info.Shape, data))
	}
	meta := f.Metadata()
	f.Close()
	if err := safetensors.Write(path, out, meta); err != nil {
		t.Fatal(err)
	}
	before := optimizerDump(r.opt)
	err = LoadOptimizer(path, r.opt, names)
	if err == nil || !strings.Contains(err.Error(), target+" holds NaN at element 2") {
		t.Fatalf("LoadOptimizer: %v, want %s named", err, target)
	}
	if after := optimizerDump(r.opt); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Error("a refused load changed the optimizer")
	}
}

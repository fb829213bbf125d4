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

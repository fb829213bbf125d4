package model

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"troupe/safetensors"
	"troupe/torch"
)

// rewriteTensor rewrites dir/model.safetensors with one tensor replaced by
// what edit makes of it (its dtype and bytes).
func rewriteTensor(t *testing.T, dir, name string, edit func(safetensors.TensorInfo, []byte) (safetensors.DType, []byte)) {
	t.Helper()
	path := filepath.Join(dir, "model.safetensors")
	f, err := safetensors.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []safetensors.Tensor
	for _, n := range f.Names() {
		info, _ := f.Info(n)
		data, err := f.Bytes(n)
		if err != nil {
			t.Fatal(err)
		}
		data = append([]byte(nil), data...)
		dt := info.DType
		if n == name {
			dt, data = edit(info, data)
		}
		out = append(out, safetensors.TensorFromBytes(n, dt, info.Shape, data))
	}
	f.Close()
	if err := safetensors.Write(path, out, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
}

// TestLoadRefusesWeightsItCannotUse: an integer dtype, a NaN or an infinity
// in any tensor is refused at load with the tensor named; half precision on
// the CPU is refused at load with the dtype named.
func TestLoadRefusesWeightsItCannotUse(t *testing.T) {
	noLeaks(t)
	m := newTiny(t, Qwen3, 3, cpu32)
	for _, c := range []struct {
		name   string
		tensor string
		edit   func(safetensors.TensorInfo, []byte) (safetensors.DType, []byte)
		want   string
	}{
		{"int32 weights", "model.layers.1.mlp.up_proj.weight", func(_ safetensors.TensorInfo, b []byte) (safetensors.DType, []byte) {
			return safetensors.I32, b // same size: int32 where the header said F32
		}, "model.layers.1.mlp.up_proj.weight is stored as I32"},
		{"NaN", "model.layers.0.self_attn.k_proj.weight", func(_ safetensors.TensorInfo, b []byte) (safetensors.DType, []byte) {
			binary.LittleEndian.PutUint32(b[4*37:], math.Float32bits(float32(math.NaN())))
			return safetensors.F32, b
		}, "model.layers.0.self_attn.k_proj.weight holds NaN at element 37"},
		{"infinity in a norm", "model.norm.weight", func(_ safetensors.TensorInfo, b []byte) (safetensors.DType, []byte) {
			binary.LittleEndian.PutUint32(b[4*5:], math.Float32bits(float32(math.Inf(-1))))
			return safetensors.F32, b
		}, "model.norm.weight holds -Inf at element 5"},
	} {
		dir := t.TempDir()
		if err := m.Save(dir, torch.Float32, 0); err != nil {
			t.Fatal(err)
		}
		rewriteTensor(t, dir, c.tensor, c.edit)
		loaded, err := Load(dir, cpu32)
		if err == nil {
			loaded.Free()
			t.Errorf("%s: loaded", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// the same weights, untouched, load
	dir := t.TempDir()
	if err := m.Save(dir, torch.BFloat16, 0); err != nil {
		t.Fatal(err)
	}
	good, err := Load(dir, Options{DType: torch.BFloat16, Device: torch.CPU})
	if err != nil {
		t.Fatalf("clean bfloat16 weights: %v", err)
	}
	good.Free()
	// half precision on the CPU: at load, naming the dtype and the fix
	for _, load := range []func() (*Model, error){
		func() (*Model, error) { return Load(dir, Options{DType: torch.Float16, Device: torch.CPU}) },
		func() (*Model, error) {
			return New(tinyConfig(Qwen2), 1, Options{DType: torch.Float16, Device: torch.CPU})
		},
		func() (*Model, error) {
			return New(tinyConfig(Qwen2), 1, Options{DType: torch.Int32, Device: torch.CPU})
		},
	} {
		h, err := load()
		if err == nil {
			h.Free()
			t.Error("loaded in a dtype the CPU forward cannot run")
			continue
		}
		if !strings.Contains(err.Error(), "dtype") || !strings.Contains(err.Error(), "bfloat16") {
			t.Errorf("%v: should name the dtype and bfloat16", err)
		}
	}
}

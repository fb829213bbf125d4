package ckpt

import (
	"path/filepath"
	"strings"
	"testing"

	"troupe/safetensors"
	"troupe/torch"
)

func draw(g *torch.Generator) []float32 {
	s := torch.NewScope()
	defer s.Close()
	return torch.Rand([]int64{8}, torch.Float32, torch.CPU, g).Float32s()
}

// Restoring a saved state makes a generator seeded differently draw what
// the saved one drew next.
func TestGeneratorsRoundTrip(t *testing.T) {
	data, sample := torch.NewGenerator(torch.CPU, 1), torch.NewGenerator(torch.CPU, 2)
	defer data.Free()
	defer sample.Free()
	draw(data)
	draw(sample)
	draw(sample)
	path := filepath.Join(t.TempDir(), RNGFileName)
	checkNoLeak(t, "SaveGenerators", func() {
		if err := SaveGenerators(path, map[string]*torch.Generator{"data": data, "sample": sample}); err != nil {
			t.Fatal(err)
		}
	})
	wantData, wantSample := draw(data), draw(sample)

	a, b := torch.NewGenerator(torch.CPU, 100), torch.NewGenerator(torch.CPU, 200)
	defer a.Free()
	defer b.Free()
	checkNoLeak(t, "LoadGenerators", func() {
		if err := LoadGenerators(path, map[string]*torch.Generator{"data": a, "sample": b}); err != nil {
			t.Fatal(err)
		}
	})
	if got := draw(a); !equalFloats(got, wantData) {
		t.Errorf("restored data generator draws %v, want %v", got, wantData)
	}
	if got := draw(b); !equalFloats(got, wantSample) {
		t.Errorf("restored sample generator draws %v, want %v", got, wantSample)
	}
	f, err := safetensors.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Metadata()["seed.data"] != "1" || f.Metadata()["seed.sample"] != "2" {
		t.Errorf("metadata %v, want the seeds", f.Metadata())
	}
}

func TestLoadGeneratorsRefusals(t *testing.T) {
	g := torch.NewGenerator(torch.CPU, 1)
	defer g.Free()
	dir := t.TempDir()
	path := filepath.Join(dir, RNGFileName)
	if err := SaveGenerators(path, map[string]*torch.Generator{"data": g}); err != nil {
		t.Fatal(err)
	}
	odd := filepath.Join(dir, "odd.safetensors")
	if err := safetensors.Write(odd, []safetensors.Tensor{safetensors.TensorFromBytes("data", safetensors.U8, []int64{16}, make([]byte, 16))},
		map[string]string{"format": rngFormat}); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.safetensors")
	if err := safetensors.Write(other, nil, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	h := torch.NewGenerator(torch.CPU, 2)
	defer h.Free()
	for _, tc := range []struct {
		name string
		path string
		gens map[string]*torch.Generator
		want string
	}{
		{"missing generator", path, map[string]*torch.Generator{"data": h, "sample": h}, `no state for generator "sample"`},
		{"extra generator", path, map[string]*torch.Generator{}, "state for generators not given: data"},
		{"other device's state", odd, map[string]*torch.Generator{"data": h}, `generator "data": saved state is U8 [16], this generator's is U8 [`},
		{"not a generator file", other, map[string]*torch.Generator{"data": h}, "not a generator state file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := draw(cloneOf(t, h))
			err := LoadGenerators(tc.path, tc.gens)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("LoadGenerators: %v, want an error containing %q", err, tc.want)
			}
			if after := draw(cloneOf(t, h)); !equalFloats(before, after) {
				t.Error("a refused load changed the generator")
			}
		})
	}
}

// cloneOf returns a new generator in g's state, so that drawing from it
// leaves g as it is.
func cloneOf(t *testing.T, g *torch.Generator) *torch.Generator {
	t.Helper()
	s := torch.NewScope()
	defer s.Close()
	c := torch.NewGenerator(torch.CPU, 0)
	t.Cleanup(c.Free)
	c.SetState(g.State())
	return c
}

func equalFloats(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

package pyref

// fixtures.go — the reference fixtures tests read: transformers' tiny models
// with their outputs (scripts/gpu/hf_reference.py), and a reader for the
// safetensors files the reference scripts write.

import (
	"encoding/binary"
	"fmt"
	"os"
	"testing"

	"troupe/safetensors"
)

// HFFixturesEnv names a folder of fixtures written earlier by
// `hf_reference.py fixtures` (e.g. on a GPU machine); tests read it instead
// of writing their own.
const HFFixturesEnv = "TROUPE_HF_FIXTURES"

// HFFixtures returns a folder of transformers fixtures: HFFixturesEnv when
// set, else a temp dir that the reference environment fills now (a few
// seconds on the CPU; skipped or failed as Python decides when there is no
// environment).
func HFFixtures(t testing.TB) string {
	t.Helper()
	if root := os.Getenv(HFFixturesEnv); root != "" {
		return root
	}
	root := t.TempDir()
	out := Run(t, "scripts/gpu/hf_reference.py", "fixtures", root)
	t.Logf("hf_reference.py fixtures:\n%s", out)
	return root
}

// Tensors is a safetensors file read whole: float tensors as float32,
// integer tensors as int64, each with its shape, and the string metadata.
type Tensors struct {
	Path   string
	Floats map[string][]float32
	Ints   map[string][]int64
	Shapes map[string][]int64
	Meta   map[string]string
}

// ReadTensors reads every tensor of a safetensors file.
func ReadTensors(path string) (*Tensors, error) {
	f, err := safetensors.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := &Tensors{Path: path, Floats: map[string][]float32{}, Ints: map[string][]int64{},
		Shapes: map[string][]int64{}, Meta: f.Metadata()}
	for _, name := range f.Names() {
		info, _ := f.Info(name)
		data, err := f.Bytes(name)
		if err != nil {
			return nil, err
		}
		r.Shapes[name] = info.Shape
		switch info.DType {
		case safetensors.I64:
			v := make([]int64, len(data)/8)
			for i := range v {
				v[i] = int64(binary.LittleEndian.Uint64(data[8*i:]))
			}
			r.Ints[name] = v
		default:
			v, err := safetensors.DecodeFloat32s(info.DType, data)
			if err != nil {
				return nil, fmt.Errorf("%s: tensor %s: %w", path, name, err)
			}
			r.Floats[name] = v
		}
	}
	return r, nil
}

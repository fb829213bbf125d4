package safetensors

import (
	"path/filepath"
	"testing"
)

func fingerprintOf(t *testing.T, tensors map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	var ts []Tensor
	for name, data := range tensors {
		ts = append(ts, TensorFromBytes(name, U8, []int64{int64(len(data))}, data))
	}
	if err := Write(filepath.Join(dir, SingleFileName), ts, nil); err != nil {
		t.Fatal(err)
	}
	m, err := OpenModelDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	fp, err := m.Fingerprint()
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

// The same weights give the same fingerprint whatever the file; a changed
// value of a small tensor, a changed window of a large one, a renamed or
// reshaped tensor give another.
func TestFingerprintTellsWeightsApart(t *testing.T) {
	small := []byte{1, 2, 3, 4}
	large := make([]byte, 1<<20)
	for i := range large {
		large[i] = byte(i * 7)
	}
	base := fingerprintOf(t, map[string][]byte{"a": small, "b": large})
	if again := fingerprintOf(t, map[string][]byte{"b": large, "a": small}); again != base {
		t.Fatalf("the same weights written again: %s, want %s", again, base)
	}
	edit := func(b []byte, at int) []byte {
		c := append([]byte(nil), b...)
		c[at]++
		return c
	}
	for name, tensors := range map[string]map[string][]byte{
		"a value of a small tensor":          {"a": edit(small, 2), "b": large},
		"the last byte of a large tensor":    {"a": small, "b": edit(large, len(large)-1)},
		"a byte in a middle window":          {"a": small, "b": edit(large, 8*(len(large)-4096)/15+100)},
		"a renamed tensor":                   {"c": small, "b": large},
		"a shorter tensor":                   {"a": small[:3], "b": large},
		"the first byte of the large tensor": {"a": small, "b": edit(large, 0)},
	} {
		if fp := fingerprintOf(t, tensors); fp == base {
			t.Errorf("%s: same fingerprint", name)
		}
	}
}

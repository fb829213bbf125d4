package safetensors

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// f32Bytes is little-endian float32 data.
func f32Bytes(values ...float32) []byte {
	out := make([]byte, 4*len(values))
	for i, v := range values {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
	}
	return out
}

func writeAndRead(t *testing.T, tensors []Tensor, metadata map[string]string) ([]byte, *File) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.safetensors")
	if err := Write(path, tensors, metadata); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return raw, f
}

// The expected bytes below are the outputs asserted by the reference
// implementation's own serialization tests (a single F32 tensor; an empty
// file with and without metadata; a name length that forces padding).
func TestWriteMatchesReferenceBytes(t *testing.T) {
	data := f32Bytes(0, 1, 2, 3, 4, 5)
	cases := []struct {
		name     string
		tensors  []Tensor
		metadata map[string]string
		header   string
	}{
		{"one tensor", []Tensor{TensorFromBytes("attn.0", F32, []int64{1, 2, 3}, data)}, nil,
			`{"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}}`},
		{"forced padding", []Tensor{TensorFromBytes("attn0", F32, []int64{1, 1, 2, 3}, data)}, nil,
			`{"attn0":{"dtype":"F32","shape":[1,1,2,3],"data_offsets":[0,24]}}       `},
		{"empty", nil, nil, `{}      `},
		{"empty with metadata", nil, map[string]string{"framework": "pt"},
			`{"__metadata__":{"framework":"pt"}}     `},
	}
	for _, c := range cases {
		raw, _ := writeAndRead(t, c.tensors, c.metadata)
		want := binary.LittleEndian.AppendUint64(nil, uint64(len(c.header)))
		want = append(want, c.header...)
		for _, tensor := range c.tensors {
			b, _ := tensor.Bytes()
			want = append(want, b...)
		}
		if !bytes.Equal(raw, want) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, raw, want)
		}
	}
}

// Tensors are laid out by dtype, largest first, then by name, so that each
// starts at a multiple of its element size.
func TestWriteOrderAndAlignment(t *testing.T) {
	tensors := []Tensor{
		TensorFromBytes("z.mask", Bool, []int64{3}, []byte{1, 0, 1}),
		TensorFromBytes("b.weight", BF16, []int64{3}, make([]byte, 6)),
		TensorFromBytes("a.weight", BF16, []int64{1}, make([]byte, 2)),
		TensorFromBytes("c.ids", I64, []int64{2}, make([]byte, 16)),
		TensorFromBytes("d.scale", F32, nil, make([]byte, 4)),
	}
	raw, f := writeAndRead(t, tensors, nil)
	wantHeader := `{"c.ids":{"dtype":"I64","shape":[2],"data_offsets":[0,16]},` +
		`"d.scale":{"dtype":"F32","shape":[],"data_offsets":[16,20]},` +
		`"a.weight":{"dtype":"BF16","shape":[1],"data_offsets":[20,22]},` +
		`"b.weight":{"dtype":"BF16","shape":[3],"data_offsets":[22,28]},` +
		`"z.mask":{"dtype":"BOOL","shape":[3],"data_offsets":[28,31]}}`
	n := binary.LittleEndian.Uint64(raw)
	if got := strings.TrimRight(string(raw[8:8+n]), " "); got != wantHeader {
		t.Errorf("header\n got %s\nwant %s", got, wantHeader)
	}
	if n%8 != 0 {
		t.Errorf("header length %d is not a multiple of 8", n)
	}
	for _, name := range f.Names() {
		info, _ := f.Info(name)
		if size := int64(info.DType.Size()); (8+int64(n)+info.Begin)%size != 0 {
			t.Errorf("tensor %s (%v) starts at file offset %d, not aligned to %d", name, info.DType, 8+int64(n)+info.Begin, size)
		}
	}
}

// Every dtype, 0-d and empty tensors, and metadata survive a round trip.
func TestRoundTripAllDTypes(t *testing.T) {
	var tensors []Tensor
	want := map[string][]byte{}
	wantShape := map[string][]int64{}
	seed := byte(1)
	add := func(name string, d DType, shape []int64) {
		size, err := ByteSize(d, shape)
		if err != nil {
			t.Fatal(err)
		}
		data := make([]byte, size)
		for i := range data {
			data[i] = seed
			seed = seed*31 + 7
		}
		tensors = append(tensors, TensorFromBytes(name, d, shape, data))
		want[name], wantShape[name] = data, shape
	}
	for d := Bool; d < numDTypes; d++ {
		add("t."+d.String(), d, []int64{2, 4})
		if d.Bits()%8 == 0 { // a lone F4 or F6 element is not a whole byte
			add("scalar."+d.String(), d, []int64{})
		}
		add("empty."+d.String(), d, []int64{3, 0})
	}
	metadata := map[string]string{"format": "pt", "note": "quotes \" and \\ and \n and é"}
	_, f := writeAndRead(t, tensors, metadata)

	if f.Len() != len(tensors) {
		t.Fatalf("read %d tensors, wrote %d", f.Len(), len(tensors))
	}
	for _, name := range f.Names() {
		info, ok := f.Info(name)
		if !ok {
			t.Fatalf("Info(%q) missing", name)
		}
		if !reflect.DeepEqual(info.Shape, wantShape[name]) && !(len(info.Shape) == 0 && len(wantShape[name]) == 0) {
			t.Errorf("%s: shape %v, want %v", name, info.Shape, wantShape[name])
		}
		got, err := f.Bytes(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want[name]) {
			t.Errorf("%s: bytes % x, want % x", name, got, want[name])
		}
		if got == nil {
			t.Errorf("%s: Bytes returned nil, want a non-nil (possibly empty) slice", name)
		}
	}
	if !reflect.DeepEqual(f.Metadata(), metadata) {
		t.Errorf("metadata %v, want %v", f.Metadata(), metadata)
	}
	if info, _ := f.Info("scalar.F32"); info.NumElements() != 1 || info.ByteSize() != 4 {
		t.Errorf("0-d F32: %d elements, %d bytes; want 1, 4", info.NumElements(), info.ByteSize())
	}
	if _, err := f.Bytes("nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("Bytes(nope) error = %v, want one naming the tensor", err)
	}
}

func TestBytesAfterCloseIsAnError(t *testing.T) {
	_, f := writeAndRead(t, []Tensor{TensorFromBytes("a", U8, []int64{1}, []byte{7})}, nil)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Bytes("a"); err == nil {
		t.Error("Bytes after Close succeeded")
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// The Bytes callback runs once per tensor, in file order, while writing.
func TestWriteStreamsEachTensorOnce(t *testing.T) {
	var calls []string
	mk := func(name string, d DType, n int64) Tensor {
		return Tensor{Name: name, DType: d, Shape: []int64{n}, Bytes: func() ([]byte, error) {
			calls = append(calls, name)
			return make([]byte, n*int64(d.Size())), nil
		}}
	}
	path := filepath.Join(t.TempDir(), "s.safetensors")
	if err := Write(path, []Tensor{mk("b", U8, 3), mk("a", U8, 2), mk("c", F32, 1)}, nil); err != nil {
		t.Fatal(err)
	}
	if want := []string{"c", "a", "b"}; !reflect.DeepEqual(calls, want) {
		t.Errorf("Bytes called for %v, want %v (file order, once each)", calls, want)
	}
}

// A failing or lying producer leaves the old file untouched and no
// temporary file behind.
func TestWriteIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.safetensors")
	old := []Tensor{TensorFromBytes("w", F32, []int64{2}, f32Bytes(1, 2))}
	if err := Write(path, old, nil); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)

	boom := errors.New("device lost")
	failing := []Tensor{
		TensorFromBytes("a", F32, []int64{1}, f32Bytes(9)),
		{Name: "b", DType: F32, Shape: []int64{1}, Bytes: func() ([]byte, error) { return nil, boom }},
	}
	err := Write(path, failing, nil)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), `"b"`) || !strings.Contains(err.Error(), path) {
		t.Errorf("error = %v, want the producer's error naming the tensor and the file", err)
	}
	short := []Tensor{{Name: "s", DType: F32, Shape: []int64{2}, Bytes: func() ([]byte, error) { return make([]byte, 7), nil }}}
	if err := Write(path, short, nil); err == nil || !strings.Contains(err.Error(), "returned 7 bytes") || !strings.Contains(err.Error(), "needs 8") {
		t.Errorf("error = %v, want one saying 7 bytes were returned and 8 are needed", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("a failed Write changed the existing file")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want only m.safetensors", names)
	}
}

func TestWriteRejectsBadInput(t *testing.T) {
	ok := func() ([]byte, error) { return nil, nil }
	cases := []struct {
		tensors  []Tensor
		metadata map[string]string
		want     string
	}{
		{[]Tensor{{Name: "a", DType: U8, Bytes: ok}, {Name: "a", DType: U8, Bytes: ok}}, nil, `"a" given twice`},
		{[]Tensor{{Name: "__metadata__", DType: U8, Bytes: ok}}, nil, "reserved"},
		{[]Tensor{{Name: "a", Bytes: ok}}, nil, "invalid dtype"},
		{[]Tensor{{Name: "a", DType: U8}}, nil, "Bytes is nil"},
		{[]Tensor{{Name: "a", DType: U8, Shape: []int64{-2}, Bytes: ok}}, nil, "negative"},
		{[]Tensor{{Name: "\xff", DType: U8, Bytes: ok}}, nil, "UTF-8"},
		{nil, map[string]string{"k": "\xfe"}, "UTF-8"},
	}
	for _, c := range cases {
		path := filepath.Join(t.TempDir(), "bad.safetensors")
		err := Write(path, c.tensors, c.metadata)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Write error = %v, want one containing %q", err, c.want)
		}
		if _, statErr := os.Stat(path); statErr == nil {
			t.Errorf("Write failed (%v) but created %s", err, path)
		}
	}
}

func BenchmarkWriteOpen64MiB(b *testing.B) {
	data := make([]byte, 16<<20)
	tensors := []Tensor{
		TensorFromBytes("a", BF16, []int64{8 << 20}, data),
		TensorFromBytes("b", BF16, []int64{8 << 20}, data),
		TensorFromBytes("c", F32, []int64{4 << 20}, data),
		TensorFromBytes("d", F32, []int64{4 << 20}, data),
	}
	path := filepath.Join(b.TempDir(), "bench.safetensors")
	b.SetBytes(64 << 20)
	for b.Loop() {
		if err := Write(path, tensors, nil); err != nil {
			b.Fatal(err)
		}
		f, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// Header parsing cost for a Qwen-sized tensor count (a 0.5B model has ~290).
func BenchmarkOpen400Tensors(b *testing.B) {
	var tensors []Tensor
	for i := range 400 {
		name := "model.layers." + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + ".weight." + strings.Repeat("0", i/26)
		tensors = append(tensors, TensorFromBytes(name, BF16, []int64{4, 8}, make([]byte, 64)))
	}
	path := filepath.Join(b.TempDir(), "many.safetensors")
	if err := Write(path, tensors, map[string]string{"format": "pt"}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		f, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

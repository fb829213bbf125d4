package safetensors

import (
	"bytes"
	"encoding/binary"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// The cross-check with the reference implementation (the Python/Rust
// safetensors library), which no Debian package ships:
//
//   - testdata/go_written.safetensors is what this package writes for
//     fixtureTensors; TestGoWrittenFixtureIsCurrent keeps it current
//     (regenerate with: go test ./safetensors -run GoWritten -update).
//   - testdata/reference_check.py, run where the reference library and torch
//     are installed, loads that file with the reference loader and checks
//     every value, then writes the same tensors with the reference writer to
//     testdata/reference_written.safetensors.
//   - TestReferenceWrittenFixture compares that file with this package's
//     output byte for byte, and skips while the file has not been generated.
var update = flag.Bool("update", false, "rewrite testdata/go_written.safetensors")

// fixtureTensors must match TENSORS in testdata/reference_check.py.
func fixtureTensors() []Tensor {
	le := binary.LittleEndian
	f32, _ := EncodeFloat32s(F32, []float32{0, 1, 2, 3, 4, 5})
	bf16, _ := EncodeFloat32s(BF16, []float32{1, -2, 3.140625})
	f16, _ := EncodeFloat32s(F16, []float32{0.5, 65504})
	var i64 []byte
	for _, v := range []int64{1, -2, 3, 1 << 40} {
		i64 = le.AppendUint64(i64, uint64(v))
	}
	var i32 []byte
	for _, v := range []int32{-1, 7} {
		i32 = le.AppendUint32(i32, uint32(v))
	}
	var i16 []byte
	for _, v := range []int16{-300, 300} {
		i16 = le.AppendUint16(i16, uint16(v))
	}
	return []Tensor{
		TensorFromBytes("attn.0", F32, []int64{1, 2, 3}, f32),
		TensorFromBytes("bf", BF16, []int64{3}, bf16),
		TensorFromBytes("half", F16, []int64{2}, f16),
		TensorFromBytes("ids", I64, []int64{2, 2}, i64),
		TensorFromBytes("mask", Bool, []int64{3}, []byte{1, 0, 1}),
		TensorFromBytes("scalar", F64, []int64{}, le.AppendUint64(nil, math.Float64bits(2.5))),
		TensorFromBytes("empty", F32, []int64{0, 4}, nil),
		TensorFromBytes("u8", U8, []int64{4}, []byte{0, 1, 254, 255}),
		TensorFromBytes("i32", I32, []int64{2}, i32),
		TensorFromBytes("i16", I16, []int64{2}, i16),
		TensorFromBytes("i8", I8, []int64{2}, []byte{0x80, 0x7F}),
	}
}

var fixtureMetadata = map[string]string{"format": "pt"}

func writeFixture(t *testing.T) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fixture.safetensors")
	if err := Write(path, fixtureTensors(), fixtureMetadata); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestGoWrittenFixtureIsCurrent(t *testing.T) {
	got := writeFixture(t)
	path := filepath.Join("testdata", "go_written.safetensors")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (regenerate with: go test ./safetensors -run GoWritten -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the writer's output changed from %s; if intended, rerun with -update and then testdata/reference_check.py", path)
	}
}

func TestReferenceWrittenFixture(t *testing.T) {
	path := filepath.Join("testdata", "reference_written.safetensors")
	want, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		t.Skipf("%s not generated yet: run testdata/reference_check.py where the reference safetensors library is installed", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := writeFixture(t); !bytes.Equal(got, want) {
		t.Errorf("this package's output differs from the reference writer's %s:\n got %q\nwant %q", path, got, want)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tensor := range fixtureTensors() {
		want, _ := tensor.Bytes()
		if got, err := f.Bytes(tensor.Name); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: % x, %v; want % x", tensor.Name, got, err, want)
		}
	}
}

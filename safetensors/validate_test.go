package safetensors

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// rawFile builds a file image by hand from the format's definition: the
// header length as a little-endian u64, the header, then dataLen bytes.
func rawFile(header string, dataLen int) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	b = append(b, header...)
	return append(b, make([]byte, dataLen)...)
}

func writeRaw(t *testing.T, image []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "corrupt.safetensors")
	if err := os.WriteFile(path, image, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A hand-built valid file, independent of the writer: two F32 tensors whose
// header lists them out of offset order, padded with spaces.
func TestOpenHandBuiltFile(t *testing.T) {
	header := `{"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]},` +
		`"a":{"data_offsets":[0,8],"shape":[2],"dtype":"F32"},"__metadata__":{"k":"v"}}   `
	image := rawFile(header, 0)
	image = append(image, f32Bytes(1.5, -2, 3.25)...)
	f, err := Open(writeRaw(t, image))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a, _ := f.Bytes("a")
	b, _ := f.Bytes("b")
	got, _ := DecodeFloat32s(F32, append(append([]byte{}, a...), b...))
	if len(got) != 3 || got[0] != 1.5 || got[1] != -2 || got[2] != 3.25 {
		t.Errorf("values %v, want [1.5 -2 3.25]", got)
	}
	if f.Metadata()["k"] != "v" {
		t.Errorf("metadata %v", f.Metadata())
	}
}

// Every validation rule, each with a corrupt file built by hand. The error
// must name the file and carry the listed fragments (the tensor, the
// numbers).
func TestOpenRejectsCorruptFiles(t *testing.T) {
	entry := func(name, dtype, shape string, begin, end int) string {
		return `"` + name + `":{"dtype":"` + dtype + `","shape":` + shape +
			`,"data_offsets":[` + strconv.Itoa(begin) + `,` + strconv.Itoa(end) + `]}`
	}
	cases := []struct {
		name  string
		image []byte
		want  []string
	}{
		{"shorter than 8 bytes", []byte{1, 2, 3}, []string{"3 bytes"}},
		{"header length beyond the file",
			append(binary.LittleEndian.AppendUint64(nil, 1000), "{}"...), []string{"header length 1000", "2 bytes"}},
		{"header length over the limit",
			append(binary.LittleEndian.AppendUint64(nil, 200_000_000), "{}"...), []string{"200000000", "limit"}},
		{"unknown dtype", rawFile(`{`+entry("w", "F31", "[2]", 0, 8)+`}`, 8), []string{`"w"`, `"F31"`}},
		{"lower-case dtype", rawFile(`{`+entry("w", "f32", "[2]", 0, 8)+`}`, 8), []string{`"w"`, `"f32"`}},
		{"byte size does not match the shape", rawFile(`{`+entry("w", "F32", "[2,3]", 0, 20)+`}`, 20),
			[]string{`"w"`, "[0, 20]", "20 bytes", "[2 3]", "needs 24"}},
		{"end before begin", rawFile(`{`+entry("w", "U8", "[2]", 8, 6)+`}`, 8), []string{`"w"`, "[8, 6]"}},
		{"offsets past the end of the file", rawFile(`{`+entry("w", "F32", "[4]", 0, 16)+`}`, 8),
			[]string{"needs 16 bytes", "has 8", "truncated"}},
		{"overlapping ranges", rawFile(`{`+entry("a", "U8", "[8]", 0, 8)+`,`+entry("b", "U8", "[8]", 4, 12)+`}`, 12),
			[]string{`"b"`, "[4, 12]", "overlap", `"a"`, "ends at 8"}},
		{"a gap between ranges", rawFile(`{`+entry("a", "U8", "[4]", 0, 4)+`,`+entry("b", "U8", "[4]", 6, 10)+`}`, 10),
			[]string{`"b"`, "gap of 2 bytes", `"a"`}},
		{"first range not at 0", rawFile(`{`+entry("a", "U8", "[4]", 2, 6)+`}`, 6), []string{`"a"`, "[2, 6]", "begin at 0"}},
		{"unaccounted bytes at the end", rawFile(`{`+entry("a", "U8", "[4]", 0, 4)+`}`, 9),
			[]string{"ends at 4", "9 bytes", "5 unaccounted"}},
		{"duplicate tensor name", rawFile(`{`+entry("a", "U8", "[4]", 0, 4)+`,`+entry("a", "U8", "[4]", 4, 8)+`}`, 8),
			[]string{`"a"`, "twice"}},
		{"duplicate metadata", rawFile(`{"__metadata__":{},"__metadata__":{}}`, 0), []string{"__metadata__", "twice"}},
		{"metadata value not a string", rawFile(`{"__metadata__":{"step":3}}`, 0), []string{"__metadata__", "strings"}},
		{"unknown entry key", rawFile(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"offset":0}}`, 1),
			[]string{`"a"`, "offset"}},
		{"missing dtype", rawFile(`{"a":{"shape":[1],"data_offsets":[0,1]}}`, 1), []string{`"a"`, `"dtype"`}},
		{"missing shape", rawFile(`{"a":{"dtype":"U8","data_offsets":[0,1]}}`, 1), []string{`"a"`, `"shape"`}},
		{"missing offsets", rawFile(`{"a":{"dtype":"U8","shape":[1]}}`, 1), []string{`"a"`, `"data_offsets"`}},
		{"three offsets", rawFile(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}}`, 1), []string{`"a"`, "3 numbers"}},
		{"negative dimension", rawFile(`{`+entry("a", "U8", "[-1]", 0, 0)+`}`, 0), []string{`"a"`, "shape[0]", "-1"}},
		{"fractional dimension", rawFile(`{`+entry("a", "U8", "[1.5]", 0, 1)+`}`, 1), []string{`"a"`, "1.5"}},
		{"sub-byte tensor not whole bytes", rawFile(`{`+entry("a", "F4", "[3]", 0, 1)+`}`, 1), []string{`"a"`, "whole bytes"}},
		{"not starting with {", rawFile(` {}`, 0), []string{"start with '{'"}},
		{"not JSON", rawFile(`{"a":`, 0), []string{"JSON"}},
		{"trailing garbage", rawFile(`{}x`, 0), []string{"after the JSON object"}},
		{"invalid UTF-8", rawFile("{\"\xff\":1}", 0), []string{"UTF-8"}},
		{"entry not an object", rawFile(`{"a":[1,2]}`, 0), []string{`"a"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeRaw(t, c.image)
			f, err := Open(path)
			if err == nil {
				f.Close()
				t.Fatalf("Open succeeded, want an error containing %q", c.want)
			}
			msg := err.Error()
			for _, w := range append([]string{path}, c.want...) {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

func TestOpenAcceptsPaddingAndEmptyTensors(t *testing.T) {
	header := `{"e":{"dtype":"F32","shape":[0,3],"data_offsets":[0,0]},` +
		`"s":{"dtype":"I32","shape":[],"data_offsets":[0,4]}}` + "  \n\t"
	f, err := Open(writeRaw(t, rawFile(header, 4)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if e, _ := f.Bytes("e"); e == nil || len(e) != 0 {
		t.Errorf("empty tensor bytes %v, want empty non-nil", e)
	}
	if s, _ := f.Info("s"); len(s.Shape) != 0 || s.NumElements() != 1 {
		t.Errorf("0-d tensor info %+v", s)
	}
}

func TestOpenMissingFile(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "absent.safetensors"))
	if err == nil || !strings.Contains(err.Error(), "absent.safetensors") {
		t.Errorf("error = %v, want one naming the file", err)
	}
}

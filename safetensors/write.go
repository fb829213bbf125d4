// write.go: writing one .safetensors file, streaming tensor bytes, atomically.
//
// Layout, as in the reference writer: tensors sorted by dtype, largest
// alignment first (U64, I64, F64, C64, F32, ... BOOL), then by name; each
// tensor's data follows the previous one with no gap. Since the header is
// padded so that the data starts at a multiple of 8, and dtype sizes are
// powers of two, every tensor's data is aligned to its element size.
//
// Why not plain name order: it would break that alignment and the
// byte-for-byte agreement with the reference writer.
//
// Atomicity: the file is written under a temporary name in the destination
// directory, fsynced, renamed over the final name, and the directory is
// fsynced. An error or a crash leaves either the old file or the new one
// under the final name, never a partial one; the temporary file is removed on
// error (a crash can leave a ".<name>.tmp-*" file behind).
package safetensors

import (
	"fmt"
	"io"
	"sort"
	"unicode/utf8"

	"troupe/internal/atomicfile"
)

// Tensor is one tensor to write.
type Tensor struct {
	Name  string
	DType DType
	Shape []int64 // empty for a 0-d tensor
	// Bytes produces the tensor's data: exactly ByteSize(DType, Shape)
	// bytes, little-endian, row-major. The writer calls it once, when it
	// reaches this tensor, and does not keep the slice afterwards, so a
	// caller can copy one tensor at a time off a device.
	Bytes func() ([]byte, error)
}

// TensorFromBytes is a Tensor whose data is already in memory.
func TensorFromBytes(name string, dtype DType, shape []int64, data []byte) Tensor {
	return Tensor{Name: name, DType: dtype, Shape: shape, Bytes: func() ([]byte, error) { return data, nil }}
}

// Write writes tensors and metadata (may be nil) to a safetensors file at
// path, replacing any existing file atomically.
func Write(path string, tensors []Tensor, metadata map[string]string) error {
	order, infos, err := layout(tensors, metadata)
	if err != nil {
		return fmt.Errorf("safetensors: writing %s: %w", path, err)
	}
	hdr := encodeHeader(order, infos, metadata)
	byName := make(map[string]*Tensor, len(tensors))
	for i := range tensors {
		byName[tensors[i].Name] = &tensors[i]
	}
	err = atomicfile.Write(path, func(w io.Writer) error {
		var n [8]byte
		for i := range n {
			n[i] = byte(uint64(len(hdr)) >> (8 * i))
		}
		if _, err := w.Write(n[:]); err != nil {
			return err
		}
		if _, err := w.Write(hdr); err != nil {
			return err
		}
		for _, name := range order {
			want := infos[name].ByteSize()
			data, err := byName[name].Bytes()
			if err != nil {
				return fmt.Errorf("tensor %q: producing its bytes: %w", name, err)
			}
			if int64(len(data)) != want {
				return fmt.Errorf("tensor %q: Bytes returned %d bytes, but shape %v of %v needs %d",
					name, len(data), infos[name].Shape, infos[name].DType, want)
			}
			if _, err := w.Write(data); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("safetensors: writing %s: %w", path, err)
	}
	return nil
}

// layout validates the tensors and returns their file order and infos with
// data offsets assigned.
func layout(tensors []Tensor, metadata map[string]string) ([]string, map[string]TensorInfo, error) {
	for k, v := range metadata {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return nil, nil, fmt.Errorf("metadata %q: keys and values must be valid UTF-8", k)
		}
	}
	infos := make(map[string]TensorInfo, len(tensors))
	order := make([]string, 0, len(tensors))
	for i, t := range tensors {
		switch {
		case !utf8.ValidString(t.Name):
			return nil, nil, fmt.Errorf("tensors[%d]: name %q is not valid UTF-8", i, t.Name)
		case t.Name == metadataKey:
			return nil, nil, fmt.Errorf("tensors[%d]: the name %q is reserved for metadata", i, t.Name)
		case !t.DType.Valid():
			return nil, nil, fmt.Errorf("tensor %q: invalid dtype %v", t.Name, t.DType)
		case t.Bytes == nil:
			return nil, nil, fmt.Errorf("tensor %q: Bytes is nil", t.Name)
		}
		if _, dup := infos[t.Name]; dup {
			return nil, nil, fmt.Errorf("tensor %q given twice", t.Name)
		}
		size, err := ByteSize(t.DType, t.Shape)
		if err != nil {
			return nil, nil, fmt.Errorf("tensor %q: %w", t.Name, err)
		}
		infos[t.Name] = TensorInfo{DType: t.DType, Shape: append([]int64{}, t.Shape...), End: size}
		order = append(order, t.Name)
	}
	sort.Slice(order, func(i, j int) bool {
		a, b := infos[order[i]].DType, infos[order[j]].DType
		if a != b {
			return a > b
		}
		return order[i] < order[j]
	})
	var offset int64
	for _, name := range order {
		t := infos[name]
		t.Begin, t.End = offset, offset+t.End
		offset = t.End
		infos[name] = t
	}
	return order, infos, nil
}

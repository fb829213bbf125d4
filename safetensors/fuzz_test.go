package safetensors

import (
	"encoding/binary"
	"testing"
)

// FuzzParseFile feeds arbitrary file images to the parser: it must return an
// error or a header whose ranges lie inside the data, never panic.
// Run longer with: go test -fuzz=FuzzParseFile ./safetensors/
func FuzzParseFile(f *testing.F) {
	seed := func(header string, dataLen int) []byte {
		b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
		return append(append(b, header...), make([]byte, dataLen)...)
	}
	f.Add(seed(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, 8))
	f.Add(seed(`{"__metadata__":{"k":"v"},"b":{"dtype":"BF16","shape":[],"data_offsets":[0,2]}}  `, 2))
	f.Add(seed(`{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}}`, 6))
	f.Add(seed(`{"a":{"dtype":"F4","shape":[9223372036854775807,2],"data_offsets":[0,1]}}`, 1))
	f.Add(seed(`{}`, 0))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, '{'})
	f.Fuzz(func(t *testing.T, image []byte) {
		h, dataStart, err := parseFile("fuzz", image)
		if err != nil {
			return
		}
		dataLen := int64(len(image)) - dataStart
		for _, name := range h.names {
			info := h.tensors[name]
			if info.Begin < 0 || info.End < info.Begin || info.End > dataLen {
				t.Fatalf("accepted tensor %q with range [%d, %d] outside %d data bytes", name, info.Begin, info.End, dataLen)
			}
			if _, err := ByteSize(info.DType, info.Shape); err != nil {
				t.Fatalf("accepted tensor %q with invalid size: %v", name, err)
			}
		}
	})
}

// header.go: the JSON header — parsing it strictly, and encoding it exactly
// as the reference writer does.
//
// A header is accepted only if all of these hold (the reference
// implementation checks the same things, except where marked):
//   - the length N fits in the file and is at most 100,000,000 bytes;
//   - the N bytes are UTF-8 JSON: one object that starts at the first byte
//     and is followed by whitespace only (the writer pads with spaces);
//   - every name appears once (here only: Go's and serde's JSON maps keep
//     the last duplicate silently), __metadata__ included;
//   - __metadata__, if present, maps strings to strings;
//   - every tensor entry has exactly the keys dtype, shape and data_offsets
//     (unknown keys are refused here; the reference ignores them), a known
//     dtype, non-negative integer dimensions and two integer offsets;
//   - end ≥ begin, and end − begin = prod(shape) · dtype bits / 8;
//   - sorted by offset, the ranges tile the data section exactly: no
//     overlap, no gap, and the last one ends at the end of the file.
//
// What it deliberately is not: a general JSON library; the encoder handles
// exactly the shapes of values a header holds.
package safetensors

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"unicode/utf8"
)

// maxHeaderBytes is the reference implementation's limit on N.
const maxHeaderBytes = 100_000_000

// metadataKey is the reserved header key holding free-form string metadata.
const metadataKey = "__metadata__"

// TensorInfo describes one tensor of a file.
type TensorInfo struct {
	DType DType
	Shape []int64 // row-major; empty for a 0-d (scalar) tensor
	// Begin and End are the data_offsets: byte offsets relative to the first
	// byte after the header, End exclusive.
	Begin, End int64
}

// NumElements is prod(Shape); 1 for a 0-d tensor.
func (t TensorInfo) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// ByteSize is End − Begin, the size of the tensor's data.
func (t TensorInfo) ByteSize() int64 { return t.End - t.Begin }

// header is a parsed, validated header.
type header struct {
	tensors  map[string]TensorInfo
	names    []string // sorted by name
	metadata map[string]string
}

// parseFile validates a whole file image (8-byte length, header, data) and
// returns its header and where the data section starts. file names the file
// in errors.
func parseFile(file string, buf []byte) (*header, int64, error) {
	if len(buf) < 8 {
		return nil, 0, fmt.Errorf("safetensors: %s: file is %d bytes, shorter than the 8-byte header length; it is truncated or not a safetensors file", file, len(buf))
	}
	n := uint64(buf[0]) | uint64(buf[1])<<8 | uint64(buf[2])<<16 | uint64(buf[3])<<24 |
		uint64(buf[4])<<32 | uint64(buf[5])<<40 | uint64(buf[6])<<48 | uint64(buf[7])<<56
	if n > maxHeaderBytes {
		return nil, 0, fmt.Errorf("safetensors: %s: header length %d exceeds the limit of %d bytes; the file is corrupt or not a safetensors file", file, n, maxHeaderBytes)
	}
	if n > uint64(len(buf)-8) {
		return nil, 0, fmt.Errorf("safetensors: %s: header length %d runs past the end of the file (%d bytes after the length field); the file is truncated or not a safetensors file", file, n, len(buf)-8)
	}
	dataLen := int64(len(buf)) - 8 - int64(n)
	h, err := parseHeader(buf[8:8+n], dataLen)
	if err != nil {
		return nil, 0, fmt.Errorf("safetensors: %s: %w", file, err)
	}
	return h, 8 + int64(n), nil
}

// parseHeader parses and validates the JSON header against a data section of
// dataLen bytes. Errors do not name the file; parseFile adds it.
func parseHeader(raw []byte, dataLen int64) (*header, error) {
	if !utf8.Valid(raw) {
		return nil, errors.New("header is not valid UTF-8")
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, fmt.Errorf("header must start with '{', starts with %q", firstBytes(raw))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // the '{'
		return nil, fmt.Errorf("header JSON: %v", err)
	}
	h := &header{tensors: map[string]TensorInfo{}}
	seenMetadata := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("header JSON: %v", err)
		}
		name, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("header JSON: expected a tensor name, got %v", tok)
		}
		if name == metadataKey {
			if seenMetadata {
				return nil, fmt.Errorf("%s appears twice", metadataKey)
			}
			seenMetadata = true
			if err := dec.Decode(&h.metadata); err != nil {
				return nil, fmt.Errorf("%s must map strings to strings: %v", metadataKey, err)
			}
			continue
		}
		if _, dup := h.tensors[name]; dup {
			return nil, fmt.Errorf("tensor %q appears twice in the header", name)
		}
		var entry json.RawMessage
		if err := dec.Decode(&entry); err != nil {
			return nil, fmt.Errorf("header JSON at tensor %q: %v", name, err)
		}
		info, err := parseEntry(entry)
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", name, err)
		}
		h.tensors[name] = info
	}
	if _, err := dec.Token(); err != nil { // the '}'
		return nil, fmt.Errorf("header JSON: %v", err)
	}
	if rest := raw[dec.InputOffset():]; len(bytes.TrimLeft(rest, " \t\r\n")) != 0 {
		return nil, fmt.Errorf("header has %d bytes of non-whitespace after the JSON object (%q)", len(rest), firstBytes(bytes.TrimLeft(rest, " \t\r\n")))
	}
	h.names = make([]string, 0, len(h.tensors))
	for name := range h.tensors {
		h.names = append(h.names, name)
	}
	sort.Strings(h.names)
	if err := checkTiling(h, dataLen); err != nil {
		return nil, err
	}
	return h, nil
}

// parseEntry parses one {"dtype", "shape", "data_offsets"} object and checks
// that its byte range matches its dtype and shape.
func parseEntry(raw []byte) (TensorInfo, error) {
	var e struct {
		DType       *string       `json:"dtype"`
		Shape       []json.Number `json:"shape"`
		DataOffsets []json.Number `json:"data_offsets"`
	}
	if trimmed := bytes.TrimLeft(raw, " \t\r\n"); len(trimmed) == 0 || trimmed[0] != '{' {
		return TensorInfo{}, fmt.Errorf("entry must be an object {\"dtype\", \"shape\", \"data_offsets\"}, got %s", firstBytes(trimmed))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return TensorInfo{}, fmt.Errorf("entry must be {\"dtype\", \"shape\", \"data_offsets\"}: %v", err)
	}
	switch {
	case e.DType == nil:
		return TensorInfo{}, errors.New(`entry has no "dtype"`)
	case e.Shape == nil:
		return TensorInfo{}, errors.New(`entry has no "shape" (a 0-d tensor has "shape": [])`)
	case e.DataOffsets == nil:
		return TensorInfo{}, errors.New(`entry has no "data_offsets"`)
	}
	var info TensorInfo
	var err error
	if info.DType, err = ParseDType(*e.DType); err != nil {
		return TensorInfo{}, err
	}
	info.Shape = make([]int64, len(e.Shape))
	for i, d := range e.Shape {
		if info.Shape[i], err = parseNonNegative(d); err != nil {
			return TensorInfo{}, fmt.Errorf("shape[%d]: %v", i, err)
		}
	}
	if len(e.DataOffsets) != 2 {
		return TensorInfo{}, fmt.Errorf("data_offsets must be [begin, end], got %d numbers", len(e.DataOffsets))
	}
	if info.Begin, err = parseNonNegative(e.DataOffsets[0]); err != nil {
		return TensorInfo{}, fmt.Errorf("data_offsets begin: %v", err)
	}
	if info.End, err = parseNonNegative(e.DataOffsets[1]); err != nil {
		return TensorInfo{}, fmt.Errorf("data_offsets end: %v", err)
	}
	if info.End < info.Begin {
		return TensorInfo{}, fmt.Errorf("data_offsets [%d, %d] end before they begin", info.Begin, info.End)
	}
	want, err := ByteSize(info.DType, info.Shape)
	if err != nil {
		return TensorInfo{}, err
	}
	if got := info.End - info.Begin; got != want {
		return TensorInfo{}, fmt.Errorf("data_offsets [%d, %d] hold %d bytes, but shape %v of %v needs %d",
			info.Begin, info.End, got, info.Shape, info.DType, want)
	}
	return info, nil
}

func parseNonNegative(n json.Number) (int64, error) {
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("must be a non-negative integer, got %s", n)
	}
	return v, nil
}

// checkTiling checks that the byte ranges, sorted by offset, cover
// [0, dataLen) exactly once.
func checkTiling(h *header, dataLen int64) error {
	byOffset := append([]string(nil), h.names...)
	sort.SliceStable(byOffset, func(i, j int) bool {
		a, b := h.tensors[byOffset[i]], h.tensors[byOffset[j]]
		if a.Begin != b.Begin {
			return a.Begin < b.Begin
		}
		return a.End < b.End
	})
	var end int64
	prev := ""
	for _, name := range byOffset {
		t := h.tensors[name]
		switch {
		case t.Begin < end:
			return fmt.Errorf("tensor %q data_offsets [%d, %d] overlap tensor %q, which ends at %d",
				name, t.Begin, t.End, prev, end)
		case t.Begin > end && prev == "":
			return fmt.Errorf("tensor %q data_offsets [%d, %d] leave a gap: the first tensor must begin at 0",
				name, t.Begin, t.End)
		case t.Begin > end:
			return fmt.Errorf("tensor %q data_offsets [%d, %d] leave a gap of %d bytes after tensor %q, which ends at %d",
				name, t.Begin, t.End, t.Begin-end, prev, end)
		}
		end, prev = t.End, name
	}
	if end != dataLen {
		if end > dataLen {
			return fmt.Errorf("tensor data needs %d bytes but the file has %d after the header; the file is truncated", end, dataLen)
		}
		return fmt.Errorf("tensor data ends at %d but the file has %d bytes after the header (%d unaccounted bytes at the end)",
			end, dataLen, dataLen-end)
	}
	return nil
}

func firstBytes(b []byte) string {
	if len(b) > 16 {
		b = b[:16]
	}
	return string(b)
}

// encodeHeader returns the padded JSON header for tensors laid out in the
// given order (their Begin/End already assigned), byte-identical to the
// reference writer: compact JSON, __metadata__ first (keys sorted here),
// then the tensors in layout order, padded with spaces to a multiple of 8.
func encodeHeader(order []string, infos map[string]TensorInfo, metadata map[string]string) []byte {
	b := []byte{'{'}
	first := true
	comma := func() {
		if !first {
			b = append(b, ',')
		}
		first = false
	}
	if metadata != nil {
		comma()
		b = appendJSONString(b, metadataKey)
		b = append(b, ':', '{')
		keys := make([]string, 0, len(metadata))
		for k := range metadata {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONString(b, metadata[k])
		}
		b = append(b, '}')
	}
	for _, name := range order {
		t := infos[name]
		comma()
		b = appendJSONString(b, name)
		b = append(b, `:{"dtype":`...)
		b = appendJSONString(b, t.DType.String())
		b = append(b, `,"shape":[`...)
		for i, d := range t.Shape {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, d, 10)
		}
		b = append(b, `],"data_offsets":[`...)
		b = strconv.AppendInt(b, t.Begin, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, t.End, 10)
		b = append(b, ']', '}')
	}
	b = append(b, '}')
	for len(b)%8 != 0 {
		b = append(b, ' ')
	}
	return b
}

// appendJSONString appends s as a JSON string the way serde_json writes it:
// only '"', '\\' and control characters are escaped (\b \t \n \f \r by name,
// the rest as \u00xx with lower-case hex); everything else, non-ASCII
// included, is written as UTF-8. s must be valid UTF-8.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\t':
			b = append(b, '\\', 't')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

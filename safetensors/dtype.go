// dtype.go: the element types a safetensors header may name, their sizes,
// and the order the writer sorts them in.
//
// The list and its order follow the reference implementation: the order is
// ascending alignment, and the writer places tensors of larger dtypes first so
// that every tensor starts at an offset that is a multiple of its element
// size. Sub-byte types (F4, F6_*) are sized in bits; a tensor of them must
// hold a whole number of bytes.
package safetensors

import (
	"fmt"
	"strings"
)

// DType is an element type of a safetensors tensor.
type DType uint8

// The dtypes, in the reference implementation's order (ascending alignment).
// The zero value is not a valid dtype.
const (
	invalidDType DType = iota
	Bool               // BOOL, one byte per element, 0 or 1
	F4                 // F4 (e2m1), 4 bits
	F6E2M3             // F6_E2M3, 6 bits
	F6E3M2             // F6_E3M2, 6 bits
	U8                 // U8
	I8                 // I8
	F8E5M2             // F8_E5M2
	F8E4M3             // F8_E4M3
	F8E8M0             // F8_E8M0 (power-of-two scales)
	I16                // I16
	U16                // U16
	F16                // F16, IEEE binary16
	BF16               // BF16, bfloat16
	I32                // I32
	U32                // U32
	F32                // F32, IEEE binary32
	C64                // C64, complex of two F32
	F64                // F64, IEEE binary64
	I64                // I64
	U64                // U64
	numDTypes
)

var dtypeNames = [numDTypes]string{
	Bool: "BOOL", F4: "F4", F6E2M3: "F6_E2M3", F6E3M2: "F6_E3M2",
	U8: "U8", I8: "I8", F8E5M2: "F8_E5M2", F8E4M3: "F8_E4M3", F8E8M0: "F8_E8M0",
	I16: "I16", U16: "U16", F16: "F16", BF16: "BF16",
	I32: "I32", U32: "U32", F32: "F32",
	C64: "C64", F64: "F64", I64: "I64", U64: "U64",
}

var dtypeBits = [numDTypes]uint64{
	Bool: 8, F4: 4, F6E2M3: 6, F6E3M2: 6,
	U8: 8, I8: 8, F8E5M2: 8, F8E4M3: 8, F8E8M0: 8,
	I16: 16, U16: 16, F16: 16, BF16: 16,
	I32: 32, U32: 32, F32: 32,
	C64: 64, F64: 64, I64: 64, U64: 64,
}

// ParseDType returns the dtype a header spells as s ("F32", "BF16", ...).
// Names are case-sensitive, as in the reference implementation.
func ParseDType(s string) (DType, error) {
	for d := Bool; d < numDTypes; d++ {
		if dtypeNames[d] == s {
			return d, nil
		}
	}
	return invalidDType, fmt.Errorf("unknown dtype %q (known: %s)", s, knownDTypes())
}

// String returns the header spelling of d ("BF16").
func (d DType) String() string {
	if d.Valid() {
		return dtypeNames[d]
	}
	return fmt.Sprintf("DType(%d)", uint8(d))
}

// Valid reports whether d is one of the dtypes above.
func (d DType) Valid() bool { return d > invalidDType && d < numDTypes }

// Bits is the size of one element in bits (4 for F4, 16 for BF16).
func (d DType) Bits() int {
	if !d.Valid() {
		return 0
	}
	return int(dtypeBits[d])
}

// Size is the size of one element in bytes, or 0 for the sub-byte dtypes
// (F4, F6_*) and invalid dtypes; use ByteSize for a whole tensor.
func (d DType) Size() int {
	if !d.Valid() || dtypeBits[d]%8 != 0 {
		return 0
	}
	return int(dtypeBits[d] / 8)
}

// ByteSize is the number of data bytes of a tensor of dtype d and the given
// shape: prod(shape) · bits / 8. It fails on an invalid dtype, a negative
// dimension, an overflow of int64, or a sub-byte tensor that does not fill a
// whole number of bytes.
func ByteSize(d DType, shape []int64) (int64, error) {
	if !d.Valid() {
		return 0, fmt.Errorf("invalid dtype %v", d)
	}
	const limit = uint64(1<<63 - 1)
	elements := uint64(1)
	for i, dim := range shape {
		if dim < 0 {
			return 0, fmt.Errorf("shape %v: dimension %d is negative (%d)", shape, i, dim)
		}
		if dim != 0 && elements > limit/uint64(dim) {
			return 0, fmt.Errorf("shape %v: element count overflows int64", shape)
		}
		elements *= uint64(dim)
	}
	bits := dtypeBits[d]
	if elements > limit/bits {
		return 0, fmt.Errorf("shape %v of %v: byte size overflows int64", shape, d)
	}
	if elements*bits%8 != 0 {
		return 0, fmt.Errorf("shape %v of %v: %d elements of %d bits do not fill whole bytes",
			shape, d, elements, bits)
	}
	return int64(elements * bits / 8), nil
}

func knownDTypes() string {
	names := make([]string, 0, numDTypes)
	for d := Bool; d < numDTypes; d++ {
		names = append(names, dtypeNames[d])
	}
	return strings.Join(names, ", ")
}

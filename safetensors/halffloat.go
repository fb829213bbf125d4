// halffloat.go: float32 ⇄ bfloat16 / IEEE half conversions, and float32
// slices ⇄ little-endian tensor bytes, for tests and fixtures.
//
// Rounding is round-to-nearest, ties-to-even, as PyTorch does on CPU:
//   - bf16: NaN becomes the canonical quiet NaN 0x7FC0 (sign dropped, as in
//     PyTorch); finite values that round past the largest bf16 become ±Inf.
//   - f16: NaN becomes sign|0x7E00; values from 65520 up become ±Inf; values
//     below the smallest subnormal (2^-24) round to ±0 or to it.
//
// Widening (bf16/f16 → float32) is exact; NaN payload bits are kept.
//
// This is not a fast path for model weights: the torch binding converts on
// the device. It exists so that tests can build and check bf16/f16 tensors.
package safetensors

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Float32ToBF16 rounds f to the nearest bfloat16 (ties to even) and returns
// its bit pattern.
func Float32ToBF16(f float32) uint16 {
	if f != f {
		return 0x7FC0
	}
	bits := math.Float32bits(f)
	// Adding 0x7FFF plus the lowest kept bit rounds to nearest, ties to even;
	// a carry out of the mantissa correctly bumps the exponent (up to Inf).
	lsb := (bits >> 16) & 1
	return uint16((bits + 0x7FFF + lsb) >> 16)
}

// BF16ToFloat32 widens a bfloat16 bit pattern to float32 exactly.
func BF16ToFloat32(b uint16) float32 {
	return math.Float32frombits(uint32(b) << 16)
}

// Float32ToF16 rounds f to the nearest IEEE binary16 (ties to even) and
// returns its bit pattern.
func Float32ToF16(f float32) uint16 {
	bits := math.Float32bits(f)
	sign := uint16(bits>>16) & 0x8000
	exp := int(bits>>23) & 0xFF
	mant := bits & 0x7FFFFF
	if exp == 0xFF {
		if mant != 0 {
			return sign | 0x7E00
		}
		return sign | 0x7C00
	}
	halfExp := exp - 127 + 15
	if halfExp >= 0x1F {
		return sign | 0x7C00
	}
	if halfExp <= 0 {
		// A half subnormal: value = m · 2^-24 with a 10-bit m.
		if halfExp < -10 {
			return sign // below half the smallest subnormal: rounds to ±0
		}
		significand := mant | 0x800000 // 24 bits with the implicit one
		shift := uint(14 - halfExp)    // 14..24
		m := significand >> shift
		rest := significand & (1<<shift - 1)
		halfway := uint32(1) << (shift - 1)
		if rest > halfway || (rest == halfway && m&1 == 1) {
			m++ // may carry into the smallest normal, 0x0400: still correct
		}
		return sign | uint16(m)
	}
	h := sign | uint16(halfExp)<<10 | uint16(mant>>13)
	rest := mant & 0x1FFF
	if rest > 0x1000 || (rest == 0x1000 && h&1 == 1) {
		h++ // a carry into the exponent is the correct rounding, up to Inf
	}
	return h
}

// F16ToFloat32 widens an IEEE binary16 bit pattern to float32 exactly.
func F16ToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1F
	mant := uint32(h & 0x3FF)
	switch {
	case exp == 0x1F: // Inf or NaN, payload kept
		return math.Float32frombits(sign | 0x7F800000 | mant<<13)
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: m · 2^-24, exact in float32
		v := float32(mant) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	default:
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	}
}

// EncodeFloat32s converts values to little-endian tensor bytes of dtype d,
// which must be F32, F64, F16 or BF16.
func EncodeFloat32s(d DType, values []float32) ([]byte, error) {
	if err := checkFloatDType("EncodeFloat32s", d); err != nil {
		return nil, err
	}
	size := d.Size()
	out := make([]byte, len(values)*size)
	for i, v := range values {
		b := out[i*size:]
		switch d {
		case F32:
			binary.LittleEndian.PutUint32(b, math.Float32bits(v))
		case F64:
			binary.LittleEndian.PutUint64(b, math.Float64bits(float64(v)))
		case F16:
			binary.LittleEndian.PutUint16(b, Float32ToF16(v))
		case BF16:
			binary.LittleEndian.PutUint16(b, Float32ToBF16(v))
		}
	}
	return out, nil
}

func checkFloatDType(caller string, d DType) error {
	switch d {
	case F32, F64, F16, BF16:
		return nil
	}
	return fmt.Errorf("safetensors: %s: dtype %v is not a float type (want F32, F64, F16 or BF16)", caller, d)
}

// DecodeFloat32s converts little-endian tensor bytes of dtype d (F32, F64,
// F16 or BF16) to float32 values; F64 is rounded to nearest.
func DecodeFloat32s(d DType, data []byte) ([]float32, error) {
	if err := checkFloatDType("DecodeFloat32s", d); err != nil {
		return nil, err
	}
	size := d.Size()
	if len(data)%size != 0 {
		return nil, fmt.Errorf("safetensors: DecodeFloat32s: %d bytes is not a whole number of %v elements (%d bytes each)",
			len(data), d, size)
	}
	out := make([]float32, len(data)/size)
	for i := range out {
		b := data[i*size:]
		switch d {
		case F32:
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b))
		case F64:
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(b)))
		case F16:
			out[i] = F16ToFloat32(binary.LittleEndian.Uint16(b))
		case BF16:
			out[i] = BF16ToFloat32(binary.LittleEndian.Uint16(b))
		}
	}
	return out, nil
}

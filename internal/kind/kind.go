// Package kind names tensor element types and devices — the ints of the C
// ABI (torch/tshim.h) and the strings configs use — without linking
// libtorch, so that pure-Go packages (config) can parse and validate them.
// Package torch re-exports every name here.
package kind

import (
	"fmt"
	"strconv"
	"strings"
)

// DType is an element type. The values are the ints of the C ABI (tshim.h).
type DType int

const (
	Float32 DType = iota
	Float16
	BFloat16
	Int64
	Int32
	Bool
	Float64
	Uint8
	Int8
	Int16
)

var dtypeNames = [...]string{"float32", "float16", "bfloat16", "int64", "int32", "bool", "float64", "uint8", "int8", "int16"}
var dtypeSizes = [...]int{4, 2, 2, 8, 4, 1, 8, 1, 1, 2}

func (d DType) String() string {
	if d < 0 || int(d) >= len(dtypeNames) {
		return "dtype(" + strconv.Itoa(int(d)) + ")"
	}
	return dtypeNames[d]
}

// Size is the number of bytes of one element.
func (d DType) Size() int { return dtypeSizes[d] }

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool {
	return d == Float32 || d == Float16 || d == BFloat16 || d == Float64
}

// ParseDType accepts the names config files use: float32/f32/fp32,
// bfloat16/bf16, float16/f16/fp16/half, float64/f64, and the integer names.
func ParseDType(s string) (DType, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "float32", "f32", "fp32", "float":
		return Float32, nil
	case "bfloat16", "bf16":
		return BFloat16, nil
	case "float16", "f16", "fp16", "half":
		return Float16, nil
	case "float64", "f64", "double":
		return Float64, nil
	case "int64", "i64", "long":
		return Int64, nil
	case "int32", "i32", "int":
		return Int32, nil
	case "bool":
		return Bool, nil
	case "uint8", "u8":
		return Uint8, nil
	case "int8", "i8":
		return Int8, nil
	case "int16", "i16":
		return Int16, nil
	}
	return 0, fmt.Errorf("unknown dtype %q (want float32, bfloat16, float16, float64, int64, int32, bool, uint8, int8 or int16)", s)
}

// Device is CPU or a CUDA ordinal. The values are the ints of the C ABI.
type Device int

// CPU is the host device.
const CPU Device = -1

// CUDA returns the CUDA device with the given ordinal.
func CUDA(ordinal int) Device { return Device(ordinal) }

// IsCUDA reports whether d is a CUDA device.
func (d Device) IsCUDA() bool { return d >= 0 }

func (d Device) String() string {
	if d == CPU {
		return "cpu"
	}
	return "cuda:" + strconv.Itoa(int(d))
}

// ParseDevice accepts "cpu", "cuda" (= cuda:0) and "cuda:N".
func ParseDevice(s string) (Device, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch {
	case s == "cpu":
		return CPU, nil
	case s == "cuda" || s == "gpu":
		return CUDA(0), nil
	case strings.HasPrefix(s, "cuda:"):
		n, err := strconv.Atoi(s[len("cuda:"):])
		if err == nil && n >= 0 {
			return CUDA(n), nil
		}
	}
	return CPU, fmt.Errorf("unknown device %q (want cpu, cuda or cuda:N)", s)
}

package torch

// dtype.go — element types and devices. They are defined in the pure-Go
// package internal/kind (so configs can be validated without libtorch) and
// re-exported here under their usual names.

import "troupe/internal/kind"

// DType is an element type. The values are the ints of the C ABI (tshim.h).
type DType = kind.DType

const (
	Float32  = kind.Float32
	Float16  = kind.Float16
	BFloat16 = kind.BFloat16
	Int64    = kind.Int64
	Int32    = kind.Int32
	Bool     = kind.Bool
	Float64  = kind.Float64
	Uint8    = kind.Uint8
	Int8     = kind.Int8
	Int16    = kind.Int16
)

// ParseDType accepts the names config files use (see kind.ParseDType).
func ParseDType(s string) (DType, error) { return kind.ParseDType(s) }

// Device is CPU or a CUDA ordinal. The values are the ints of the C ABI.
type Device = kind.Device

// CPU is the host device.
const CPU = kind.CPU

// CUDA returns the CUDA device with the given ordinal.
func CUDA(ordinal int) Device { return kind.CUDA(ordinal) }

// ParseDevice accepts "cpu", "cuda" (= cuda:0) and "cuda:N".
func ParseDevice(s string) (Device, error) { return kind.ParseDevice(s) }

package torch

// #include "tshim.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// shapeArg passes a shape to C without copying (int64 slices hold no Go pointers).
func shapeArg(shape []int64) (*C.int64_t, C.int) {
	if len(shape) == 0 {
		return nil, 0
	}
	return (*C.int64_t)(unsafe.Pointer(&shape[0])), C.int(len(shape))
}

func numel(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// FromBytes copies raw little-endian element bytes (the safetensors layout)
// into a new CPU tensor of the given dtype and shape. The bytes may live
// outside the Go heap (an mmap'd file).
func FromBytes(data []byte, dt DType, shape ...int64) *Tensor {
	if want := numel(shape) * int64(dt.Size()); want != int64(len(data)) {
		panic(&Error{Op: "from_bytes", Msg: fmt.Sprintf("%d bytes for %v of shape %v, want %d", len(data), dt, shape, want)})
	}
	var p unsafe.Pointer
	if len(data) > 0 {
		p = unsafe.Pointer(&data[0])
	}
	dims, nd := shapeArg(shape)
	var out C.ts_tensor
	check("from_bytes", C.ts_from_data(p, C.int64_t(len(data)), C.int(dt), dims, nd, &out))
	return wrap(out)
}

func fromSlice[E any](data []E, dt DType, shape []int64) *Tensor {
	if shape == nil {
		shape = []int64{int64(len(data))}
	}
	if numel(shape) != int64(len(data)) {
		panic(&Error{Op: "from_slice", Msg: fmt.Sprintf("%d values for shape %v", len(data), shape)})
	}
	var zero E
	n := len(data) * int(unsafe.Sizeof(zero))
	var b []byte
	if n > 0 {
		b = unsafe.Slice((*byte)(unsafe.Pointer(&data[0])), n)
	}
	return FromBytes(b, dt, shape...)
}

// FromFloat32 makes a CPU float32 tensor; with no shape it is 1-d.
func FromFloat32(data []float32, shape ...int64) *Tensor { return fromSlice(data, Float32, shape) }

// FromFloat64 makes a CPU float64 tensor; with no shape it is 1-d.
func FromFloat64(data []float64, shape ...int64) *Tensor { return fromSlice(data, Float64, shape) }

// FromInt64 makes a CPU int64 tensor; with no shape it is 1-d.
func FromInt64(data []int64, shape ...int64) *Tensor { return fromSlice(data, Int64, shape) }

// FromInt32 makes a CPU int32 tensor; with no shape it is 1-d.
func FromInt32(data []int32, shape ...int64) *Tensor { return fromSlice(data, Int32, shape) }

// FromBool makes a CPU bool tensor; with no shape it is 1-d.
func FromBool(data []bool, shape ...int64) *Tensor { return fromSlice(data, Bool, shape) }

// Scalar makes a 0-d tensor holding v.
func Scalar(v float64, dt DType, dev Device) *Tensor { return Full(nil, v, dt, dev) }

// Empty allocates an uninitialised tensor.
func Empty(shape []int64, dt DType, dev Device) *Tensor {
	dims, nd := shapeArg(shape)
	var out C.ts_tensor
	check("empty", C.ts_empty(dims, nd, C.int(dt), C.int(dev), &out))
	return wrap(out)
}

// Full makes a tensor filled with v.
func Full(shape []int64, v float64, dt DType, dev Device) *Tensor {
	dims, nd := shapeArg(shape)
	var out C.ts_tensor
	check("full", C.ts_full(dims, nd, C.double(v), C.int(dt), C.int(dev), &out))
	return wrap(out)
}

// Zeros makes a tensor of zeros.
func Zeros(shape []int64, dt DType, dev Device) *Tensor { return Full(shape, 0, dt, dev) }

// Ones makes a tensor of ones.
func Ones(shape []int64, dt DType, dev Device) *Tensor { return Full(shape, 1, dt, dev) }

// Arange makes [start, end) in steps of step.
func Arange(start, end, step float64, dt DType, dev Device) *Tensor {
	var out C.ts_tensor
	check("arange", C.ts_arange(C.double(start), C.double(end), C.double(step), C.int(dt), C.int(dev), &out))
	return wrap(out)
}

// Randn draws standard normal values from g (nil: the global generator).
func Randn(shape []int64, dt DType, dev Device, g *Generator) *Tensor {
	dims, nd := shapeArg(shape)
	var out C.ts_tensor
	check("randn", C.ts_randn(dims, nd, C.int(dt), C.int(dev), g.handle(), &out))
	return wrap(out)
}

// Rand draws uniform values in [0, 1) from g (nil: the global generator).
func Rand(shape []int64, dt DType, dev Device, g *Generator) *Tensor {
	dims, nd := shapeArg(shape)
	var out C.ts_tensor
	check("rand", C.ts_rand(dims, nd, C.int(dt), C.int(dev), g.handle(), &out))
	return wrap(out)
}

// ---- metadata ----

// Dim is the number of dimensions.
func (t *Tensor) Dim() int {
	var n C.int
	check("dim", C.ts_dim(t.handle(), &n))
	return int(n)
}

// Shape returns the sizes of every dimension.
func (t *Tensor) Shape() []int64 {
	n := t.Dim()
	shape := make([]int64, n)
	if n > 0 {
		check("shape", C.ts_shape(t.handle(), (*C.int64_t)(unsafe.Pointer(&shape[0])), C.int(n)))
	}
	return shape
}

// Size returns the size of dimension d (negative d counts from the end).
func (t *Tensor) Size(d int) int64 {
	shape := t.Shape()
	if d < 0 {
		d += len(shape)
	}
	if d < 0 || d >= len(shape) {
		panic(&Error{Op: "size", Msg: fmt.Sprintf("dim %d out of range for shape %v", d, shape)})
	}
	return shape[d]
}

// DType is the element type.
func (t *Tensor) DType() DType {
	var d C.int
	check("dtype", C.ts_dtype(t.handle(), &d))
	return DType(d)
}

// Device is where the tensor lives.
func (t *Tensor) Device() Device {
	var d C.int
	check("device", C.ts_device(t.handle(), &d))
	return Device(d)
}

// Numel is the number of elements.
func (t *Tensor) Numel() int64 {
	var n C.int64_t
	check("numel", C.ts_numel(t.handle(), &n))
	return int64(n)
}

// IsContiguous reports whether the elements are laid out densely in order.
func (t *Tensor) IsContiguous() bool {
	var c C.int
	check("is_contiguous", C.ts_is_contiguous(t.handle(), &c))
	return c != 0
}

// ---- conversion and copies ----

// To converts to a device and dtype (a new handle to the same tensor when
// nothing changes).
func (t *Tensor) To(dev Device, dt DType) *Tensor {
	var out C.ts_tensor
	check("to", C.ts_to(t.handle(), C.int(dev), C.int(dt), &out))
	return wrap(out)
}

// ToDType converts the element type, keeping the device.
func (t *Tensor) ToDType(dt DType) *Tensor { return t.To(t.Device(), dt) }

// ToDevice moves the tensor, keeping the element type.
func (t *Tensor) ToDevice(dev Device) *Tensor { return t.To(dev, t.DType()) }

// Clone copies the data into new memory.
func (t *Tensor) Clone() *Tensor {
	var out C.ts_tensor
	check("clone", C.ts_clone(t.handle(), &out))
	return wrap(out)
}

// Ref returns a second handle to the same tensor (shared storage, same
// autograd identity); freeing one leaves the other valid.
func (t *Tensor) Ref() *Tensor {
	var out C.ts_tensor
	check("shallow_clone", C.ts_shallow_clone(t.handle(), &out))
	return wrap(out)
}

// CopyFrom copies src into t in place (broadcasting; t may be a view).
func (t *Tensor) CopyFrom(src *Tensor) {
	check("copy_", C.ts_copy_(t.handle(), src.handle()))
}

// Fill sets every element of t to v in place.
func (t *Tensor) Fill(v float64) {
	check("fill_", C.ts_fill_(t.handle(), C.double(v)))
}

// Item returns the single element as float64.
func (t *Tensor) Item() float64 {
	var v C.double
	check("item", C.ts_item(t.handle(), &v))
	return float64(v)
}

// hostCopy converts t to a contiguous CPU tensor of dt and copies its bytes
// into dst, which must hold exactly numel elements.
func (t *Tensor) hostCopy(dt DType, dst unsafe.Pointer, nbytes int) {
	c := t.To(CPU, dt).Untrack()
	defer c.Free()
	cc := c.contiguousUntracked()
	defer cc.Free()
	check("copy_to_host", C.ts_copy_to_host(cc.handle(), dst, C.int64_t(nbytes)))
}

func (t *Tensor) contiguousUntracked() *Tensor {
	var out C.ts_tensor
	check("contiguous", C.ts_contiguous(t.handle(), &out))
	return wrap(out).Untrack()
}

func toSlice[E any](t *Tensor, dt DType) []E {
	n := t.Numel()
	out := make([]E, n)
	if n > 0 {
		var zero E
		t.hostCopy(dt, unsafe.Pointer(&out[0]), int(n)*int(unsafe.Sizeof(zero)))
	}
	return out
}

// Float32s copies the values to Go as float32 (converting the dtype).
func (t *Tensor) Float32s() []float32 { return toSlice[float32](t, Float32) }

// Float64s copies the values to Go as float64.
func (t *Tensor) Float64s() []float64 { return toSlice[float64](t, Float64) }

// Int64s copies the values to Go as int64.
func (t *Tensor) Int64s() []int64 { return toSlice[int64](t, Int64) }

// Int32s copies the values to Go as int32.
func (t *Tensor) Int32s() []int32 { return toSlice[int32](t, Int32) }

// Bools copies the values to Go as bool.
func (t *Tensor) Bools() []bool { return toSlice[bool](t, Bool) }

// Bytes copies the raw little-endian element bytes in t's own dtype (the
// safetensors layout).
func (t *Tensor) Bytes() []byte {
	dt := t.DType()
	out := make([]byte, t.Numel()*int64(dt.Size()))
	if len(out) > 0 {
		t.hostCopy(dt, unsafe.Pointer(&out[0]), len(out))
	}
	return out
}

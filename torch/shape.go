package torch

// #include "tshim.h"
import "C"

import "unsafe"

func handles(ts []*Tensor) (*C.ts_tensor, C.int) {
	if len(ts) == 0 {
		return nil, 0
	}
	hs := make([]C.ts_tensor, len(ts))
	for i, t := range ts {
		if t != nil {
			hs[i] = t.handle()
		}
	}
	return (*C.ts_tensor)(unsafe.Pointer(&hs[0])), C.int(len(hs))
}

// Reshape returns a tensor with the same elements in a new shape (a view when
// possible); one dimension may be -1.
func (t *Tensor) Reshape(shape ...int64) *Tensor {
	dims, nd := shapeArg(shape)
	var out C.ts_tensor
	check("reshape", C.ts_reshape(t.handle(), dims, nd, &out))
	return wrap(out)
}

// View is Reshape that never copies: it fails on incompatible strides.
func (t *Tensor) View(shape ...int64) *Tensor {
	dims, nd := shapeArg(shape)
	var out C.ts_tensor
	check("view", C.ts_view(t.handle(), dims, nd, &out))
	return wrap(out)
}

// Expand broadcasts size-1 dimensions to shape without copying (-1 keeps a size).
func (t *Tensor) Expand(shape ...int64) *Tensor {
	dims, nd := shapeArg(shape)
	var out C.ts_tensor
	check("expand", C.ts_expand(t.handle(), dims, nd, &out))
	return wrap(out)
}

// Permute reorders the dimensions.
func (t *Tensor) Permute(dims ...int64) *Tensor {
	d, nd := shapeArg(dims)
	var out C.ts_tensor
	check("permute", C.ts_permute(t.handle(), d, nd, &out))
	return wrap(out)
}

// Transpose swaps two dimensions.
func (t *Tensor) Transpose(d0, d1 int64) *Tensor {
	var out C.ts_tensor
	check("transpose", C.ts_transpose(t.handle(), C.int64_t(d0), C.int64_t(d1), &out))
	return wrap(out)
}

// Narrow is the view of length elements of dim starting at start.
func (t *Tensor) Narrow(dim, start, length int64) *Tensor {
	var out C.ts_tensor
	check("narrow", C.ts_narrow(t.handle(), C.int64_t(dim), C.int64_t(start), C.int64_t(length), &out))
	return wrap(out)
}

// Slice is the view [start:end:step] along dim.
func (t *Tensor) Slice(dim, start, end, step int64) *Tensor {
	var out C.ts_tensor
	check("slice", C.ts_slice(t.handle(), C.int64_t(dim), C.int64_t(start), C.int64_t(end), C.int64_t(step), &out))
	return wrap(out)
}

// Squeeze removes dimension dim if its size is 1.
func (t *Tensor) Squeeze(dim int64) *Tensor {
	var out C.ts_tensor
	check("squeeze", C.ts_squeeze(t.handle(), C.int64_t(dim), &out))
	return wrap(out)
}

// Unsqueeze inserts a dimension of size 1 at dim.
func (t *Tensor) Unsqueeze(dim int64) *Tensor {
	var out C.ts_tensor
	check("unsqueeze", C.ts_unsqueeze(t.handle(), C.int64_t(dim), &out))
	return wrap(out)
}

// Contiguous returns t laid out densely (t itself, as a new handle, if it already is).
func (t *Tensor) Contiguous() *Tensor {
	var out C.ts_tensor
	check("contiguous", C.ts_contiguous(t.handle(), &out))
	return wrap(out)
}

// Cat concatenates along an existing dimension.
func Cat(ts []*Tensor, dim int64) *Tensor {
	hs, n := handles(ts)
	var out C.ts_tensor
	check("cat", C.ts_cat(hs, n, C.int64_t(dim), &out))
	return wrap(out)
}

// Stack joins along a new dimension.
func Stack(ts []*Tensor, dim int64) *Tensor {
	hs, n := handles(ts)
	var out C.ts_tensor
	check("stack", C.ts_stack(hs, n, C.int64_t(dim), &out))
	return wrap(out)
}

// IndexSelect picks the entries of index (int64, 1-d) along dim.
func (t *Tensor) IndexSelect(dim int64, index *Tensor) *Tensor {
	var out C.ts_tensor
	check("index_select", C.ts_index_select(t.handle(), C.int64_t(dim), index.handle(), &out))
	return wrap(out)
}

// Gather: out[i][j] = t[i][index[i][j]] for dim 1 (and likewise for other dims).
func (t *Tensor) Gather(dim int64, index *Tensor) *Tensor {
	var out C.ts_tensor
	check("gather", C.ts_gather(t.handle(), C.int64_t(dim), index.handle(), &out))
	return wrap(out)
}

// Scatter returns a copy of t with src written at index along dim.
func (t *Tensor) Scatter(dim int64, index, src *Tensor) *Tensor {
	var out C.ts_tensor
	check("scatter", C.ts_scatter(t.handle(), C.int64_t(dim), index.handle(), src.handle(), &out))
	return wrap(out)
}

// ScatterAdd returns a copy of t with src added at index along dim.
func (t *Tensor) ScatterAdd(dim int64, index, src *Tensor) *Tensor {
	var out C.ts_tensor
	check("scatter_add", C.ts_scatter_add(t.handle(), C.int64_t(dim), index.handle(), src.handle(), &out))
	return wrap(out)
}

// IndexPut returns a copy of t with values written at the advanced index
// (one index tensor per leading dimension; nil selects the whole dimension).
func (t *Tensor) IndexPut(indices []*Tensor, values *Tensor, accumulate bool) *Tensor {
	hs, n := handles(indices)
	var out C.ts_tensor
	check("index_put", C.ts_index_put(t.handle(), hs, n, values.handle(), cbool(accumulate), &out))
	return wrap(out)
}

// IndexCopyInPlace writes src into t along dim at the rows named by index
// (int64): t.index_copy_(dim, index, src). t may be a view; it is changed in
// place, so it must not be a tensor autograd needs.
func (t *Tensor) IndexCopyInPlace(dim int64, index, src *Tensor) {
	check("index_copy_", C.ts_index_copy_(t.handle(), C.int64_t(dim), index.handle(), src.handle()))
}

// MaskedFill returns t with v wherever mask (bool, broadcast) is true.
func (t *Tensor) MaskedFill(mask *Tensor, v float64) *Tensor {
	var out C.ts_tensor
	check("masked_fill", C.ts_masked_fill(t.handle(), mask.handle(), C.double(v), &out))
	return wrap(out)
}

// MaskedSelect returns the elements where mask (bool, broadcast) is true,
// as a 1-d tensor in row-major order.
func (t *Tensor) MaskedSelect(mask *Tensor) *Tensor {
	var out C.ts_tensor
	check("masked_select", C.ts_masked_select(t.handle(), mask.handle(), &out))
	return wrap(out)
}

// Where picks a where cond is true and b elsewhere (broadcasting).
func Where(cond, a, b *Tensor) *Tensor {
	var out C.ts_tensor
	check("where", C.ts_where(cond.handle(), a.handle(), b.handle(), &out))
	return wrap(out)
}

// Triu keeps the elements on and above the given diagonal of the last two dims.
func (t *Tensor) Triu(diagonal int64) *Tensor {
	var out C.ts_tensor
	check("triu", C.ts_triu(t.handle(), C.int64_t(diagonal), &out))
	return wrap(out)
}

// Tril keeps the elements on and below the given diagonal of the last two dims.
func (t *Tensor) Tril(diagonal int64) *Tensor {
	var out C.ts_tensor
	check("tril", C.ts_tril(t.handle(), C.int64_t(diagonal), &out))
	return wrap(out)
}

// RepeatInterleave repeats every slice along dim `repeats` times in place
// (a a b b), as grouped-query attention repeats KV heads.
func (t *Tensor) RepeatInterleave(repeats, dim int64) *Tensor {
	var out C.ts_tensor
	check("repeat_interleave", C.ts_repeat_interleave(t.handle(), C.int64_t(repeats), C.int64_t(dim), &out))
	return wrap(out)
}

// Flip reverses the order of elements along dims.
func (t *Tensor) Flip(dims ...int64) *Tensor {
	d, nd := shapeArg(dims)
	var out C.ts_tensor
	check("flip", C.ts_flip(t.handle(), d, nd, &out))
	return wrap(out)
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

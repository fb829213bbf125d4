package torch

// storage.go — the memory under a tensor, for sharded parameters: a weight
// whose values live spread over the ranks gives its memory back between
// uses and gets fresh memory when it is gathered again, the way
// torch.distributed.fsdp frees and re-allocates a flat parameter's storage.
// Views share the storage (a fused q/k/v weight and its three parts), so
// freeing it frees them all; sizes and strides are untouched.
//
// Not a general API: reading a tensor whose storage is freed is undefined
// (the pointer is null); the one caller (policy's sharded parameters) keeps
// track of which weights are present.

// #include "tshim.h"
import "C"

// StorageInfo is the size in bytes of t's storage (0 when freed) and an
// identity that tensors sharing it have in common.
func (t *Tensor) StorageInfo() (bytes int64, id uint64) {
	var n C.int64_t
	var i C.uint64_t
	check("storage_info", C.ts_storage_info(t.handle(), &n, &i))
	return int64(n), uint64(i)
}

// ResizeStorage frees t's storage (0) or gives it new, uninitialised memory
// of n bytes on its device.
func (t *Tensor) ResizeStorage(n int64) {
	check("storage_resize", C.ts_storage_resize(t.handle(), C.int64_t(n)))
}

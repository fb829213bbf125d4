// Package safetensors reads and writes the Hugging Face safetensors format:
// single files and sharded model directories (model.safetensors, or
// model-0000k-of-0000n.safetensors plus model.safetensors.index.json).
//
// Why a package of its own: model/ loads weights with it and ckpt/ writes
// checkpoints with it, and neither of those should depend on the other. It is
// pure Go and knows nothing about torch: tensors are (dtype, shape, bytes).
//
// The format, as this package reads and writes it:
//
//	8 bytes   N, little-endian uint64: the length of the JSON header
//	N bytes   JSON: {"__metadata__": {"k": "v"},
//	                 "<name>": {"dtype": "BF16", "shape": [2, 3],
//	                            "data_offsets": [begin, end]}, ...}
//	          padded with spaces so that 8+N is a multiple of 8
//	rest      the tensor bytes, little-endian, row-major; data_offsets are
//	          relative to the first byte after the header
//
// Reading is strict (see header.go for every rule): a file that the reference
// implementation would refuse is refused here too, with an error that names
// the file, the tensor and the numbers. Files are memory-mapped, never read
// into Go memory whole; File.Bytes returns views into the mapping.
//
// Writing streams: each tensor's bytes are produced by a callback when the
// writer reaches it, so a caller never holds every tensor in Go memory at
// once. Files are written to a temporary name, fsynced and renamed, so a crash
// never leaves a half-written file under the final name. The output is
// byte-identical to the reference writer (same tensor order, same compact
// JSON, same padding), except that __metadata__ keys are sorted here where the
// reference emits them in hash-map order.
//
// The files:
//
//	doc.go          this overview
//	dtype.go        the dtypes, their sizes and the writer's sort order
//	header.go       parsing and checking the JSON header (every strictness rule)
//	file.go         File: an opened file, its tensors as byte views
//	mmap_unix.go, mmap_other.go  mapping a file read-only (or refusing where it cannot)
//	modeldir.go     a model directory: one file or several shards behind one lookup
//	write.go        the streaming writer
//	shardwrite.go   sharded writing under a byte limit, with the index
//	halffloat.go    bf16/f16/f32 slices ⇄ tensor bytes, for tests and fixtures
//	fingerprint.go  a short identity of a model directory's weights (a LoRA run's frozen base)
//	finite.go       CheckWeight: a floating dtype and finite elements, for the loaders in model/ and ckpt/
//
// What this package deliberately is not: a tensor library (no arithmetic, no
// slicing of tensor data beyond byte views), and not a downloader.
package safetensors

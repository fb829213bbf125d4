// Package bench measures a model's generation and update throughput on the
// device it runs on: the library behind `train bench` and the troupe side
// of scripts/bench/compare.py (the side-by-side run against a plain
// PyTorch forward on the same weights). docs/performance.md says how to
// read its numbers.
//
// Files:
//
//	bench.go   the measurements: prefill, decode and one update per run
//	device.go  peak memory and the GPU peak FLOP/s table for MFU
//	report.go  the rows as a table or as JSON lines
//	profile.go --profile: a Go CPU profile and an ATen operator table
//	shape.go   named and key=value model shapes for random models
//	size.go    the sizes asked for, checked against the model and the device before loading
package bench

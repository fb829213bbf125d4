package torch

import (
	"fmt"
	"testing"
)

// BenchmarkSmallOp is the cost of one cgo round trip plus a tiny libtorch op.
func BenchmarkSmallOp(b *testing.B) {
	x := Ones([]int64{4}, Float32, CPU).Untrack()
	defer x.Free()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x.AddScalar(1).Free()
	}
}

// BenchmarkMetadata is a cgo call that does no tensor work.
func BenchmarkMetadata(b *testing.B) {
	x := Ones([]int64{4}, Float32, CPU).Untrack()
	defer x.Free()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = x.DType()
	}
}

// BenchmarkMatmul reports GFLOP/s of an n×n matmul in f32 and bf16.
func BenchmarkMatmul(b *testing.B) {
	for _, dt := range []DType{Float32, BFloat16} {
		for _, n := range []int64{256, 1024} {
			b.Run(fmt.Sprintf("%v/n=%d", dt, n), func(b *testing.B) {
				s := NewScope()
				defer s.Close()
				x := Randn([]int64{n, n}, Float32, CPU, nil).ToDType(dt)
				y := Randn([]int64{n, n}, Float32, CPU, nil).ToDType(dt)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					x.Matmul(y).Free()
				}
				b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

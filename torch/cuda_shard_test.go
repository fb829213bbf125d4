package torch

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// The NCCL side of sharded training in a group of one on cuda:0
// (TROUPE_CUDA=1): reduce-scatter and all-gather into flat buffers, waited
// for on the host and on the stream only, the bucketed all-reduce, and the
// storage of a weight freed and re-allocated on the GPU. At W = 1 NCCL still
// enqueues each collective on its own stream and c10d waits for it as at
// any W, so these run every line of the CUDA branches but the transfer.

// ncclOfOne joins a group of one with NCCL alone on dev.
func ncclOfOne(t *testing.T) *ProcessGroup {
	t.Helper()
	if _, nccl := DistBackends(); !nccl {
		t.Fatal("TROUPE_CUDA=1 but this build of the shim has no NCCL (scripts/gpu/build-shim.sh builds it where nccl.h is)")
	}
	pg, err := NewProcessGroup(DistConfig{Host: "127.0.0.1", Port: freePort(t), Rank: 0, World: 1, Timeout: time.Minute, NCCL: true, Device: 0})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Close)
	return pg
}

func TestCUDAShardCollectivesNCCL(t *testing.T) {
	dev := cudaOrSkip(t)
	pg := ncclOfOne(t)
	if d, _ := pg.Describe(); !strings.Contains(d, "waits stream-ordered") {
		t.Fatalf("the group holds %q; want stream-ordered waits (TORCH_NCCL_BLOCKING_WAIT unset)", d)
	}
	s := NewScope()
	defer s.Close()

	// waited for by the host: out is in (the sum over one rank), in each dtype
	for _, dt := range []DType{Float32, BFloat16} {
		in := Arange(0, 1000, 1, dt, dev)
		out := Zeros([]int64{1000}, dt, dev)
		if err := pg.ReduceScatter(in, out); err != nil {
			t.Fatalf("reduce-scatter %v: %v", dt, err)
		}
		all := Zeros([]int64{1000}, dt, dev)
		if err := pg.AllGatherInto(out, all); err != nil {
			t.Fatalf("all-gather %v: %v", dt, err)
		}
		if got, want := all.ToDType(Float64).Float64s(), in.ToDType(Float64).Float64s(); !reflect.DeepEqual(got, want) {
			t.Fatalf("reduce-scatter then all-gather of %v changed the values", dt)
		}
	}

	// in flight: 40 of each issued without the host waiting; the compute
	// stream waits for each before its result is read
	before := pg.Stats()
	const n = 40
	ins, outs, works := make([]*Tensor, n), make([]*Tensor, n), make([]*Work, 0, 2*n)
	for i := range n {
		ins[i] = Full([]int64{1 << 20}, float64(i), Float32, dev)
		outs[i] = Empty([]int64{1 << 20}, Float32, dev)
		w, err := pg.ReduceScatterAsync(ins[i], outs[i])
		if err != nil || w == nil {
			t.Fatalf("reduce-scatter %d in flight: %v, %v (NCCL returns a work)", i, w, err)
		}
		works = append(works, w)
		gathered := Empty([]int64{1 << 20}, Float32, dev)
		if w, err = pg.AllGatherIntoAsync(outs[i], gathered); err != nil {
			t.Fatal(err)
		}
		works = append(works, w)
		outs[i] = gathered
	}
	if got := pg.Stats().Sub(before); got.HostWaits != 0 || got.ReduceScatter != n || got.AllGatherInto != n {
		t.Fatalf("issuing %d reduce-scatters and all-gathers: %+v; want %d of each and no host wait", n, got, n)
	}
	for _, w := range works {
		if err := w.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	for i, o := range outs {
		if lo, hi := o.Min().Item(), o.Max().Item(); lo != float64(i) || hi != float64(i) {
			t.Fatalf("buffer %d after a stream-ordered wait: [%g, %g], want %d", i, lo, hi, i)
		}
	}
	if got := pg.Stats().Sub(before); got.HostWaits != 0 {
		t.Fatalf("stream-ordered waits blocked the host %d times", got.HostWaits)
	}
	for _, w := range works {
		if err := w.Check(); err != nil {
			t.Fatal(err)
		}
	}
	if got := pg.Stats().Sub(before); got.HostWaits != 2*n {
		t.Fatalf("checking %d works: %d host waits", 2*n, got.HostWaits)
	}

	// the bucketed all-reduce on the GPU: 1,000 float32 in place in 4 slices
	// of a 1 KiB bucket, 300 bf16 packed into one buffer (NCCL sums bf16
	// itself), the values unchanged at W = 1
	before = pg.Stats()
	a, b := Arange(0, 1000, 1, Float32, dev), Full([]int64{300}, 3, BFloat16, dev)
	if err := pg.AllReduceBuckets([]*Tensor{a, b}, ReduceSum, 1024); err != nil {
		t.Fatal(err)
	}
	st := pg.Stats().Sub(before)
	if st.AllReduce != 5 || st.LargestBuffer > 1024 || st.HostWaits != 5 {
		t.Fatalf("bucketed all-reduce on %v: %+v; want 5 collectives, each checked once, none staged above 1,024 bytes", dev, st)
	}
	if a.Sum().Item() != 999*1000/2 || b.Sum().Item() != 900 {
		t.Fatalf("bucketed all-reduce changed the values: %g, %g", a.Sum().Item(), b.Sum().Item())
	}
}

// A fused weight's storage on the GPU: freed, its memory goes back to the
// caching allocator (allocated drops by its size); re-allocated, its views
// write the whole tensor.
func TestCUDAResizeStorage(t *testing.T) {
	dev := cudaOrSkip(t)
	s := NewScope()
	defer s.Close()
	whole := Arange(0, 3<<20, 1, Float32, dev).Reshape(3, 1<<20) // q, k, v rows of 4 MiB each
	q, kv := whole.Narrow(0, 0, 1).Detach(), whole.Narrow(0, 1, 2).Detach()
	n, _ := whole.StorageInfo()
	Synchronize(dev)
	held := Memory(dev).Allocated
	whole.ResizeStorage(0)
	if m, _ := kv.StorageInfo(); m != 0 {
		t.Fatalf("after freeing, a view's storage has %d bytes", m)
	}
	if freed := held - Memory(dev).Allocated; freed != n {
		t.Fatalf("freeing the storage gave back %d bytes, want %d", freed, n)
	}
	whole.ResizeStorage(n)
	if got := Memory(dev).Allocated - held; got != 0 {
		t.Fatalf("re-allocating: %d bytes more than before freeing, want 0", got)
	}
	q.CopyFrom(Full([]int64{1, 1 << 20}, 2, Float32, dev))
	kv.CopyFrom(Full([]int64{2, 1 << 20}, 5, Float32, dev))
	if got := whole.SumDim(1, false).Float64s(); !reflect.DeepEqual(got, []float64{2 << 20, 5 << 20, 5 << 20}) {
		t.Fatalf("after re-allocating and writing the views, row sums %v", got)
	}
}

package torch

import "testing"

// Once TrackCPUMemory is on, Memory(CPU) counts the bytes libtorch's CPU
// allocator holds: a 4 MiB tensor adds exactly 4 MiB, freeing it takes them
// back, the peak keeps them until ResetPeakMemory; a storage freed and
// re-allocated (sharded weights) moves the count the same way.
func TestCPUMemoryStatistics(t *testing.T) {
	if !TrackCPUMemory() {
		t.Fatal("the CPU allocator in place cannot be counted")
	}
	const n = 4 << 20
	base := Memory(CPU)
	x := Empty([]int64{n / 4}, Float32, CPU)
	if got := Memory(CPU).Allocated - base.Allocated; got != n {
		t.Fatalf("a %d-byte tensor: allocated grew by %d", n, got)
	}
	ResetPeakMemory(CPU)
	x.ResizeStorage(0)
	if got := base.Allocated - Memory(CPU).Allocated; got != 0 {
		t.Fatalf("its storage freed: allocated is %d bytes off the start", -got)
	}
	x.ResizeStorage(n)
	x.Free()
	m := Memory(CPU)
	if m.Allocated != base.Allocated || m.PeakAllocated != base.Allocated+n || m.Reserved != m.Allocated {
		t.Fatalf("after freeing: %+v; want allocated %d as at the start and the peak %d", m, base.Allocated, base.Allocated+n)
	}
	ResetPeakMemory(CPU)
	if m := Memory(CPU); m.PeakAllocated != m.Allocated {
		t.Fatalf("after a reset the peak is %d, allocated %d", m.PeakAllocated, m.Allocated)
	}
	if !TrackCPUMemory() {
		t.Fatal("a second TrackCPUMemory failed")
	}
}

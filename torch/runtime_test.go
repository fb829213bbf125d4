package torch

import (
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// TestFreedMemoryIsReused checks keepFreedMemory on what a forward pass
// does: a linear layer's 2 MiB output and a sum of it, freed, again and
// again. Once the heap has settled the loop faults in no new pages; with
// glibc's defaults it faults both outputs in again on every pass (4,096
// pages each time).
func TestFreedMemoryIsReused(t *testing.T) {
	if strings.Contains(os.Getenv("GLIBC_TUNABLES"), "glibc.malloc.") {
		t.Skip("GLIBC_TUNABLES sets the allocator; troupe leaves it alone")
	}
	faults := func() int64 {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return ru.Minflt
	}
	// one OS thread: glibc serves each thread from its own arena
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	x := FromFloat64(randData(1, 2048*64), 2048, 64)
	w := FromFloat64(randData(2, 512*64), 512, 64)
	defer FreeAll(x, w)
	pass := func() {
		y := Linear(x, w, nil)
		z := y.Add(y)
		FreeAll(y, z)
	}
	for range 100 { // the heap settles
		pass()
	}
	before := faults()
	const passes = 50
	for range passes {
		pass()
	}
	if got := faults() - before; got > passes*16 {
		t.Fatalf("%d passes that allocate and free 4 MiB faulted %d pages in (%d a pass): freed memory goes back to the system",
			passes, got, got/passes)
	}
}

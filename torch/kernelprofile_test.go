package torch

import (
	"strings"
	"testing"
)

// The kernel profile's table from torch's profiler: on this CPU build it
// tables CPU operators (a GPU build tables CUDA kernels the same way); the
// matmul run inside it is there with its call count, and a second Start
// while one runs is refused.
func TestKernelProfileTablesWhatRan(t *testing.T) {
	noLeaks(t)
	p := StartKernelProfile(false)
	if err := panicsWith(func() { StartKernelProfile(false) }); err == nil {
		p.Stop()
		t.Fatal("a second kernel profile started while one ran")
	}
	scoped(func() {
		a := Ones([]int64{64, 64}, Float32, CPU)
		for range 3 {
			a.Matmul(a)
		}
	})
	table, events := p.Stop()
	t.Log("\n" + table)
	if events == 0 {
		t.Skip("this libtorch's profiler recorded no events (no Kineto): the table is empty, as a GPU run without CUPTI would say")
	}
	found := false
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) == 5 && f[4] == "aten::mm" && f[1] == "3" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no aten::mm row with 3 calls in the table:\n%s", table)
	}
	if again, n := p.Stop(); again != "" || n != 0 {
		t.Fatal("a second Stop returned a table")
	}
}

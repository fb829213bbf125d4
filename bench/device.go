package bench

// device.go — what a device can do and has used: peak dense matmul
// throughput by GPU name (for MFU) and the peak memory so far.

import (
	"os"
	"strconv"
	"strings"

	"troupe/torch"
)

// PeakBytes is dev's peak allocated memory (CUDA's caching allocator) or,
// on the CPU, the process's peak resident set (VmHWM; 0 where /proc is
// absent).
func PeakBytes(dev torch.Device) int64 {
	if dev.IsCUDA() {
		return torch.Memory(dev).PeakAllocated
	}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// PeakFLOPS is the dense bf16/f16 tensor-core peak of a GPU by its name, in
// FLOP/s (vendor data sheets, SXM parts where both exist), or 0 when the
// name is not known: MFU is then not printed.
func PeakFLOPS(name string) float64 {
	n := strings.ToUpper(name)
	for _, g := range []struct {
		key   string
		flops float64
	}{
		{"H200", 989e12}, {"H100 PCIE", 756e12}, {"H100", 989e12}, {"GH200", 989e12},
		{"A100", 312e12}, {"A10G", 125e12}, {"A10", 125e12}, {"L40S", 362e12}, {"L4", 121e12},
		{"RTX 4090", 165e12}, {"RTX 3090", 71e12}, {"V100", 125e12}, {"T4", 65e12},
	} {
		if strings.Contains(n, g.key) {
			return g.flops
		}
	}
	return 0
}

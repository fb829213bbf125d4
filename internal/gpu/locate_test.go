package gpu

import (
	"os"
	"strings"
	"testing"
)

// eightGPUs is a node's 8 GPUs as NVML lists them, in PCI order.
func eightGPUs(t *testing.T) *fakeDriver {
	buses := []string{"18", "2A", "3A", "5D", "9A", "AB", "BA", "DB"}
	d := &fakeDriver{t: t, initOK: true}
	for i, b := range buses {
		d.devices = append(d.devices, &fakeDevice{name: "H100", pci: "00000000:" + b + ":00.0", uuid: "GPU-0000000" + string(rune('0'+i)) + "-aaaa"})
	}
	return d
}

// A CUDA ordinal is found in NVML by its PCI bus id — as CUDA writes it,
// lower-case with a 4-digit domain — whatever CUDA_VISIBLE_DEVICES did to
// the numbering; without one, through CUDA_VISIBLE_DEVICES' indices or
// UUIDs; with neither, the ordinal is NVML's index.
func TestFindMapsOrdinalsToNVML(t *testing.T) {
	d := eightGPUs(t)
	for _, c := range []struct {
		visible string // "-": unset
		ordinal int
		pci     string
		want    int
	}{
		{"4,5,6,7", 0, "0000:9a:00.0", 4}, // by PCI: ordinal 0 of ranks seeing 4–7
		{"4,5,6,7", 3, "0000:db:00.0", 7},
		{"-", 0, "0000:5d:00.0", 3},             // Slurm's per-task binding (a cgroup, no variable): ordinal 0 is GPU 3
		{"4,5,6,7", 1, "", 5},                   // by CUDA_VISIBLE_DEVICES' indices
		{"GPU-00000006,GPU-00000002", 1, "", 2}, // by UUID prefixes
		{"-", 2, "", 2},                         // neither: the same numbers
	} {
		if c.visible == "-" {
			os.Unsetenv("CUDA_VISIBLE_DEVICES")
		} else {
			t.Setenv("CUDA_VISIBLE_DEVICES", c.visible)
		}
		dev, i, err := Find(d, c.ordinal, c.pci)
		if err != nil || i != c.want || dev != d.devices[c.want] {
			t.Errorf("CUDA_VISIBLE_DEVICES=%s, cuda:%d, PCI %q: NVML device %d (%v), want %d", c.visible, c.ordinal, c.pci, i, err, c.want)
		}
	}
	t.Setenv("CUDA_VISIBLE_DEVICES", "4,5")
	for _, c := range []struct {
		ordinal int
		pci     string
		want    string
	}{
		{0, "0000:01:00.0", "NVML lists no device at that PCI address"},
		{0, "3b:00", "is not domain:bus:device.function"},
		{2, "", `CUDA_VISIBLE_DEVICES="4,5" makes only 2 device(s) visible`},
	} {
		if _, _, err := Find(d, c.ordinal, c.pci); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("cuda:%d, PCI %q: %v, want an error saying %q", c.ordinal, c.pci, err, c.want)
		}
	}
	t.Setenv("CUDA_VISIBLE_DEVICES", "GPU-0000000")
	if _, _, err := Find(d, 0, ""); err == nil || !strings.Contains(err.Error(), "matches more than one GPU") {
		t.Errorf("an ambiguous UUID prefix: %v", err)
	}
}

package gpu

// locate.go — which NVML device a CUDA ordinal is. NVML numbers every GPU
// of the machine in PCI order; CUDA numbers the devices this process sees,
// in the order of CUDA_VISIBLE_DEVICES (indices or GPU-/MIG- UUIDs) or a
// cgroup's. So ordinal 0 of a rank launched with CUDA_VISIBLE_DEVICES=4,5,6,7
// is NVML's device 4, and under Slurm's per-task binding every rank's
// ordinal 0 is another GPU. The PCI bus id names a device the same way in
// both (torch.CUDAPCIBusID gives CUDA's): Find matches it. Without one it
// reads CUDA_VISIBLE_DEVICES, which is right unless CUDA_DEVICE_ORDER is
// FASTEST_FIRST on a machine of unlike GPUs.
//
// What it is not: a MIG slice's own memory (NVML's device for a MIG UUID's
// PCI id is the whole GPU).

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Find is the NVML device (and its index) of CUDA ordinal, by pciBusID
// when given, else through CUDA_VISIBLE_DEVICES.
func Find(d Driver, ordinal int, pciBusID string) (Device, int, error) {
	n, err := d.DeviceCount()
	if err != nil {
		return nil, 0, err
	}
	if pciBusID != "" {
		want, ok := parsePCI(pciBusID)
		if !ok {
			return nil, 0, fmt.Errorf("cuda:%d: PCI bus id %q is not domain:bus:device.function", ordinal, pciBusID)
		}
		for i := range n {
			dev, err := d.Device(i)
			if err != nil {
				continue
			}
			if id, err := dev.PCIBusID(); err == nil {
				if got, ok := parsePCI(id); ok && got == want {
					return dev, i, nil
				}
			}
		}
		return nil, 0, fmt.Errorf("cuda:%d (PCI %s): NVML lists no device at that PCI address among its %d", ordinal, pciBusID, n)
	}
	index := ordinal
	if v, ok := os.LookupEnv("CUDA_VISIBLE_DEVICES"); ok {
		entries := strings.Split(v, ",")
		if ordinal >= len(entries) {
			return nil, 0, fmt.Errorf("cuda:%d: CUDA_VISIBLE_DEVICES=%q makes only %d device(s) visible", ordinal, v, len(entries))
		}
		e := strings.TrimSpace(entries[ordinal])
		if k, err := strconv.Atoi(e); err == nil {
			index = k
		} else {
			return byUUID(d, n, ordinal, e)
		}
	}
	if index < 0 || index >= n {
		return nil, 0, fmt.Errorf("cuda:%d is NVML device %d, but NVML lists %d", ordinal, index, n)
	}
	dev, err := d.Device(index)
	return dev, index, err
}

// byUUID is the device whose UUID starts with prefix (CUDA accepts a
// unique prefix of "GPU-…").
func byUUID(d Driver, n, ordinal int, prefix string) (Device, int, error) {
	found, at := Device(nil), -1
	for i := range n {
		dev, err := d.Device(i)
		if err != nil {
			continue
		}
		if u, err := dev.UUID(); err == nil && strings.HasPrefix(u, prefix) {
			if found != nil {
				return nil, 0, fmt.Errorf("cuda:%d: CUDA_VISIBLE_DEVICES entry %q matches more than one GPU", ordinal, prefix)
			}
			found, at = dev, i
		}
	}
	if found == nil {
		return nil, 0, fmt.Errorf("cuda:%d: no GPU's UUID starts with %q (CUDA_VISIBLE_DEVICES; a MIG slice is not found by its UUID here)", ordinal, prefix)
	}
	return found, at, nil
}

// pciAddr is a PCI address: domain, bus, device, function.
type pciAddr [4]uint64

// parsePCI reads "0000:3b:00.0" (CUDA) or "00000000:3B:00.0" (NVML).
func parsePCI(s string) (pciAddr, bool) {
	var a pciAddr
	parts := strings.Split(strings.TrimSpace(s), ":")
	if len(parts) != 3 {
		return a, false
	}
	df := strings.Split(parts[2], ".")
	if len(df) != 2 {
		return a, false
	}
	for i, p := range []string{parts[0], parts[1], df[0], df[1]} {
		v, err := strconv.ParseUint(p, 16, 64)
		if err != nil {
			return a, false
		}
		a[i] = v
	}
	return a, true
}

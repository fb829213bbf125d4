// Package gpu samples GPU utilisation, memory, power and temperature once per
// training step, as metrics named gpu/<index>/<quantity>:
//
//	gpu/0/util          % of time a kernel was running (NVML's GPU utilisation)
//	gpu/0/mem_util      % of time device memory was being read or written
//	gpu/0/mem_used_gib  device memory in use, GiB
//	gpu/0/mem_total_gib device memory, GiB
//	gpu/0/power_w       board power draw, W
//	gpu/0/temp_c        GPU die temperature, °C
//
// The monitor talks to NVML through the small Driver interface, so that its
// logic is tested with a fake device; nvml.go adapts go-nvml to it. On a
// machine without NVML (CI, laptops) the monitor says "no GPU" once through
// the log writer it was given and then stays silent, and Sample returns an
// empty map. A quantity a device does not support (power on some boards) is
// reported once and then left out.
//
// What it deliberately is not: a profiler or a process-level accounting
// tool. It answers "is the GPU busy and how full is it" per step.
//
// monitor.go: the Monitor and the Driver/Device interfaces.
package gpu

import (
	"fmt"
	"io"
	"sync"
)

// Driver is the part of NVML the monitor uses.
type Driver interface {
	// Init loads and initialises the library. No other method may be called
	// unless it succeeded.
	Init() error
	DeviceCount() (int, error)
	Device(index int) (Device, error)
	// Shutdown releases the library; called once, only after a successful
	// Init.
	Shutdown() error
}

// Device is one GPU as NVML reports it.
type Device interface {
	Name() (string, error)
	// Utilization returns the percent of the last sample period during
	// which a kernel ran, and during which memory was read or written.
	Utilization() (gpuPercent, memoryPercent uint32, err error)
	Memory() (usedBytes, totalBytes uint64, err error)
	PowerMilliwatts() (uint32, error)
	TemperatureCelsius() (uint32, error)
	// PCIBusID is the device's PCI address ("00000000:3B:00.0"), UUID its
	// "GPU-…" id: how a CUDA ordinal is matched to it (locate.go).
	PCIBusID() (string, error)
	UUID() (string, error)
}

// Monitor samples every device of a Driver. Its methods are safe for
// concurrent use.
type Monitor struct {
	mu          sync.Mutex
	driver      Driver
	log         io.Writer
	initialized bool // Init succeeded and Shutdown has not run
	devices     []Device
	names       []string
	warned      map[string]bool // "<index>/<quantity>" already reported as unavailable
}

const gib = 1 << 30

// Open monitors the GPUs visible through the system's NVML library. log
// receives one line when monitoring starts or is unavailable, and one per
// unsupported quantity; it may be nil.
func Open(log io.Writer) *Monitor { return OpenDriver(NVML(), log) }

// OpenDriver monitors the devices of driver (a fake one in tests).
func OpenDriver(driver Driver, log io.Writer) *Monitor {
	if log == nil {
		log = io.Discard
	}
	m := &Monitor{driver: driver, log: log, warned: map[string]bool{}}
	if err := driver.Init(); err != nil {
		fmt.Fprintf(log, "gpu: no GPU monitoring: %v\n", err)
		return m
	}
	m.initialized = true
	count, err := driver.DeviceCount()
	if err != nil || count == 0 {
		reason := "NVML sees no devices"
		if err != nil {
			reason = fmt.Sprintf("counting devices: %v", err)
		}
		fmt.Fprintf(log, "gpu: no GPU monitoring: %s\n", reason)
		m.shutdown()
		return m
	}
	for i := 0; i < count; i++ {
		d, err := driver.Device(i)
		if err != nil {
			fmt.Fprintf(log, "gpu: device %d: %v; not monitored\n", i, err)
			continue
		}
		name, err := d.Name()
		if err != nil {
			name = "unknown"
		}
		m.devices = append(m.devices, d)
		m.names = append(m.names, fmt.Sprintf("%d: %s", i, name))
	}
	if len(m.devices) == 0 {
		m.shutdown()
		return m
	}
	fmt.Fprintf(log, "gpu: monitoring %d device(s): %v\n", len(m.devices), m.names)
	return m
}

// Available reports whether any device is being monitored.
func (m *Monitor) Available() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.initialized && len(m.devices) > 0
}

// Devices names the monitored devices ("0: NVIDIA H100 80GB HBM3").
func (m *Monitor) Devices() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.names...)
}

// Sample reads every monitored device once. It returns an empty map when no
// device is monitored.
func (m *Monitor) Sample() map[string]float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]float64{}
	if !m.initialized {
		return out
	}
	for i, d := range m.devices {
		prefix := fmt.Sprintf("gpu/%d/", i)
		if gpu, mem, err := d.Utilization(); m.ok(i, "util", err) {
			out[prefix+"util"] = float64(gpu)
			out[prefix+"mem_util"] = float64(mem)
		}
		if used, total, err := d.Memory(); m.ok(i, "memory", err) {
			out[prefix+"mem_used_gib"] = float64(used) / gib
			out[prefix+"mem_total_gib"] = float64(total) / gib
		}
		if mw, err := d.PowerMilliwatts(); m.ok(i, "power", err) {
			out[prefix+"power_w"] = float64(mw) / 1000
		}
		if c, err := d.TemperatureCelsius(); m.ok(i, "temperature", err) {
			out[prefix+"temp_c"] = float64(c)
		}
	}
	return out
}

// ok reports whether err is nil, logging the first failure of each
// device/quantity pair.
func (m *Monitor) ok(device int, quantity string, err error) bool {
	if err == nil {
		return true
	}
	key := fmt.Sprintf("%d/%s", device, quantity)
	if !m.warned[key] {
		m.warned[key] = true
		fmt.Fprintf(m.log, "gpu: device %d: %s unavailable (%v); not reported\n", device, quantity, err)
	}
	return false
}

// Close shuts NVML down if Init succeeded. Closing twice is a no-op; Sample
// after Close returns an empty map.
func (m *Monitor) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.shutdown()
}

func (m *Monitor) shutdown() error {
	if !m.initialized {
		return nil
	}
	m.initialized = false
	m.devices = nil
	if err := m.driver.Shutdown(); err != nil {
		return fmt.Errorf("gpu: NVML shutdown: %w", err)
	}
	return nil
}

// FreeMemory reads the free and total memory of CUDA ordinal through NVML
// (used to size budgets), finding its NVML device by pciBusID
// (torch.CUDAPCIBusID) or CUDA_VISIBLE_DEVICES (locate.go); an error when
// NVML or the device is unavailable.
func FreeMemory(ordinal int, pciBusID string) (free, total uint64, err error) {
	d := NVML()
	if err := d.Init(); err != nil {
		return 0, 0, err
	}
	defer d.Shutdown()
	dev, _, err := Find(d, ordinal, pciBusID)
	if err != nil {
		return 0, 0, err
	}
	used, total, err := dev.Memory()
	if err != nil {
		return 0, 0, err
	}
	return total - min(used, total), total, nil
}

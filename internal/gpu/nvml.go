//go:build cgo

// nvml.go: the Driver over github.com/NVIDIA/go-nvml.
//
// Measured on a machine without the NVIDIA driver: nvml.Init returns
// ERROR_LIBRARY_NOT_FOUND without panicking, but calling any other NVML
// function after a failed Init kills the process with an unrecoverable
// symbol-lookup error. So every method here checks that Init succeeded
// before touching the library, whatever the caller does. Formatting an
// nvml.Return is safe either way: go-nvml uses its own table of names until
// the library is loaded.
package gpu

import (
	"errors"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

var errNotInitialized = errors.New("NVML is not initialised (Init failed or was not called)")

type nvmlDriver struct {
	initialized bool
}

// NVML returns a Driver over the system's NVML library.
func NVML() Driver { return &nvmlDriver{} }

func nvmlError(op string, ret nvml.Return) error {
	if ret == nvml.SUCCESS {
		return nil
	}
	return errors.New("NVML " + op + ": " + ret.Error())
}

func (d *nvmlDriver) Init() error {
	if d.initialized {
		return nil
	}
	if err := nvmlError("init", nvml.Init()); err != nil {
		return err
	}
	d.initialized = true
	return nil
}

func (d *nvmlDriver) DeviceCount() (int, error) {
	if !d.initialized {
		return 0, errNotInitialized
	}
	n, ret := nvml.DeviceGetCount()
	return n, nvmlError("device count", ret)
}

func (d *nvmlDriver) Device(index int) (Device, error) {
	if !d.initialized {
		return nil, errNotInitialized
	}
	h, ret := nvml.DeviceGetHandleByIndex(index)
	if err := nvmlError("device handle", ret); err != nil {
		return nil, err
	}
	return &nvmlDevice{driver: d, handle: h}, nil
}

func (d *nvmlDriver) Shutdown() error {
	if !d.initialized {
		return nil
	}
	d.initialized = false
	return nvmlError("shutdown", nvml.Shutdown())
}

// nvmlDevice checks its driver's state before every call, so that a device
// kept past Shutdown fails cleanly instead of calling into an unloaded
// library.
type nvmlDevice struct {
	driver *nvmlDriver
	handle nvml.Device
}

func (d *nvmlDevice) Name() (string, error) {
	if !d.driver.initialized {
		return "", errNotInitialized
	}
	name, ret := d.handle.GetName()
	return name, nvmlError("name", ret)
}

func (d *nvmlDevice) Utilization() (uint32, uint32, error) {
	if !d.driver.initialized {
		return 0, 0, errNotInitialized
	}
	u, ret := d.handle.GetUtilizationRates()
	return u.Gpu, u.Memory, nvmlError("utilization", ret)
}

func (d *nvmlDevice) Memory() (uint64, uint64, error) {
	if !d.driver.initialized {
		return 0, 0, errNotInitialized
	}
	m, ret := d.handle.GetMemoryInfo()
	return m.Used, m.Total, nvmlError("memory info", ret)
}

func (d *nvmlDevice) PowerMilliwatts() (uint32, error) {
	if !d.driver.initialized {
		return 0, errNotInitialized
	}
	mw, ret := d.handle.GetPowerUsage()
	return mw, nvmlError("power usage", ret)
}

func (d *nvmlDevice) PCIBusID() (string, error) {
	if !d.driver.initialized {
		return "", errNotInitialized
	}
	p, ret := d.handle.GetPciInfo()
	if err := nvmlError("PCI info", ret); err != nil {
		return "", err
	}
	b := make([]byte, 0, len(p.BusId))
	for _, c := range p.BusId {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b), nil
}

func (d *nvmlDevice) UUID() (string, error) {
	if !d.driver.initialized {
		return "", errNotInitialized
	}
	u, ret := d.handle.GetUUID()
	return u, nvmlError("UUID", ret)
}

func (d *nvmlDevice) TemperatureCelsius() (uint32, error) {
	if !d.driver.initialized {
		return 0, errNotInitialized
	}
	c, ret := d.handle.GetTemperature(nvml.TEMPERATURE_GPU)
	return c, nvmlError("temperature", ret)
}

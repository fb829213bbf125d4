package gpu

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// fakeDriver records calls and fails the test if anything but Init is
// called after a failed Init, which would crash a real process.
type fakeDriver struct {
	t         *testing.T
	initErr   error
	countErr  error
	devices   []*fakeDevice
	initOK    bool
	calls     []string
	shutdowns int
}

func (f *fakeDriver) record(call string) {
	f.calls = append(f.calls, call)
	if call != "Init" && !f.initOK {
		f.t.Errorf("%s called without a successful Init: a real process would die here", call)
	}
}

func (f *fakeDriver) Init() error {
	f.record("Init")
	f.initOK = f.initErr == nil
	return f.initErr
}

func (f *fakeDriver) DeviceCount() (int, error) {
	f.record("DeviceCount")
	return len(f.devices), f.countErr
}

func (f *fakeDriver) Device(i int) (Device, error) {
	f.record("Device")
	return f.devices[i], nil
}

func (f *fakeDriver) Shutdown() error {
	f.record("Shutdown")
	f.shutdowns++
	f.initOK = false
	return nil
}

type fakeDevice struct {
	name              string
	gpuUtil, memUtil  uint32
	used, total       uint64
	milliwatts        uint32
	celsius           uint32
	powerErr, tempErr error
	pci, uuid         string
}

func (d *fakeDevice) Name() (string, error) { return d.name, nil }
func (d *fakeDevice) Utilization() (uint32, uint32, error) {
	return d.gpuUtil, d.memUtil, nil
}
func (d *fakeDevice) Memory() (uint64, uint64, error)     { return d.used, d.total, nil }
func (d *fakeDevice) PowerMilliwatts() (uint32, error)    { return d.milliwatts, d.powerErr }
func (d *fakeDevice) TemperatureCelsius() (uint32, error) { return d.celsius, d.tempErr }
func (d *fakeDevice) PCIBusID() (string, error)           { return d.pci, nil }
func (d *fakeDevice) UUID() (string, error)               { return d.uuid, nil }

func TestMonitorWithoutNVMLStaysSilent(t *testing.T) {
	var log strings.Builder
	drv := &fakeDriver{t: t, initErr: errors.New("NVML init: ERROR_LIBRARY_NOT_FOUND")}
	m := OpenDriver(drv, &log)
	for range 3 {
		if s := m.Sample(); len(s) != 0 {
			t.Errorf("Sample = %v, want empty", s)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if m.Available() {
		t.Error("Available without NVML")
	}
	if want := "gpu: no GPU monitoring: NVML init: ERROR_LIBRARY_NOT_FOUND\n"; log.String() != want {
		t.Errorf("log %q, want exactly %q", log.String(), want)
	}
	if !reflect.DeepEqual(drv.calls, []string{"Init"}) {
		t.Errorf("driver calls %v, want only Init (no Shutdown after a failed Init)", drv.calls)
	}
}

func TestMonitorSamplesDevices(t *testing.T) {
	var log strings.Builder
	drv := &fakeDriver{t: t, devices: []*fakeDevice{
		{name: "H100", gpuUtil: 97, memUtil: 41, used: 60 << 30, total: 80 << 30, milliwatts: 612_500, celsius: 64},
		{name: "H100", gpuUtil: 3, memUtil: 0, used: 1 << 29, total: 80 << 30, milliwatts: 71_000, celsius: 35,
			powerErr: errors.New("NVML power usage: ERROR_NOT_SUPPORTED")},
	}}
	m := OpenDriver(drv, &log)
	if !m.Available() || !reflect.DeepEqual(m.Devices(), []string{"0: H100", "1: H100"}) {
		t.Fatalf("Available=%v Devices=%v", m.Available(), m.Devices())
	}
	want := map[string]float64{
		"gpu/0/util": 97, "gpu/0/mem_util": 41, "gpu/0/mem_used_gib": 60, "gpu/0/mem_total_gib": 80,
		"gpu/0/power_w": 612.5, "gpu/0/temp_c": 64,
		"gpu/1/util": 3, "gpu/1/mem_util": 0, "gpu/1/mem_used_gib": 0.5, "gpu/1/mem_total_gib": 80,
		"gpu/1/temp_c": 35, // no power: unsupported on device 1
	}
	for range 2 {
		if got := m.Sample(); !reflect.DeepEqual(got, want) {
			t.Errorf("Sample\n got %v\nwant %v", got, want)
		}
	}
	if n := strings.Count(log.String(), "power unavailable"); n != 1 {
		t.Errorf("log reports the missing power %d times, want once:\n%s", n, log.String())
	}
	if !strings.Contains(log.String(), "monitoring 2 device(s)") {
		t.Errorf("log %q does not announce the devices", log.String())
	}
	m.Close()
	m.Close()
	if drv.shutdowns != 1 {
		t.Errorf("Shutdown called %d times, want 1", drv.shutdowns)
	}
	if s := m.Sample(); len(s) != 0 {
		t.Errorf("Sample after Close = %v, want empty", s)
	}
}

func TestMonitorWithNoDevicesShutsDown(t *testing.T) {
	var log strings.Builder
	drv := &fakeDriver{t: t}
	m := OpenDriver(drv, &log)
	if m.Available() || len(m.Sample()) != 0 {
		t.Error("a driver with no devices is reported available")
	}
	if drv.shutdowns != 1 || !strings.Contains(log.String(), "no devices") {
		t.Errorf("shutdowns %d, log %q", drv.shutdowns, log.String())
	}
	m.Close()
	if drv.shutdowns != 1 {
		t.Errorf("Close shut down again (%d)", drv.shutdowns)
	}
}

// The real NVML path: on a machine without the NVIDIA driver this must log
// "no GPU" and not crash; on a GPU machine it must report device 0.
func TestRealNVML(t *testing.T) {
	var log strings.Builder
	m := Open(&log)
	defer m.Close()
	s := m.Sample()
	if m.Available() {
		if _, ok := s["gpu/0/mem_total_gib"]; !ok {
			t.Errorf("GPU available but Sample = %v", s)
		}
		t.Logf("%s%v", log.String(), s)
		return
	}
	if len(s) != 0 || !strings.Contains(log.String(), "no GPU") {
		t.Errorf("without a GPU: Sample = %v, log %q", s, log.String())
	}
	t.Log(strings.TrimSpace(log.String()))
}

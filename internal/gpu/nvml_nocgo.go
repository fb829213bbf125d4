//go:build !cgo

// nvml_nocgo.go: go-nvml needs cgo (it loads the library with dlopen); a
// binary built with CGO_ENABLED=0 monitors nothing and says why.
package gpu

import "errors"

type noNVML struct{}

// NVML returns a Driver whose Init fails: this binary was built without cgo.
func NVML() Driver { return noNVML{} }

var errNoCgo = errors.New("built without cgo, so NVML cannot be loaded")

func (noNVML) Init() error                { return errNoCgo }
func (noNVML) DeviceCount() (int, error)  { return 0, errNoCgo }
func (noNVML) Device(int) (Device, error) { return nil, errNoCgo }
func (noNVML) Shutdown() error            { return nil }

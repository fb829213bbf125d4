package run

// bench.go — `train bench`: generation and update throughput of a model
// directory or a random model of a named shape on this machine's device
// (the measurements themselves are package bench's).

import (
	"fmt"
	"io"

	"troupe/bench"
	"troupe/config"
	"troupe/internal/gpu"
	"troupe/model"
	"troupe/torch"
)

// Bench is the bench command's options: exactly one of Model and Shape.
type Bench struct {
	Model, Shape, Device, DType string
	Options                     bench.Options
	JSON                        bool
}

// Run loads (or builds) the model, measures it and prints the table (or
// one JSON object per row).
func (c *Bench) Run(out io.Writer) (err error) {
	defer torch.Recover(&err)
	opt, err := loadOptions(config.Model{Device: c.Device, DType: c.DType})
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	var cfg model.Config
	switch {
	case (c.Model == "") == (c.Shape == ""):
		return fmt.Errorf("bench: give exactly one of --model DIR and --shape")
	case c.Model != "":
		cfg, err = model.LoadConfig(c.Model)
	default:
		cfg, err = bench.ParseShape(c.Shape)
	}
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	elem := 4
	if opt.DType != torch.Float32 {
		elem = 2
	}
	// before a weight is loaded (size.go)
	if err := bench.CheckSizes(cfg, elem, c.Options, bench.DeviceMemory(opt.Device), opt.Device.String()); err != nil {
		return err
	}
	var m *model.Model
	if c.Model != "" {
		m, err = model.Load(c.Model, opt)
	} else {
		m, err = model.New(cfg, 1, opt)
	}
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	defer m.Free()
	rows, err := bench.Run(m, opt.Device, c.Options)
	if err != nil {
		return err
	}
	if c.JSON {
		return bench.WriteJSON(out, rows)
	}
	peak, name := 0.0, "cpu"
	if opt.Device.IsCUDA() {
		name = cudaName(int(opt.Device))
		peak = bench.PeakFLOPS(name)
	}
	kernels := ""
	if !opt.Device.IsCUDA() {
		kernels = ", CPU generation kernels off"
		if c.Options.CPUKernels {
			kernels = ", CPU generation kernels " + torch.CPUKernelsVariant()
		}
	}
	fmt.Fprintf(out, "%s, %.1fM parameters, %s on %s, libtorch %s, %d intra-op threads%s\n",
		m.Config.Describe(), float64(m.Config.NumParams())/1e6, c.DType, name, torch.VersionString(), torch.NumThreads(), kernels)
	bench.Write(out, rows, peak)
	return nil
}

// cudaName is the GPU's name through NVML ("cuda" when unknown).
func cudaName(index int) string {
	d := gpu.NVML()
	if d.Init() != nil {
		return "cuda"
	}
	defer d.Shutdown()
	dev, err := d.Device(index)
	if err != nil {
		return "cuda"
	}
	if n, err := dev.Name(); err == nil {
		return n
	}
	return "cuda"
}

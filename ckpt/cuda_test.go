package ckpt

// GPU checks, run when TROUPE_CUDA=1 (scripts/gpu/window-tests.sh sets it) and
// skipped otherwise: a bf16 model with float32 masters on cuda:0 saved and
// loaded into a fresh model and optimizer on the device, the same checkpoint
// loaded on the CPU, and a CUDA generator's state.
//
// Not a 4-steps-versus-2+2 test: CUDA's embedding backward accumulates with
// atomics, so two trainings on the GPU need not agree bit for bit whatever
// the checkpoint does; the round trip itself must be exact.

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"troupe/model"
	"troupe/torch"
)

func cudaDevice(t *testing.T) torch.Device {
	t.Helper()
	if os.Getenv("TROUPE_CUDA") != "1" {
		t.Skip("set TROUPE_CUDA=1 on a GPU machine to run the CUDA checkpoint checks")
	}
	if !torch.CUDAAvailable() {
		t.Fatal("TROUPE_CUDA=1 but libtorch sees no CUDA device (is LD_LIBRARY_PATH pointing at a shim built with scripts/gpu/build-shim.sh?)")
	}
	return torch.CUDA(0)
}

// trainedOn returns a bf16 model on dev with a master-weight optimizer that
// has taken one step.
func trainedOn(t *testing.T, dev torch.Device, seed uint64) (*model.Model, *torch.AdamW) {
	t.Helper()
	m, err := model.New(tinyConfig(), seed, model.Options{DType: torch.BFloat16, Device: dev})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Free)
	m.SetRequiresGrad(true)
	opt := torch.NewAdamW([]torch.AdamWGroup{{Params: m.Parameters(), LR: 1e-2, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8, WeightDecay: 0.1}}, true)
	t.Cleanup(opt.Free)
	var err2 error
	func() {
		defer torch.Recover(&err2)
		s := torch.NewScope()
		defer s.Close()
		in, err := model.Pack(batches[0], model.PadRight, dev)
		if err != nil {
			err2 = err
			return
		}
		logp, _, err := m.TokenLogProbs(in, model.ShiftTargets(in), in.Valid, model.LogProbOptions{})
		if err != nil {
			err2 = err
			return
		}
		logp.Sum().Neg().Backward()
		opt.Step()
		opt.ZeroGrad()
	}()
	if err2 != nil {
		t.Fatal(err2)
	}
	return m, opt
}

func TestCUDAModelStateRoundTrip(t *testing.T) {
	dev := cudaDevice(t)
	m, opt := trainedOn(t, dev, 1)
	dir := filepath.Join(t.TempDir(), "policy")
	if err := SaveModelState(dir, m, opt); err != nil {
		t.Fatal(err)
	}

	fresh, freshOpt := trainedOn(t, dev, 2)
	if err := LoadModelState(dir, fresh, freshOpt); err != nil {
		t.Fatal(err)
	}
	if diff := diffBytes(weightBytes(m), weightBytes(fresh)); len(diff) > 0 {
		t.Errorf("weights differ after a CUDA round trip: %v", diff)
	}
	if !reflect.DeepEqual(optimizerDump(opt), optimizerDump(freshOpt)) {
		t.Error("optimizer state differs after a CUDA round trip")
	}

	// The files do not depend on the device: the same checkpoint loads into
	// a CPU model with the same bytes.
	onCPU, cpuOpt := trainedOn(t, torch.CPU, 3)
	if err := LoadModelState(dir, onCPU, cpuOpt); err != nil {
		t.Fatal(err)
	}
	if diff := diffBytes(weightBytes(m), weightBytes(onCPU)); len(diff) > 0 {
		t.Errorf("CPU load of a CUDA checkpoint differs: %v", diff)
	}
	if !reflect.DeepEqual(optimizerDump(opt), optimizerDump(cpuOpt)) {
		t.Error("CPU load of a CUDA checkpoint: optimizer state differs")
	}
}

func TestCUDAGeneratorState(t *testing.T) {
	dev := cudaDevice(t)
	g := torch.NewGenerator(dev, 11)
	defer g.Free()
	drawOn := func(g *torch.Generator) []float32 {
		s := torch.NewScope()
		defer s.Close()
		return torch.Rand([]int64{16}, torch.Float32, dev, g).Float32s()
	}
	drawOn(g)
	path := filepath.Join(t.TempDir(), RNGFileName)
	if err := SaveGenerators(path, map[string]*torch.Generator{"sample": g}); err != nil {
		t.Fatal(err)
	}
	want := drawOn(g)
	h := torch.NewGenerator(dev, 99)
	defer h.Free()
	if err := LoadGenerators(path, map[string]*torch.Generator{"sample": h}); err != nil {
		t.Fatal(err)
	}
	if got := drawOn(h); !equalFloats(got, want) {
		t.Errorf("restored CUDA generator draws %v, want %v", got, want)
	}
	cpu := torch.NewGenerator(torch.CPU, 1)
	defer cpu.Free()
	err := LoadGenerators(path, map[string]*torch.Generator{"sample": cpu})
	if err == nil || !strings.Contains(err.Error(), "another device") {
		t.Errorf("a CUDA generator state loaded into a CPU generator: %v", err)
	}
}

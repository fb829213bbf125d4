// rng.go: the state of the run's torch generators in a checkpoint, as one
// safetensors file with one uint8 tensor per named generator (its full
// libtorch state: the Mersenne Twister state of a CPU generator, seed and
// offset of a CUDA one) and the seeds in the metadata for people reading it.
//
// Go-side random state (math/rand seeds, data-order cursors) is not a
// tensor: keep it in the train state JSON (files.go).
//
// Not here: the global generator (torch.ManualSeed). troupe's sampling and
// data noise draw from explicit generators, so the global one carries no state
// a resume needs; code that draws from it cannot resume exactly.
package ckpt

import (
	"fmt"
	"sort"
	"strconv"

	"troupe/safetensors"
	"troupe/torch"
)

// RNGFileName is the generators' file name inside a checkpoint.
const RNGFileName = "rng.safetensors"

// rngFormat marks a file written by SaveGenerators.
const rngFormat = "troupe.generators.v1"

// SaveGenerators writes the state of every named generator to path (one
// safetensors file, written atomically).
func SaveGenerators(path string, gens map[string]*torch.Generator) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("ckpt: saving generator state to %s: %w", path, err)
		}
	}()
	meta := map[string]string{"format": rngFormat}
	var tensors []safetensors.Tensor
	for _, name := range sortedNames(gens) {
		g := gens[name]
		if g == nil {
			return fmt.Errorf("generator %q is nil", name)
		}
		var state []byte
		var seed uint64
		func() {
			defer torch.Recover(&err)
			s := torch.NewScope()
			defer s.Close()
			state = g.State().Bytes()
			seed = g.Seed()
		}()
		if err != nil {
			return fmt.Errorf("generator %q: %w", name, err)
		}
		meta["seed."+name] = strconv.FormatUint(seed, 10)
		tensors = append(tensors, safetensors.TensorFromBytes(name, safetensors.U8, []int64{int64(len(state))}, state))
	}
	return safetensors.Write(path, tensors, meta)
}

// LoadGenerators restores every named generator from path. The file must
// hold exactly these names, each with a state of the generator's own size
// (a CPU state cannot be loaded into a CUDA generator). On any mismatch no
// generator is changed.
func LoadGenerators(path string, gens map[string]*torch.Generator) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("ckpt: generator state %s: %w", path, err)
		}
	}()
	f, err := safetensors.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if got := f.Metadata()["format"]; got != rngFormat {
		return fmt.Errorf("not a generator state file: metadata format is %q, want %q", got, rngFormat)
	}
	names := sortedNames(gens)
	for _, name := range names {
		g := gens[name]
		if g == nil {
			return fmt.Errorf("generator %q is nil", name)
		}
		info, ok := f.Info(name)
		if !ok {
			return fmt.Errorf("no state for generator %q (the file has %s)", name, listSome(f.Names(), 5))
		}
		var size int64
		func() {
			defer torch.Recover(&err)
			s := torch.NewScope()
			defer s.Close()
			size = g.State().Numel()
		}()
		if err != nil {
			return fmt.Errorf("generator %q: %w", name, err)
		}
		if info.DType != safetensors.U8 || len(info.Shape) != 1 || info.Shape[0] != size {
			return fmt.Errorf("generator %q: saved state is %v %v, this generator's is U8 [%d]: it was saved for a generator of another device", name, info.DType, info.Shape, size)
		}
	}
	if f.Len() != len(names) {
		var extra []string
		for _, n := range f.Names() {
			if _, ok := gens[n]; !ok {
				extra = append(extra, n)
			}
		}
		return fmt.Errorf("state for generators not given: %s", listSome(extra, 5))
	}
	defer torch.Recover(&err)
	for _, name := range names {
		data, err := f.Bytes(name)
		if err != nil {
			return err
		}
		setState(gens[name], data)
	}
	return nil
}

func setState(g *torch.Generator, data []byte) {
	s := torch.NewScope()
	defer s.Close()
	g.SetState(torch.FromBytes(data, torch.Uint8, int64(len(data))))
}

func sortedNames(gens map[string]*torch.Generator) []string {
	names := make([]string, 0, len(gens))
	for n := range gens {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

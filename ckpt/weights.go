// weights.go: a model's weights in a checkpoint, saved exactly and loaded
// back into the live model in place.
//
// SaveWeights writes a Hugging Face-shaped directory — config.json and
// model.safetensors (or shards with an index past model.DefaultShardBytes) —
// with every tensor in its own dtype, byte for byte what the model holds, so
// resuming from it is bit-identical and model.Load can also open it (for
// `train eval` on a checkpoint). LoadWeights copies the tensors into the
// existing model's tensors under NoGrad: the *torch.Tensor handles an
// optimizer holds stay valid.
//
// Loading is strict and checks everything before it writes anything: a
// missing tensor, an unexpected one, a shape or a dtype mismatch is refused
// with the tensor's name and both values, and the model is left untouched.
// (model.Load converts dtypes on purpose; a checkpoint must not: a bf16 model
// resumed from f32 weights would not continue the same run.)
//
// Deliberately not here: conversion between dtypes or devices of the saved
// copy (the weights are written in the model's own dtype; Export converts),
// optimizer state (optimizer.go; with master weights, LoadWeights alone is
// not a resume — the optimizer's float32 masters must be loaded too, or the
// next step overwrites the loaded weights with stale masters).
package ckpt

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"troupe/model"
	"troupe/safetensors"
	"troupe/torch"
)

// ConfigFileName is the Hugging Face config file written next to weights.
const ConfigFileName = "config.json"

// SaveWeights writes m's config.json and weights into dir (created if
// missing) in the model's own dtype, byte for byte.
func SaveWeights(dir string, m *model.Model) error {
	if err := m.Save(dir, m.DType(), model.DefaultShardBytes); err != nil {
		return fmt.Errorf("ckpt: saving weights to %s: %w", dir, err)
	}
	return nil
}

// LoadWeights copies the weights saved in dir (by SaveWeights) into m's
// tensors in place. Names, shapes and dtypes must match exactly; on any
// mismatch m is left as it was.
func LoadWeights(dir string, m *model.Model) error {
	w, err := openWeights(dir, m)
	if err != nil {
		return err
	}
	defer w.close()
	return w.load()
}

// savedWeights is a weights directory checked against a live model, ready
// to copy.
type savedWeights struct {
	dir    string
	md     tensorFile
	params []model.Param
}

// tensorFile is a safetensors model directory or a single file.
type tensorFile interface {
	Info(name string) (safetensors.TensorInfo, bool)
	Names() []string
	Bytes(name string) ([]byte, error)
	Close() error
}

// openTensors opens the weights m.Save wrote in dir: a model directory, or
// for an adapter's view the PEFT adapter file.
func openTensors(dir string, m *model.Model) (tensorFile, error) {
	if m.Adapter() != nil {
		return safetensors.Open(filepath.Join(dir, model.AdapterWeightsFile))
	}
	return safetensors.OpenModelDir(dir)
}

// openWeights opens dir's weights and checks them against m; it changes
// nothing.
func openWeights(dir string, m *model.Model) (*savedWeights, error) {
	md, err := openTensors(dir, m)
	if err != nil {
		return nil, fmt.Errorf("ckpt: weights in %s: %w", dir, err)
	}
	params := m.Params()
	if err := matchWeights(md, params); err != nil {
		md.Close()
		return nil, fmt.Errorf("ckpt: weights in %s: %w", dir, err)
	}
	return &savedWeights{dir: dir, md: md, params: params}, nil
}

// load copies every checked tensor into the model, with grad mode off.
func (w *savedWeights) load() (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("ckpt: copying weights from %s (the model may be partly overwritten; reload it): %w", w.dir, err)
		}
	}()
	defer torch.Recover(&err)
	torch.NoGrad(func() {
		for _, p := range w.params {
			copyInto(w.md, p)
		}
	})
	return nil
}

func (w *savedWeights) close() { w.md.Close() }

// matchWeights checks that md holds exactly params' names, with their
// shapes and dtypes.
func matchWeights(md tensorFile, params []model.Param) error {
	want := make(map[string]bool, len(params))
	var first string
	differ := 0
	for _, p := range params {
		want[p.Name] = true
		info, ok := md.Info(p.Name)
		if !ok {
			return fmt.Errorf("missing tensor %s (the model has %v %v): the checkpoint was saved from a different model config", p.Name, p.T.DType(), p.T.Shape())
		}
		dt, err := model.TorchDType(info.DType)
		if err != nil {
			return fmt.Errorf("tensor %s: %w", p.Name, err)
		}
		if data, err := md.Bytes(p.Name); err != nil {
			return fmt.Errorf("tensor %s: %w", p.Name, err)
		} else if err := safetensors.CheckWeight(p.Name, info.DType, data); err != nil {
			return err
		}
		if !slices.Equal(info.Shape, p.T.Shape()) || dt != p.T.DType() {
			if differ == 0 {
				first = fmt.Sprintf("tensor %s is %v %v in the checkpoint, the model has %v %v", p.Name, dt, info.Shape, p.T.DType(), p.T.Shape())
			}
			differ++
		}
	}
	if differ > 0 {
		more := ""
		if differ > 1 {
			more = fmt.Sprintf(" (and %d more tensors differ)", differ-1)
		}
		return fmt.Errorf("%s%s: the checkpoint was saved from a different model config or dtype; resume with the config it was saved with", first, more)
	}
	var extra []string
	for _, name := range md.Names() {
		if !want[name] {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		return fmt.Errorf("unexpected tensors the model does not have: %s: the checkpoint was saved from a different model config", listSome(extra, 5))
	}
	return nil
}

// copyInto copies one checked tensor from md into p.T (grad mode off).
func copyInto(md tensorFile, p model.Param) {
	s := torch.NewScope()
	defer s.Close()
	data, err := md.Bytes(p.Name)
	if err != nil {
		panic(&torch.Error{Op: "load " + p.Name, Msg: err.Error()})
	}
	p.T.CopyFrom(torch.FromBytes(data, p.T.DType(), p.T.Shape()...))
}

// listSome joins up to n names, sorted, and says how many more there are.
func listSome(names []string, n int) string {
	names = append([]string(nil), names...)
	sort.Strings(names)
	if len(names) > n {
		return strings.Join(names[:n], ", ") + fmt.Sprintf(" … (%d more)", len(names)-n)
	}
	return strings.Join(names, ", ")
}

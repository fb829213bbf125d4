// modelstate.go: one trained model's part of a checkpoint — its weights and
// its optimizer state in one directory, conventionally models/<name>/ inside
// the checkpoint:
//
//	models/<name>/config.json
//	models/<name>/model.safetensors        (weights.go)
//	models/<name>/optimizer.safetensors    (optimizer.go)
//
// The optimizer's parameters are named by matching its tensors to the
// model's (OptimizerNames), so the optimizer may list them in any order and
// grouping, as long as it was built from the model's own tensors.
//
// LoadModelState checks the weights and the optimizer state against the live
// model and optimizer before it changes either, so a mismatched checkpoint
// leaves both as they were.
//
// Not here: the train state, generators and config, which belong to the run
// rather than to one model (files.go, rng.go).
package ckpt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"troupe/model"
)

// ModelStateDir is the slash-separated directory of the named model's state
// inside a checkpoint: models/<name>. Use it with Writer.Path and
// Checkpoint.Path.
func ModelStateDir(name string) string { return path.Join("models", name) }

// CheckModelName checks that name can name a model's directory: a
// single path element, not hidden.
func CheckModelName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return fmt.Errorf("ckpt: model name %q must be a plain file name (no slashes, not starting with '.')", name)
	}
	return nil
}

// SaveModelState writes m's weights and, when opt is not nil, its state into
// dir (created if missing).
func SaveModelState(dir string, m *model.Model, opt Optimizer) error {
	var names []string
	if opt != nil {
		var err error
		if names, err = OptimizerNames(m, opt); err != nil {
			return err
		}
	}
	if err := SaveWeights(dir, m); err != nil {
		return err
	}
	if opt == nil {
		return nil
	}
	return SaveOptimizer(filepath.Join(dir, OptimizerFileName), opt, names)
}

// LoadModelState restores m's weights and, when opt is not nil, its state
// from dir. A directory saved without optimizer state restores only the
// weights when opt is nil, and is an error otherwise.
func LoadModelState(dir string, m *model.Model, opt Optimizer) error {
	w, err := openWeights(dir, m)
	if err != nil {
		return err
	}
	defer w.close()
	var o *optimizerState
	if opt != nil {
		names, err := OptimizerNames(m, opt)
		if err != nil {
			return err
		}
		p := filepath.Join(dir, OptimizerFileName)
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("ckpt: %s has weights but no %s: it was saved without optimizer state; resume needs it (load the weights alone with LoadWeights to start a fresh optimizer)", dir, OptimizerFileName)
		}
		if o, err = openOptimizerState(p, opt, names); err != nil {
			return err
		}
		defer o.close()
	}
	if err := w.load(); err != nil {
		return err
	}
	if o == nil {
		return nil
	}
	return o.load()
}

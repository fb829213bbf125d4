// optimizer.go: AdamW state in a checkpoint, as one safetensors file keyed
// by parameter name.
//
//	<param>.exp_avg      first moment   (float32; float64 for a float64 parameter)
//	<param>.exp_avg_sq   second moment  (same dtype)
//	<param>.master       float32 master copy, only when the optimizer keeps one
//	__metadata__: format = "troupe.adamw.v1",
//	              steps  = {"<param>": <step count>, ...} (JSON, every parameter)
//
// The moments are written in the dtype the optimizer keeps them in, so a
// resume continues bit for bit. A parameter that has not stepped yet (step 0)
// has no moments in the file and loads back as "no state", as in
// torch.optim. Learning rates and the other hyperparameters are not saved:
// they come from the run's config, and the schedule from the step.
//
// Loading is strict and checks the whole file before it changes anything:
// the saved parameter names must be exactly the ones given, every tensor must
// have the parameter's shape and the expected dtype, and a master copy must be
// present exactly when the optimizer keeps one (a missing master would let
// the stale copy made at NewAdamW overwrite the loaded weights at the next
// step). Errors name the parameter and both values.
//
// The state comes from and goes to an Optimizer: *torch.AdamW, or any view
// that answers for it parameter by parameter (policy's sharded trainers
// gather theirs for saving and load it slice by slice).
//
// Not here: the weights themselves (weights.go).
package ckpt

import (
	"encoding/json"
	"fmt"
	"slices"

	"troupe/model"
	"troupe/safetensors"
	"troupe/torch"
)

// OptimizerFileName is the optimizer state's file name inside a model's
// checkpoint directory.
const OptimizerFileName = "optimizer.safetensors"

// optimizerFormat marks a file written by SaveOptimizer.
const optimizerFormat = "troupe.adamw.v1"

// The tensor-name suffixes of one parameter's state.
const (
	expAvgSuffix   = ".exp_avg"
	expAvgSqSuffix = ".exp_avg_sq"
	masterSuffix   = ".master"
)

// Optimizer is the per-parameter AdamW state saved and loaded here:
// Params lists the parameters; State(i) returns parameter i's state as
// tensors of the parameter's shape (in the caller's scope), and
// LoadState(i, s) takes it back.
type Optimizer interface {
	Params() []*torch.Tensor
	State(i int) torch.AdamWState
	LoadState(i int, s torch.AdamWState)
}

// OptimizerNames names opt's parameters by the model's checkpoint keys, in
// opt.Params() order, matching the *torch.Tensor values themselves (the
// optimizer must have been built from m.Parameters() or m.Params()' tensors).
func OptimizerNames(m *model.Model, opt Optimizer) ([]string, error) {
	byTensor := map[*torch.Tensor]string{}
	for _, p := range m.Params() {
		byTensor[p.T] = p.Name
	}
	var names []string
	for i, t := range opt.Params() {
		name, ok := byTensor[t]
		if !ok {
			return nil, fmt.Errorf("ckpt: optimizer parameter %d (%v) is not one of the model's weight tensors; build the optimizer from m.Parameters(), or pass names to SaveOptimizer yourself", i, t)
		}
		names = append(names, name)
	}
	return names, nil
}

// paramState is what the header of one parameter's saved state looks like.
type paramState struct {
	name       string
	step       int64
	shape      []int64
	momentType torch.DType
	moments    bool // exp_avg and exp_avg_sq present
	master     bool
}

// describeState reads the step counts and which state tensors opt holds.
func describeState(opt Optimizer, names []string) []paramState {
	s := torch.NewScope()
	defer s.Close()
	out := make([]paramState, len(names))
	for i, p := range opt.Params() {
		st := opt.State(i)
		out[i] = paramState{name: names[i], step: st.Step, shape: p.Shape(),
			momentType: momentDType(p.DType()), moments: st.ExpAvg != nil, master: st.Master != nil}
	}
	return out
}

// momentDType is the dtype the optimizer keeps a parameter's moments in.
func momentDType(param torch.DType) torch.DType {
	if param == torch.Float64 {
		return torch.Float64
	}
	return torch.Float32
}

// SaveOptimizer writes opt's state to path (one safetensors file, written
// atomically); names[i] names opt.Params()[i] (see OptimizerNames).
func SaveOptimizer(path string, opt Optimizer, names []string) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("ckpt: saving optimizer state to %s: %w", path, err)
		}
	}()
	if err := checkParamNames(opt, names); err != nil {
		return err
	}
	var states []paramState
	func() {
		defer torch.Recover(&err)
		states = describeState(opt, names)
	}()
	if err != nil {
		return err
	}
	steps := map[string]int64{}
	var tensors []safetensors.Tensor
	add := func(i int, suffix string, dt torch.DType) error {
		sdt, err := model.SafetensorsDType(dt)
		if err != nil {
			return err
		}
		tensors = append(tensors, safetensors.Tensor{
			Name: names[i] + suffix, DType: sdt, Shape: states[i].shape,
			Bytes: func() ([]byte, error) { return stateBytes(opt, i, suffix) },
		})
		return nil
	}
	for i, st := range states {
		steps[st.name] = st.step
		if st.moments {
			if err := add(i, expAvgSuffix, st.momentType); err != nil {
				return err
			}
			if err := add(i, expAvgSqSuffix, st.momentType); err != nil {
				return err
			}
		}
		if st.master {
			if err := add(i, masterSuffix, torch.Float32); err != nil {
				return err
			}
		}
	}
	stepsJSON, err := json.Marshal(steps)
	if err != nil {
		return err
	}
	return safetensors.Write(path, tensors, map[string]string{"format": optimizerFormat, "steps": string(stepsJSON)})
}

// stateBytes copies one state tensor of parameter i to host bytes.
func stateBytes(opt Optimizer, i int, suffix string) (b []byte, err error) {
	defer torch.Recover(&err)
	s := torch.NewScope()
	defer s.Close()
	st := opt.State(i)
	t := map[string]*torch.Tensor{expAvgSuffix: st.ExpAvg, expAvgSqSuffix: st.ExpAvgSq, masterSuffix: st.Master}[suffix]
	if t == nil {
		return nil, fmt.Errorf("parameter %d lost its %s state while saving", i, suffix)
	}
	return t.Bytes(), nil
}

// checkParamNames checks there is one unique, non-empty name per parameter.
func checkParamNames(opt Optimizer, names []string) error {
	if n := len(opt.Params()); len(names) != n {
		return fmt.Errorf("%d parameter names for an optimizer of %d parameters", len(names), n)
	}
	seen := map[string]int{}
	for i, name := range names {
		if name == "" {
			return fmt.Errorf("parameter %d has an empty name", i)
		}
		if j, dup := seen[name]; dup {
			return fmt.Errorf("parameters %d and %d are both named %s", j, i, name)
		}
		seen[name] = i
	}
	return nil
}

// LoadOptimizer restores opt's state from a file written by SaveOptimizer;
// names[i] names opt.Params()[i]. On any mismatch opt is left as it was.
func LoadOptimizer(path string, opt Optimizer, names []string) error {
	o, err := openOptimizerState(path, opt, names)
	if err != nil {
		return err
	}
	defer o.close()
	return o.load()
}

// optimizerState is an optimizer state file checked against a live
// optimizer, ready to load.
type optimizerState struct {
	path  string
	f     *safetensors.File
	opt   Optimizer
	steps map[string]int64
	live  []paramState
}

// openOptimizerState opens path and checks it against opt (see the file
// comment); it changes nothing.
func openOptimizerState(path string, opt Optimizer, names []string) (o *optimizerState, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("ckpt: optimizer state %s: %w", path, err)
		}
	}()
	if err := checkParamNames(opt, names); err != nil {
		return nil, err
	}
	f, err := safetensors.Open(path)
	if err != nil {
		return nil, err
	}
	o = &optimizerState{path: path, f: f, opt: opt}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	if o.steps, err = readSteps(f); err != nil {
		return nil, err
	}
	func() {
		defer torch.Recover(&err)
		o.live = describeState(opt, names)
	}()
	if err != nil {
		return nil, err
	}
	if err := matchOptimizer(f, o.steps, o.live); err != nil {
		return nil, err
	}
	return o, nil
}

// load copies the checked state into the optimizer.
func (o *optimizerState) load() (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("ckpt: loading optimizer state %s (the optimizer may be partly overwritten): %w", o.path, err)
		}
	}()
	defer torch.Recover(&err)
	for i, st := range o.live {
		loadParamState(o.f, o.opt, i, st, o.steps[st.name])
	}
	return nil
}

func (o *optimizerState) close() { o.f.Close() }

// OptimizerStepCount reads the step counts of an optimizer state file and
// returns the highest: the optimizer steps its state has seen (a parameter
// that missed some, having had no gradient, counts fewer). A resume checks
// it against the train state's count of applied steps.
func OptimizerStepCount(path string) (int64, error) {
	f, err := safetensors.Open(path)
	if err != nil {
		return 0, fmt.Errorf("ckpt: optimizer state %s: %w", path, err)
	}
	defer f.Close()
	steps, err := readSteps(f)
	if err != nil {
		return 0, fmt.Errorf("ckpt: optimizer state %s: %w", path, err)
	}
	var n int64
	for _, s := range steps {
		n = max(n, s)
	}
	return n, nil
}

// readSteps checks the header's format and reads the step counts.
func readSteps(f *safetensors.File) (map[string]int64, error) {
	meta := f.Metadata()
	if meta["format"] != optimizerFormat {
		return nil, fmt.Errorf("not an optimizer state file: metadata format is %q, want %q", meta["format"], optimizerFormat)
	}
	var steps map[string]int64
	if err := json.Unmarshal([]byte(meta["steps"]), &steps); err != nil {
		return nil, fmt.Errorf("metadata steps: %v", err)
	}
	for name, s := range steps {
		if s < 0 {
			return nil, fmt.Errorf("metadata steps: parameter %s has step %d, must be >= 0", name, s)
		}
	}
	return steps, nil
}

// matchOptimizer checks the file against the live optimizer: the same
// parameter names, and for each the tensors its step and master setting
// imply, with the parameter's shape and the expected dtype.
func matchOptimizer(f *safetensors.File, steps map[string]int64, live []paramState) error {
	expected := map[string]bool{}
	for _, st := range live {
		step, ok := steps[st.name]
		if !ok {
			return fmt.Errorf("no state for parameter %s: it was saved for a different model or parameter set", st.name)
		}
		_, fileMaster := f.Info(st.name + masterSuffix)
		switch {
		case fileMaster && !st.master:
			return fmt.Errorf("parameter %s has a float32 master copy in the checkpoint, this optimizer keeps none: resume with the master-weights setting and dtype the run was saved with", st.name)
		case !fileMaster && st.master:
			return fmt.Errorf("parameter %s has no float32 master copy in the checkpoint, this optimizer keeps one: resume with the master-weights setting and dtype the run was saved with", st.name)
		}
		want := map[string]torch.DType{}
		if step > 0 {
			want[expAvgSuffix], want[expAvgSqSuffix] = st.momentType, st.momentType
		}
		if st.master {
			want[masterSuffix] = torch.Float32
		}
		for _, suffix := range []string{expAvgSuffix, expAvgSqSuffix, masterSuffix} {
			dt, ok := want[suffix]
			if !ok {
				continue
			}
			name := st.name + suffix
			expected[name] = true
			info, ok := f.Info(name)
			if !ok {
				return fmt.Errorf("missing tensor %s (parameter %s is at step %d)", name, st.name, step)
			}
			got, err := model.TorchDType(info.DType)
			if err != nil {
				return fmt.Errorf("tensor %s: %w", name, err)
			}
			if !slices.Equal(info.Shape, st.shape) {
				return fmt.Errorf("tensor %s has shape %v in the checkpoint, the parameter has %v: it was saved from a different model config", name, info.Shape, st.shape)
			}
			if got != dt {
				return fmt.Errorf("tensor %s is %v in the checkpoint, this optimizer keeps it in %v: resume with the dtype the run was saved with", name, got, dt)
			}
			if data, err := f.Bytes(name); err != nil {
				return fmt.Errorf("tensor %s: %w", name, err)
			} else if err := safetensors.CheckWeight(name, info.DType, data); err != nil {
				return err
			}
		}
	}
	if len(steps) != len(live) {
		have := map[string]bool{}
		for _, st := range live {
			have[st.name] = true
		}
		var extra []string
		for name := range steps {
			if !have[name] {
				extra = append(extra, name)
			}
		}
		return fmt.Errorf("state for parameters this optimizer does not have: %s", listSome(extra, 5))
	}
	var extra []string
	for _, name := range f.Names() {
		if !expected[name] {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		return fmt.Errorf("unexpected tensors (state for a step count of 0, or of unknown parameters): %s", listSome(extra, 5))
	}
	return nil
}

// loadParamState loads one checked parameter's state into opt.
func loadParamState(f *safetensors.File, opt Optimizer, i int, st paramState, step int64) {
	s := torch.NewScope()
	defer s.Close()
	read := func(suffix string, dt torch.DType) *torch.Tensor {
		data, err := f.Bytes(st.name + suffix)
		if err != nil {
			panic(&torch.Error{Op: "load " + st.name + suffix, Msg: err.Error()})
		}
		return torch.FromBytes(data, dt, st.shape...)
	}
	state := torch.AdamWState{Step: step}
	if step > 0 {
		state.ExpAvg = read(expAvgSuffix, st.momentType)
		state.ExpAvgSq = read(expAvgSqSuffix, st.momentType)
	}
	if st.master {
		state.Master = read(masterSuffix, torch.Float32)
	}
	opt.LoadState(i, state)
}

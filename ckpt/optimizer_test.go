package ckpt

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"troupe/safetensors"
	"troupe/torch"
)

// freshOptimizer is an optimizer over the run's parameters with the same
// groups and setting, and no state.
func freshOptimizer(r *run, master bool) *torch.AdamW {
	var matrices, vectors []*torch.Tensor
	for _, p := range r.m.Params() {
		if p.T.Dim() == 2 {
			matrices = append(matrices, p.T)
		} else {
			vectors = append(vectors, p.T)
		}
	}
	return torch.NewAdamW([]torch.AdamWGroup{
		{Params: vectors, LR: 3e-3, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8},
		{Params: matrices, LR: 1e-2, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8, WeightDecay: 0.1},
	}, master)
}

// The file holds the live state's bytes under the documented names, the
// step counts in the metadata, nothing for a parameter that never stepped;
// loading it into a fresh optimizer reproduces the state exactly.
func TestOptimizerRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name   string
		dtype  torch.DType
		master bool
	}{{"f32", torch.Float32, false}, {"bf16-master", torch.BFloat16, true}} {
		t.Run(tc.name, func(t *testing.T) {
			r := startRun(t, 1, 7, tc.dtype, tc.master)
			r.step(t)
			r.step(t)
			names, err := OptimizerNames(r.m, r.opt)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), OptimizerFileName)
			checkNoLeak(t, "SaveOptimizer", func() {
				if err := SaveOptimizer(path, r.opt, names); err != nil {
					t.Fatal(err)
				}
			})

			f, err := safetensors.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var steps map[string]int64
			if err := json.Unmarshal([]byte(f.Metadata()["steps"]), &steps); err != nil {
				t.Fatal(err)
			}
			if len(steps) != len(names) || steps["model.norm.weight"] != 0 || steps["model.embed_tokens.weight"] != 2 {
				t.Errorf("metadata steps %v", steps)
			}
			wantTensors := 0
			func() {
				s := torch.NewScope()
				defer s.Close()
				for i, name := range names {
					st := r.opt.State(i)
					for suffix, live := range map[string]*torch.Tensor{".exp_avg": st.ExpAvg, ".exp_avg_sq": st.ExpAvgSq, ".master": st.Master} {
						got, err := f.Bytes(name + suffix)
						if live == nil {
							if err == nil {
								t.Errorf("%s%s saved for a state the optimizer does not have", name, suffix)
							}
							continue
						}
						wantTensors++
						if err != nil || string(got) != string(live.Bytes()) {
							t.Errorf("%s%s: saved bytes differ from the live state (%v)", name, suffix, err)
						}
					}
				}
			}()
			if f.Len() != wantTensors {
				t.Errorf("file holds %d tensors, want %d", f.Len(), wantTensors)
			}

			fresh := freshOptimizer(r, tc.master)
			defer fresh.Free()
			checkNoLeak(t, "LoadOptimizer", func() {
				if err := LoadOptimizer(path, fresh, names); err != nil {
					t.Fatal(err)
				}
			})
			if !reflect.DeepEqual(optimizerDump(r.opt), optimizerDump(fresh)) {
				t.Error("loaded optimizer state differs from the saved one")
			}
		})
	}
}

// Mismatches are refused with the parameter's name and both values, and
// leave the optimizer as it was.
func TestLoadOptimizerRefusals(t *testing.T) {
	r := startRun(t, 1, 7, torch.BFloat16, true)
	r.step(t)
	names, err := OptimizerNames(r.m, r.opt)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, OptimizerFileName)
	if err := SaveOptimizer(path, r.opt, names); err != nil {
		t.Fatal(err)
	}
	weights := filepath.Join(dir, "w")
	if err := SaveWeights(weights, r.m); err != nil {
		t.Fatal(err)
	}

	renamed := append([]string(nil), names...)
	renamed[3] = "model.layers.9.mlp.up_proj.weight"

	noMaster := freshOptimizer(r, false)
	defer noMaster.Free()

	wide := tinyConfig()
	wide.IntermediateSize = 64
	other := newModel(t, wide, 1, torch.BFloat16)
	otherOpt := torch.NewAdamW([]torch.AdamWGroup{{Params: other.Parameters(), LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}}, true)
	defer otherOpt.Free()
	otherNames, _ := OptimizerNames(other, otherOpt)

	// an optimizer over the first two parameters only
	subset := torch.NewAdamW([]torch.AdamWGroup{{Params: r.opt.Params()[:2], LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}}, true)
	defer subset.Free()

	for _, tc := range []struct {
		name  string
		path  string
		opt   *torch.AdamW
		names []string
		want  string
	}{
		{"names count", path, r.opt, names[:3], "3 parameter names for an optimizer of"},
		{"duplicate name", path, r.opt, append(append([]string(nil), names[:len(names)-1]...), names[0]), "are both named"},
		{"renamed parameter", path, r.opt, renamed, "no state for parameter model.layers.9.mlp.up_proj.weight"},
		{"fewer parameters", path, subset, names[:2], "state for parameters this optimizer does not have"},
		{"master setting", path, noMaster, names, "has a float32 master copy in the checkpoint, this optimizer keeps none"},
		{"other config", path, otherOpt, otherNames, "has shape [48 32] in the checkpoint, the parameter has [64 32]"},
		{"not an optimizer file", filepath.Join(weights, safetensors.SingleFileName), r.opt, names, `not an optimizer state file: metadata format is "pt"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := optimizerDump(tc.opt)
			err := LoadOptimizer(tc.path, tc.opt, tc.names)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("LoadOptimizer: %v, want an error containing %q", err, tc.want)
			}
			if !reflect.DeepEqual(before, optimizerDump(tc.opt)) {
				t.Error("a refused load changed the optimizer")
			}
		})
	}

	// The other direction of the master check: a checkpoint without masters
	// into an optimizer that keeps them.
	plain := startRun(t, 1, 7, torch.BFloat16, false)
	plainNames, _ := OptimizerNames(plain.m, plain.opt)
	plainPath := filepath.Join(dir, "plain.safetensors")
	if err := SaveOptimizer(plainPath, plain.opt, plainNames); err != nil {
		t.Fatal(err)
	}
	if err := LoadOptimizer(plainPath, r.opt, names); err == nil || !strings.Contains(err.Error(), "has no float32 master copy in the checkpoint, this optimizer keeps one") {
		t.Errorf("masterless checkpoint into a master optimizer: %v", err)
	}
}

// An optimizer built over tensors that are not the model's cannot be named
// automatically.
func TestOptimizerNamesRefusesForeignTensors(t *testing.T) {
	m := newModel(t, tinyConfig(), 1, torch.Float32)
	other := newModel(t, tinyConfig(), 2, torch.Float32)
	opt := torch.NewAdamW([]torch.AdamWGroup{{Params: append(m.Parameters(), other.Embed), LR: 1e-3}}, false)
	defer opt.Free()
	_, err := OptimizerNames(m, opt)
	if err == nil || !strings.Contains(err.Error(), "is not one of the model's weight tensors") {
		t.Fatalf("OptimizerNames: %v", err)
	}
}

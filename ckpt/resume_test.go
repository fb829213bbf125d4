package ckpt

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"troupe/model"
	"troupe/torch"
)

// trainState is what a training loop keeps in train_state.json.
type trainState struct {
	Step       int `json:"step"`
	DataCursor int `json:"data_cursor"`
}

// batches is the fixed data; the cursor walks it, so the data position is
// part of what a resume must restore.
var batches = [][][]int{
	{{1, 2, 3, 4, 5}, {6, 7, 8}},
	{{9, 10, 11}, {12, 13, 14, 15, 16, 17}},
	{{18, 19}, {20, 21, 22, 23}},
	{{24, 25, 26, 27}, {28, 29, 30}},
}

// run is one training process: a tiny model, AdamW over two parameter
// groups in an order other than the model's, one frozen parameter (it never
// steps, so its optimizer state stays empty), and a generator drawing the
// per-token loss weights (the data noise).
type run struct {
	m     *model.Model
	opt   *torch.AdamW
	gen   *torch.Generator
	state trainState
}

func startRun(t *testing.T, modelSeed, genSeed uint64, dt torch.DType, master bool) *run {
	t.Helper()
	m := newModel(t, tinyConfig(), modelSeed, dt)
	m.SetRequiresGrad(true)
	m.Norm.W.SetRequiresGrad(false)
	var matrices, vectors []*torch.Tensor
	for _, p := range m.Params() {
		if p.T.Dim() == 2 {
			matrices = append(matrices, p.T)
		} else {
			vectors = append(vectors, p.T)
		}
	}
	opt := torch.NewAdamW([]torch.AdamWGroup{
		{Params: vectors, LR: 3e-3, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8},
		{Params: matrices, LR: 1e-2, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8, WeightDecay: 0.1},
	}, master)
	gen := torch.NewGenerator(torch.CPU, genSeed)
	t.Cleanup(func() { opt.Free(); gen.Free() })
	return &run{m: m, opt: opt, gen: gen}
}

// step trains on the batch at the cursor: loss = −Σ noise · log p(target).
func (r *run) step(t *testing.T) {
	t.Helper()
	var err error
	func() {
		defer torch.Recover(&err)
		s := torch.NewScope()
		defer s.Close()
		in, e := model.Pack(batches[r.state.DataCursor%len(batches)], model.PadRight, torch.CPU)
		if e != nil {
			err = e
			return
		}
		B, T := in.Shape()
		noise := torch.Randn([]int64{B, T}, torch.Float32, torch.CPU, r.gen) // (B, T)
		logp, _, e := r.m.TokenLogProbs(in, model.ShiftTargets(in), in.Valid, model.LogProbOptions{})
		if e != nil {
			err = e
			return
		}
		logp.Mul(noise).Sum().Neg().Backward()
		r.opt.Step()
		r.opt.ZeroGrad()
	}()
	if err != nil {
		t.Fatal(err)
	}
	r.state.Step++
	r.state.DataCursor++
}

const policyName = "policy"

// save commits a checkpoint of the run the way the training loop does.
func (r *run) save(t *testing.T, root string) *Checkpoint {
	t.Helper()
	w, err := Begin(root, r.state.Step)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for _, err := range []error{
		SaveModelState(w.Path(ModelStateDir(policyName)), r.m, r.opt),
		SaveGenerators(w.Path(RNGFileName), map[string]*torch.Generator{"data": r.gen}),
		SaveJSON(w.Path("train_state.json"), r.state),
		WriteFile(w.Path("config.yaml"), []byte("model: tiny\nlr: 1e-2\n")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	cp, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

// restore loads the latest checkpoint under root into the run; skipRNG
// leaves the generator as it is (a control that must break exactness).
func (r *run) restore(t *testing.T, root string, skipRNG bool) {
	t.Helper()
	cp, err := Latest(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := LoadModelState(cp.Path(ModelStateDir(policyName)), r.m, r.opt); err != nil {
		t.Fatal(err)
	}
	if !skipRNG {
		if err := LoadGenerators(cp.Path(RNGFileName), map[string]*torch.Generator{"data": r.gen}); err != nil {
			t.Fatal(err)
		}
	}
	if err := LoadJSON(cp.Path("train_state.json"), &r.state); err != nil {
		t.Fatal(err)
	}
}

// Four steps in one run and 2 + save + fresh process + load + 2 give
// bit-identical weights, optimizer state and generator state, for float32
// and for bf16 with float32 master weights.
//
// The test goroutine is locked to its OS thread, as a training loop's torch
// goroutine must be: libtorch numbers autograd nodes from a per-thread
// counter and orders the backward pass by those numbers, so a forward whose
// ops land on several OS threads can sum a tensor's incoming gradients in
// another order and round differently (seen here as rare last-bit
// differences in the gradients of the embedding and the first layer when
// other goroutines keep the Go scheduler busy).
func TestResumeIsBitIdentical(t *testing.T) {
	for _, tc := range []struct {
		name   string
		dtype  torch.DType
		master bool
	}{{"f32", torch.Float32, false}, {"bf16-master", torch.BFloat16, true}} {
		t.Run(tc.name, func(t *testing.T) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			straight := startRun(t, 1, 7, tc.dtype, tc.master)
			initial := weightBytes(straight.m)
			for range 4 {
				straight.step(t)
			}
			if changed := diffBytes(initial, weightBytes(straight.m)); len(changed) < len(initial)-1 {
				t.Fatalf("training moved only %d of %d tensors; the test would prove nothing", len(changed), len(initial))
			}

			root := filepath.Join(t.TempDir(), "checkpoints")
			first := startRun(t, 1, 7, tc.dtype, tc.master)
			first.step(t)
			first.step(t)
			first.save(t, root)

			resumed := startRun(t, 99, 12345, tc.dtype, tc.master) // a fresh process: other weights, other noise
			resumed.restore(t, root, false)
			if resumed.state != (trainState{Step: 2, DataCursor: 2}) {
				t.Fatalf("train state %+v after restore", resumed.state)
			}
			resumed.step(t)
			resumed.step(t)

			if diff := diffBytes(weightBytes(straight.m), weightBytes(resumed.m)); len(diff) > 0 {
				t.Errorf("weights differ after resume: %v", diff)
			}
			want, got := optimizerDump(straight.opt), optimizerDump(resumed.opt)
			if !reflect.DeepEqual(want, got) {
				t.Errorf("optimizer state differs after resume")
			}
			if st := frozenState(resumed); st != "step=0 moments=false" {
				t.Errorf("the frozen model.norm.weight has %s after resume, want step=0 moments=false", st)
			}
			if a, b := genState(straight.gen), genState(resumed.gen); a != b {
				t.Error("generator state differs after resume")
			}

			// Control: the same resume without the generator's state diverges,
			// so the comparison above can fail.
			control := startRun(t, 99, 12345, tc.dtype, tc.master)
			control.restore(t, root, true)
			control.step(t)
			if len(diffBytes(weightBytes(straight.m), weightBytes(control.m))) == 0 {
				t.Error("resuming without the generator state matched too: the noise does not reach the weights")
			}
		})
	}
}

// frozenState describes the optimizer state of the frozen model.norm.weight.
func frozenState(r *run) string {
	s := torch.NewScope()
	defer s.Close()
	for i, p := range r.opt.Params() {
		if p == r.m.Norm.W {
			st := r.opt.State(i)
			return fmt.Sprintf("step=%d moments=%v", st.Step, st.ExpAvg != nil)
		}
	}
	return "not in the optimizer"
}

func genState(g *torch.Generator) string {
	s := torch.NewScope()
	defer s.Close()
	return string(g.State().Bytes())
}

// A byte flipped in a committed weight file is refused by the manifest
// before any tensor is read.
func TestCorruptWeightsRefused(t *testing.T) {
	root := t.TempDir()
	r := startRun(t, 1, 7, torch.Float32, false)
	r.step(t)
	cp := r.save(t, root)
	p := cp.Path(ModelStateDir(policyName) + "/model.safetensors")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-3] ^= 0x10
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Latest(root)
	if err == nil || !strings.Contains(err.Error(), "corrupt") || !strings.Contains(err.Error(), "models/policy/model.safetensors") {
		t.Fatalf("Latest on a flipped byte: %v", err)
	}
}

// A checkpoint of a different config is refused naming the tensor and both
// shapes, and leaves the model and optimizer untouched.
func TestOtherConfigRefused(t *testing.T) {
	root := t.TempDir()
	saved := startRun(t, 1, 7, torch.Float32, false)
	saved.step(t)
	saved.save(t, root)

	cfg := tinyConfig()
	cfg.HiddenSize = 48
	m := newModel(t, cfg, 3, torch.Float32)
	opt := torch.NewAdamW([]torch.AdamWGroup{{Params: m.Parameters(), LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}}, false)
	defer opt.Free()
	before := weightBytes(m)
	cp, err := Latest(root)
	if err != nil {
		t.Fatal(err)
	}
	err = LoadModelState(cp.Path(ModelStateDir(policyName)), m, opt)
	for _, want := range []string{"model.embed_tokens.weight", "[272 32]", "[272 48]", "different model config"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("loading a hidden-32 checkpoint into a hidden-48 model: error %v, want it to mention %q", err, want)
		}
	}
	if diff := diffBytes(before, weightBytes(m)); len(diff) > 0 {
		t.Errorf("a refused load changed %v", diff)
	}
}

// Saving and loading a whole checkpoint, many times over, leaves no tensor
// alive.
func TestCheckpointCycleDoesNotLeak(t *testing.T) {
	root := t.TempDir()
	r := startRun(t, 1, 7, torch.BFloat16, true)
	r.step(t)
	r.save(t, root) // warm up anything allocated once per process
	r.restore(t, root, false)
	checkNoLeak(t, "save + restore ×3", func() {
		for range 3 {
			r.save(t, root)
			r.restore(t, root, false)
		}
	})
	checkNoLeak(t, "export", func() {
		if err := Export(filepath.Join(t.TempDir(), "out"), r.m, writeTokenizer(t), ExportOptions{DType: "float32", MaxShardBytes: 30_000}); err != nil {
			t.Fatal(err)
		}
	})
}

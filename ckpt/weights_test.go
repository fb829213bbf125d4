package ckpt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/model"
	"troupe/safetensors"
	"troupe/torch"
)

// SaveWeights writes each tensor's own bytes (compared with the model's
// bytes, not with a second load), and model.Load opens the result.
func TestSaveWeightsIsExact(t *testing.T) {
	for _, dt := range []torch.DType{torch.Float32, torch.BFloat16} {
		m := newModel(t, tinyConfig(), 1, dt)
		dir := filepath.Join(t.TempDir(), "w")
		if err := SaveWeights(dir, m); err != nil {
			t.Fatal(err)
		}
		f, err := safetensors.Open(filepath.Join(dir, safetensors.SingleFileName))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := model.SafetensorsDType(dt)
		for _, p := range m.Params() {
			info, ok := f.Info(p.Name)
			got, _ := f.Bytes(p.Name)
			if !ok || info.DType != want || string(got) != string(p.T.Bytes()) {
				t.Errorf("%v: %s saved as %v, bytes equal %v", dt, p.Name, info.DType, string(got) == string(p.T.Bytes()))
			}
		}
		if f.Len() != len(m.Params()) {
			t.Errorf("%v: %d tensors saved, the model has %d", dt, f.Len(), len(m.Params()))
		}
		f.Close()
		loaded, err := model.Load(dir, model.Options{DType: dt, Device: torch.CPU})
		if err != nil {
			t.Fatalf("%v: model.Load of a checkpoint's weights: %v", dt, err)
		}
		loaded.Free()
	}
}

// LoadWeights writes into the live tensors: an optimizer built before the
// load sees the loaded values through its own references.
func TestLoadWeightsInPlace(t *testing.T) {
	src := newModel(t, tinyConfig(), 1, torch.Float32)
	dir := filepath.Join(t.TempDir(), "w")
	if err := SaveWeights(dir, src); err != nil {
		t.Fatal(err)
	}
	dst := newModel(t, tinyConfig(), 2, torch.Float32)
	dst.SetRequiresGrad(true)
	opt := torch.NewAdamW([]torch.AdamWGroup{{Params: dst.Parameters(), LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}}, false)
	defer opt.Free()
	handles := dst.Parameters()
	checkNoLeak(t, "LoadWeights", func() {
		if err := LoadWeights(dir, dst); err != nil {
			t.Fatal(err)
		}
	})
	if diff := diffBytes(weightBytes(src), weightBytes(dst)); len(diff) > 0 {
		t.Fatalf("loaded weights differ: %v", diff)
	}
	for i, p := range opt.Params() {
		if p != handles[i] || string(p.Bytes()) != string(src.Params()[i].T.Bytes()) {
			t.Fatalf("optimizer parameter %d does not see the loaded weights", i)
		}
		if !p.RequiresGrad() {
			t.Fatalf("parameter %d lost requires_grad", i)
		}
	}
}

// Each kind of mismatch is refused with the tensor's name and both values,
// and leaves the model as it was.
func TestLoadWeightsRefusals(t *testing.T) {
	save := func(cfg model.Config, dt torch.DType) string {
		m := newModel(t, cfg, 1, dt)
		dir := filepath.Join(t.TempDir(), "w")
		if err := SaveWeights(dir, m); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	base := tinyConfig()
	untied := base
	tied := base
	tied.TieEmbeddings = true
	qwen2 := base
	qwen2.Family, qwen2.HeadDim, qwen2.AttentionBias = model.Qwen2, 8, true // hidden 32 = 4 heads × 8

	for _, tc := range []struct {
		name      string
		saved     string
		into      model.Config
		intoDType torch.DType
		want      []string
	}{
		{"other hidden size", save(func() model.Config { c := base; c.HiddenSize = 48; return c }(), torch.Float32), base, torch.Float32,
			[]string{"tensor model.embed_tokens.weight is float32 [272 48] in the checkpoint, the model has float32 [272 32]", "more tensors differ"}},
		{"other dtype", save(base, torch.BFloat16), base, torch.Float32,
			[]string{"is bfloat16 [272 32] in the checkpoint, the model has float32 [272 32]"}},
		{"missing tensor", save(qwen2, torch.Float32), base, torch.Float32,
			[]string{"missing tensor model.layers.0.self_attn.q_norm.weight", "[8]"}},
		{"unexpected tensor", save(untied, torch.Float32), tied, torch.Float32,
			[]string{"unexpected tensors the model does not have: lm_head.weight"}},
		{"no weights", t.TempDir(), base, torch.Float32, []string{"model.safetensors"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newModel(t, tc.into, 3, tc.intoDType)
			before := weightBytes(m)
			err := LoadWeights(tc.saved, m)
			for _, want := range tc.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("LoadWeights: %v, want an error containing %q", err, want)
				}
			}
			if diff := diffBytes(before, weightBytes(m)); len(diff) > 0 {
				t.Errorf("a refused load changed %v", diff)
			}
		})
	}
}

// A weights directory with a stray extra file of tensors (a shard of an
// earlier save) is refused by the safetensors directory check, not merged.
func TestLoadWeightsStrayShard(t *testing.T) {
	m := newModel(t, tinyConfig(), 1, torch.Float32)
	dir := filepath.Join(t.TempDir(), "w")
	if err := SaveWeights(dir, m); err != nil {
		t.Fatal(err)
	}
	idx := `{"metadata": {}, "weight_map": {"model.embed_tokens.weight": "model-00001-of-00001.safetensors"}}`
	if err := os.WriteFile(filepath.Join(dir, safetensors.IndexFileName), []byte(idx), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := LoadWeights(dir, m); err == nil {
		t.Fatal("LoadWeights accepted a directory with both a single file and an index")
	}
}

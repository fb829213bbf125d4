package model

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/safetensors"
	"troupe/torch"
)

func loraCfg(seed uint64, targets ...string) LoRAConfig {
	if len(targets) == 0 {
		targets = LoRATargets
	}
	return LoRAConfig{Rank: 4, Alpha: 8, Targets: targets, Seed: seed}
}

// newAdapter attaches an adapter whose B is drawn at random (a fresh
// adapter's B is zero, which would hide a wrong update).
func newAdapter(t *testing.T, m *Model, cfg LoRAConfig) *Adapter {
	t.Helper()
	a, err := m.NewAdapter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g := torch.NewGenerator(torch.CPU, cfg.Seed+1000)
	defer g.Free()
	torch.NoGrad(func() {
		for _, p := range a.Params() {
			if strings.HasSuffix(p.Name, "lora_B.weight") {
				scoped(func() {
					p.T.CopyFrom(torch.Randn(p.T.Shape(), torch.Float32, torch.CPU, g).MulScalar(0.2).ToDType(p.T.DType()))
				})
			}
		}
	})
	return a
}

var loraSeqs = [][]int{{1, 2, 3, 4, 5}, {9, 8, 7}, {30, 31, 32, 33}, {7}}

// A fresh adapter (B = 0) leaves every logit of the base unchanged.
func TestLoRAFreshAdapterIsTheBase(t *testing.T) {
	noLeaks(t)
	for _, f := range families {
		m := newTiny(t, f, 40, cpu32)
		a, err := m.NewAdapter(loraCfg(1))
		if err != nil {
			t.Fatal(err)
		}
		if a.NumParams() == 0 {
			t.Fatal("an adapter on every projection has no parameters")
		}
		for _, s := range loraSeqs {
			if d := maxAbs(rowLogits(t, a.Model(), s), rowLogits(t, m, s)); d != 0 {
				t.Fatalf("%s: a fresh adapter changes the logits by %g", f, d)
			}
		}
	}
}

// The adapter's forward equals the forward of the merged weights W + s·B·A
// (float32, 1e-5), for every target set, with plain and rsLoRA scaling.
func TestLoRAForwardEqualsMergedWeights(t *testing.T) {
	noLeaks(t)
	for _, f := range families {
		for i, cfg := range []LoRAConfig{loraCfg(2), loraCfg(3, "q_proj", "v_proj"), loraCfg(4, "down_proj"), {Rank: 2, Alpha: 3, Targets: []string{"o_proj", "up_proj"}, RSLoRA: true, Seed: 5}} {
			m := newTiny(t, f, 41, cpu32)
			a := newAdapter(t, m, cfg)
			merged, err := a.Merged()
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range loraSeqs {
				got, want := rowLogits(t, a.Model(), s), rowLogits(t, merged, s)
				if e := relErr(got, want); e > 1e-5 {
					t.Fatalf("%s config %d: adapter forward vs merged weights: relative error %g", f, i, e)
				}
				if d := maxAbs(got, rowLogits(t, m, s)); d < 1e-3 {
					t.Fatalf("%s config %d: the adapter barely changes the logits (%g): the test would not see a wrong update", f, i, d)
				}
			}
			merged.Free()
		}
	}
}

// Gradients reach the adapter's A and B and no base weight.
func TestLoRAGradientsReachOnlyTheAdapter(t *testing.T) {
	noLeaks(t)
	for _, f := range families {
		m := newTiny(t, f, 42, cpu32)
		a := newAdapter(t, m, loraCfg(6))
		v := a.Model()
		v.SetRequiresGrad(true)
		scoped(func() {
			in, _ := Pack(loraSeqs, PadRight, torch.CPU)
			lp, _, err := v.TokenLogProbs(in, ShiftTargets(in), in.Valid, LogProbOptions{})
			if err != nil {
				t.Fatal(err)
			}
			lp.Sum().Backward()
		})
		scoped(func() {
			for _, p := range v.Params() {
				g := p.T.Grad()
				if g == nil || g.Abs().Sum().Item() == 0 {
					t.Fatalf("%s: adapter tensor %s gets no gradient", f, p.Name)
				}
			}
			for _, p := range m.Params() {
				if g := p.T.Grad(); g != nil && g.Abs().Sum().Item() != 0 {
					t.Fatalf("%s: base weight %s gets a gradient", f, p.Name)
				}
			}
		})
	}
}

// One batch routing its rows through different adapters (and one through
// none) equals running each row through its own adapter's view alone:
// padded logits, token log-probs and a packed forward.
func TestLoRAMixedBatchEqualsSeparateRows(t *testing.T) {
	noLeaks(t)
	for _, f := range families {
		m := newTiny(t, f, 43, cpu32)
		a1 := newAdapter(t, m, loraCfg(7))
		a2 := newAdapter(t, m, LoRAConfig{Rank: 2, Alpha: 4, Targets: []string{"q_proj", "k_proj", "gate_proj"}, Seed: 8})
		ads := []*Adapter{a2, nil, a1, a2}
		viewOf := func(a *Adapter) *Model {
			if a == nil {
				return m
			}
			return a.Model()
		}
		V := m.Config.VocabSize
		scoped(func() {
			in, _ := Pack(loraSeqs, PadRight, torch.CPU)
			in.Adapters = ads
			lg, err := m.Logits(in)
			if err != nil {
				t.Fatal(err)
			}
			T := int(in.IDs.Size(1))
			all := lg.Float32s()
			for b, s := range loraSeqs {
				want := rowLogits(t, viewOf(ads[b]), s)
				got := all[b*T*V : (b*T+len(s))*V]
				if e := maxAbs(got, want); e > 1e-5 {
					t.Fatalf("%s: padded row %d through its adapter: max difference %g", f, b, e)
				}
			}
			// token log-probs, as the update computes them
			lp, _, err := m.TokenLogProbs(in, ShiftTargets(in), in.Valid, LogProbOptions{})
			if err != nil {
				t.Fatal(err)
			}
			mixed := lp.Float32s()
			for b, s := range loraSeqs {
				one, _ := Pack([][]int{s}, PadRight, torch.CPU)
				lp1, _, err := viewOf(ads[b]).TokenLogProbs(one, ShiftTargets(one), one.Valid, LogProbOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if e := maxAbs(mixed[b*T:b*T+len(s)], lp1.Float32s()); e > 1e-5 {
					t.Fatalf("%s: log-probs of row %d: max difference %g", f, b, e)
				}
			}
			// packed
			p, err := PackSequences(loraSeqs, torch.CPU)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Free()
			p.Adapters = ads
			pl, err := m.PackedLogits(p)
			if err != nil {
				t.Fatal(err)
			}
			flat := pl.Float32s()
			off := 0
			for b, s := range loraSeqs {
				if e := maxAbs(flat[off*V:(off+len(s))*V], rowLogits(t, viewOf(ads[b]), s)); e > 1e-5 {
					t.Fatalf("%s: packed sequence %d: max difference %g", f, b, e)
				}
				off += len(s)
			}
		})
	}
}

// The engine decodes rows of different adapters in one batch, each as its
// adapter's view generates alone; the same prompt through two adapters is
// two prefills, not one shared.
func TestLoRAEngineMixesAdapters(t *testing.T) {
	noLeaks(t)
	for _, f := range families {
		m := newTiny(t, f, 44, cpu32)
		a1, a2 := newAdapter(t, m, loraCfg(9)), newAdapter(t, m, loraCfg(10, "v_proj", "up_proj", "down_proj"))
		reqs := engineRequests()
		pick := []*Adapter{a1, a2, nil, a2, a1, a1, a2, a2} // 0 and 3: one prompt, two adapters; 1 and 6: one prompt, one adapter
		for i := range reqs {
			reqs[i].Adapter = pick[i]
		}
		e := newEngine(t, m, EngineConfig{SlotLen: 32, MaxSlots: 8, SyncEvery: 3})
		got, err := e.Generate(reqs)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range reqs {
			v := m
			if r.Adapter != nil {
				v = r.Adapter.Model()
			}
			want, err := v.Generate([]GenRequest{r.GenRequest}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			sameOrNearTie(t, v, fmt.Sprintf("%s request %d", f, i), r.Prompt, got[i], want[0])
		}
		if st := e.Stats(); st.SharedPrompts != 1 {
			t.Fatalf("%s: %d shared prefills, want 1: requests 1 and 6 (same prompt and adapter), not 0 and 3 (same prompt, different adapters)", f, st.SharedPrompts)
		}
		// a view's engine routes through its adapter by default
		ev := newEngine(t, a2.Model(), EngineConfig{SlotLen: 32, MaxSlots: 4})
		r := reqs[1]
		r.Adapter = nil
		out, err := ev.Generate([]EngineRequest{r})
		if err != nil {
			t.Fatal(err)
		}
		sameOrNearTie(t, a2.Model(), string(f)+" view engine", r.Prompt, out[0], got[1])
		// an adapter of another base is refused
		other := newTiny(t, f, 45, cpu32)
		oa, err := other.NewAdapter(loraCfg(11))
		if err != nil {
			t.Fatal(err)
		}
		bad := reqs[0]
		bad.Adapter = oa
		if _, err := e.Submit(bad); err == nil || !strings.Contains(err.Error(), "not attached to this engine's base") {
			t.Fatalf("%s: an adapter of another base: %v", f, err)
		}
	}
}

// Save writes PEFT's layout; LoadAdapter on a base with the same weights
// gives the same logits; a file that departs from what the config implies,
// or a config using an unsupported PEFT feature, is refused by name.
func TestPEFTSaveLoadRoundTrip(t *testing.T) {
	noLeaks(t)
	m := newTiny(t, Qwen3, 46, cpu32)
	a := newAdapter(t, m, LoRAConfig{Rank: 3, Alpha: 5, Targets: []string{"q_proj", "o_proj", "down_proj"}, Seed: 12})
	a.BaseModel = "Qwen/Qwen3-0.6B"
	dir := t.TempDir()
	if err := a.Model().Save(dir, torch.Float32, 0); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, AdapterConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	var js map[string]any
	if err := json.Unmarshal(raw, &js); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": 3.0, "lora_alpha": 5.0, "bias": "none", "base_model_name_or_path": "Qwen/Qwen3-0.6B"} {
		if js[k] != want {
			t.Fatalf("adapter_config.json: %s = %v, want %v", k, js[k], want)
		}
	}
	f, err := safetensors.Open(filepath.Join(dir, AdapterWeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	names := f.Names()
	f.Close()
	if len(names) != 2*2*3 || !containsName(names, "base_model.model.model.layers.1.mlp.down_proj.lora_B.weight") {
		t.Fatalf("adapter tensors: %v", names)
	}

	fresh := newTiny(t, Qwen3, 46, cpu32)
	b, err := fresh.LoadAdapter(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b.BaseModel != "Qwen/Qwen3-0.6B" || b.Config.Rank != 3 || b.Config.Scale() != 5.0/3 {
		t.Fatalf("loaded adapter: %+v", b.Config)
	}
	for _, s := range loraSeqs {
		if d := maxAbs(rowLogits(t, b.Model(), s), rowLogits(t, a.Model(), s)); d != 0 {
			t.Fatalf("reloaded adapter's logits differ by %g", d)
		}
	}

	// refusals
	edit := func(name string, change func(map[string]any)) string {
		d := t.TempDir()
		for _, fn := range []string{AdapterWeightsFile} {
			data, _ := os.ReadFile(filepath.Join(dir, fn))
			os.WriteFile(filepath.Join(d, fn), data, 0o644)
		}
		var c map[string]any
		json.Unmarshal(raw, &c)
		change(c)
		out, _ := json.Marshal(c)
		os.WriteFile(filepath.Join(d, AdapterConfigFile), out, 0o644)
		return d
	}
	for name, tc := range map[string]struct {
		change func(map[string]any)
		want   string
	}{
		"dora":        {func(c map[string]any) { c["use_dora"] = true }, "use_dora"},
		"bias":        {func(c map[string]any) { c["bias"] = "all" }, "bias"},
		"regex":       {func(c map[string]any) { c["target_modules"] = ".*proj" }, "target_modules"},
		"rank":        {func(c map[string]any) { c["r"] = 4 }, "need [4"},
		"fewer":       {func(c map[string]any) { c["target_modules"] = []string{"q_proj", "o_proj"} }, "does not imply"},
		"more":        {func(c map[string]any) { c["target_modules"] = []string{"q_proj", "o_proj", "down_proj", "up_proj"} }, "missing tensor"},
		"prompt tune": {func(c map[string]any) { c["peft_type"] = "PROMPT_TUNING" }, "peft_type"},
	} {
		_, err := fresh.LoadAdapter(edit(name, tc.change))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: err = %v, want it to mention %q", name, err, tc.want)
		}
	}
	// a different base (another hidden size) does not fit
	cfg := tinyConfig(Qwen3)
	cfg.HiddenSize = 48
	wide, err := New(cfg, 1, cpu32)
	if err != nil {
		t.Fatal(err)
	}
	defer wide.Free()
	if _, err := wide.LoadAdapter(dir); err == nil || !strings.Contains(err.Error(), "shape") {
		t.Fatalf("an adapter of another base: %v", err)
	}
	if _, err := b.Model().LoadAdapter(dir); err == nil {
		t.Fatal("an adapter attached to a view was accepted")
	}
}

func containsName(names []string, n string) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}

func TestLoRAConfigRefusals(t *testing.T) {
	for _, tc := range []struct {
		cfg  LoRAConfig
		want string
	}{
		{LoRAConfig{Rank: 0, Alpha: 1, Targets: []string{"q_proj"}}, "lora.rank"},
		{LoRAConfig{Rank: 2, Alpha: 0, Targets: []string{"q_proj"}}, "lora.alpha"},
		{LoRAConfig{Rank: 2, Alpha: 1, Targets: []string{"q_proj"}, Dropout: 0.05}, "lora.dropout"},
		{LoRAConfig{Rank: 2, Alpha: 1}, "lora.targets"},
		{LoRAConfig{Rank: 2, Alpha: 1, Targets: []string{"qkv_proj"}}, `unknown projection "qkv_proj"`},
		{LoRAConfig{Rank: 2, Alpha: 1, Targets: []string{"q_proj", "q_proj"}}, "twice"},
	} {
		if err := tc.cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%+v: err = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

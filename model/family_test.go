package model

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// Llama-3.2-1B-Instruct's config.json (values as published).
const llama32Config = `{
  "architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 128000, "eos_token_id": [128001, 128008, 128009], "head_dim": 64,
  "hidden_act": "silu", "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 8192,
  "max_position_embeddings": 131072, "mlp_bias": false, "model_type": "llama",
  "num_attention_heads": 32, "num_hidden_layers": 16, "num_key_value_heads": 8, "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                   "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "rope_theta": 500000.0, "tie_word_embeddings": true, "torch_dtype": "bfloat16",
  "transformers_version": "4.45.0.dev0", "use_cache": true, "vocab_size": 128256}`

// Mistral-7B-Instruct-v0.3's config.json (values as published).
const mistralConfig = `{
  "architectures": ["MistralForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 1,
  "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02,
  "intermediate_size": 14336, "max_position_embeddings": 32768, "model_type": "mistral",
  "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05, "rope_theta": 1000000.0, "sliding_window": null,
  "tie_word_embeddings": false, "torch_dtype": "bfloat16", "transformers_version": "4.42.0.dev0",
  "use_cache": true, "vocab_size": 32768}`

func TestParseLlamaAndMistralConfigs(t *testing.T) {
	c, err := ParseConfig([]byte(llama32Config))
	if err != nil {
		t.Fatal(err)
	}
	want := RopeScaling{Type: "llama3", Factor: 32, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMaxPositions: 8192}
	if c.Family != Llama || c.HeadDim != 64 || c.NumKVHeads != 8 || c.AttentionBias || c.MLPBias || !c.TieEmbeddings ||
		c.RopeTheta != 5e5 || c.RopeScaling == nil || *c.RopeScaling != want || len(c.EOSTokenIDs) != 3 || *c.BOSTokenID != 128000 {
		t.Fatalf("Llama-3.2-1B parsed as %+v (rope scaling %+v)", c, c.RopeScaling)
	}
	m, err := ParseConfig([]byte(mistralConfig))
	if err != nil {
		t.Fatal(err)
	}
	if m.Family != Mistral || m.HeadDim != 128 || m.AttentionBias || m.TieEmbeddings || m.SlidingWindow != 0 || m.RopeScaling != nil {
		t.Fatalf("Mistral-7B-v0.3 parsed as %+v", m)
	}
	// the parameter counts the model cards publish
	if c.NumParams() != 1_235_814_400 || m.NumParams() != 7_248_023_552 {
		t.Fatalf("parameter counts %d and %d, published 1,235,814,400 (Llama-3.2-1B) and 7,248,023,552 (Mistral-7B-v0.3)", c.NumParams(), m.NumParams())
	}
	// JSON round trips keep the family's switches; transformers 5's
	// rope_parameters form reads the same as rope_scaling
	for _, cfg := range []Config{c, m} {
		js, err := cfg.JSON("float32")
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseConfig(js)
		if err != nil {
			t.Fatalf("%s round trip: %v\n%s", cfg.Family, err, js)
		}
		if back.Family != cfg.Family || back.HeadDim != cfg.HeadDim || back.RopeTheta != cfg.RopeTheta ||
			(cfg.RopeScaling != nil) != (back.RopeScaling != nil) || back.NumParams() != cfg.NumParams() {
			t.Fatalf("%s round trip: %+v", cfg.Family, back)
		}
		if _, ok := back.Extra["pretraining_tp"]; cfg.Family == Llama && !ok {
			t.Fatal("unmodelled keys must survive the round trip")
		}
	}
	v5 := strings.Replace(llama32Config, `"rope_scaling"`, `"rope_parameters"`, 1)
	v5 = strings.Replace(v5, `"rope_type": "llama3"}`, `"rope_type": "llama3", "rope_theta": 250000.0}`, 1)
	c5, err := ParseConfig([]byte(v5))
	if err != nil || *c5.RopeScaling != want || c5.RopeTheta != 2.5e5 {
		t.Fatalf("rope_parameters form: %+v, %v", c5, err)
	}
}

func TestParseLlamaAndMistralRefusals(t *testing.T) {
	cases := []struct{ base, edit, want string }{
		{llama32Config, `"rope_scaling": {"rope_type": "dynamic", "factor": 2}`, `rope_scaling type "dynamic"`},
		{llama32Config, `"rope_scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4}`, "original_max_position_embeddings"},
		{llama32Config, `"rope_scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 4, "high_freq_factor": 4, "original_max_position_embeddings": 8192}`, "high_freq_factor (4) must be > low_freq_factor (4)"},
		{llama32Config, `"rope_scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4, "original_max_position_embeddings": 8192, "attention_factor": 2}`, "[attention_factor]"},
		{llama32Config, `"hidden_act": "gelu"`, `hidden_act "gelu"`},
		{mistralConfig, `"sliding_window": 4096`, "sliding_window is 4096, below max_position_embeddings (32768)"},
		{mistralConfig, `"attention_bias": true`, "MistralForCausalLM has no attention biases"},
		{mistralConfig, `"mlp_bias": true`, "mlp_bias is true, but mistral"},
	}
	for _, c := range cases {
		js := strings.TrimSuffix(strings.TrimSpace(c.base), "}") + "," + c.edit + "}"
		if _, err := ParseConfig([]byte(js)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want an error mentioning %q, got %v", c.edit, c.want, err)
		}
	}
	// a window that cannot bind loads (and is written back); a missing key
	// is transformers' default window of 4096, which binds here
	ok := strings.TrimSuffix(strings.TrimSpace(mistralConfig), "}") + `, "sliding_window": 32768}`
	if c, err := ParseConfig([]byte(ok)); err != nil || c.SlidingWindow != 32768 {
		t.Fatalf("sliding_window = max_position_embeddings: %+v, %v", c, err)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(mistralConfig), &raw); err != nil {
		t.Fatal(err)
	}
	delete(raw, "sliding_window")
	js, _ := json.Marshal(raw)
	if _, err := ParseConfig(js); err == nil || !strings.Contains(err.Error(), "sliding_window is 4096") {
		t.Fatalf("Mistral config without sliding_window: want transformers' default 4096 refused, got %v", err)
	}
}

// The llama3 frequencies against the formula in float64: the three bands
// land where they should, and float32 rounding is all that separates them.
// (Bit equality with transformers is TestLlama3FrequenciesMatchTransformers.)
func TestLlama3ScalingBands(t *testing.T) {
	s := RopeScaling{Type: "llama3", Factor: 32, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMaxPositions: 8192}
	const theta, dim = 5e5, 64
	inv := make([]float32, dim/2)
	for i := range inv {
		inv[i] = float32(1 / math.Pow(theta, float64(2*i)/dim))
	}
	got := s.scale(inv)
	bands := map[string]int{}
	for i, w := range inv {
		wl := 2 * math.Pi / float64(w)
		want := float64(w)
		switch {
		case wl < 8192/4.0:
			bands["kept"]++
		case wl > 8192/1.0:
			want /= 32
			bands["divided"]++
		default:
			g := (8192/wl - 1) / (4 - 1)
			want = (1-g)*want/32 + g*want
			bands["smoothed"]++
		}
		if d := math.Abs(float64(got[i])-want) / want; d > 1e-6 {
			t.Errorf("frequency %d (wavelength %.1f): got %g, want %g (rel %.2g)", i, wl, got[i], want, d)
		}
	}
	if bands["kept"] == 0 || bands["divided"] == 0 || bands["smoothed"] == 0 {
		t.Fatalf("every band should hold a frequency at Llama 3.2's settings, got %v", bands)
	}
	t.Logf("bands at head_dim 64: %v", bands)
}

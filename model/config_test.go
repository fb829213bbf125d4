package model

import (
	"strings"
	"testing"
)

// Qwen2.5-0.5B-Instruct's config.json (values as published).
const qwen25Config = `{
  "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
  "eos_token_id": 151645, "hidden_act": "silu", "hidden_size": 896, "initializer_range": 0.02,
  "intermediate_size": 4864, "max_position_embeddings": 32768, "max_window_layers": 21,
  "model_type": "qwen2", "num_attention_heads": 14, "num_hidden_layers": 24, "num_key_value_heads": 2,
  "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "sliding_window": 32768, "tie_word_embeddings": true,
  "torch_dtype": "bfloat16", "transformers_version": "4.43.1", "use_cache": true,
  "use_sliding_window": false, "vocab_size": 151936}`

// Qwen3-4B's config.json as transformers 5 writes it (rope_parameters, dtype).
const qwen3Config = `{
  "architectures": ["Qwen3ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 151643, "eos_token_id": 151645, "head_dim": 128, "hidden_act": "silu",
  "hidden_size": 2560, "initializer_range": 0.02, "intermediate_size": 9728,
  "max_position_embeddings": 40960, "max_window_layers": 36, "model_type": "qwen3",
  "num_attention_heads": 32, "num_hidden_layers": 36, "num_key_value_heads": 8, "rms_norm_eps": 1e-06,
  "rope_parameters": {"rope_type": "default", "rope_theta": 1000000}, "sliding_window": null,
  "tie_word_embeddings": true, "dtype": "bfloat16", "use_cache": true, "use_sliding_window": false,
  "vocab_size": 151936, "layer_types": ["full_attention", "full_attention"]}`

func TestParseRealConfigs(t *testing.T) {
	c, err := ParseConfig([]byte(qwen25Config))
	if err != nil {
		t.Fatal(err)
	}
	if c.Family != Qwen2 || c.HeadDim != 64 || c.NumKVHeads != 2 || !c.AttentionBias || !c.TieEmbeddings ||
		c.RopeTheta != 1e6 || c.VocabSize != 151936 || c.DType != "bfloat16" || c.EOSTokenIDs[0] != 151645 {
		t.Fatalf("Qwen2.5-0.5B parsed as %+v", c)
	}
	if _, ok := c.Extra["transformers_version"]; !ok {
		t.Fatal("unmodelled keys must be kept in Extra")
	}
	c3, err := ParseConfig([]byte(qwen3Config))
	if err != nil {
		t.Fatal(err)
	}
	if c3.Family != Qwen3 || c3.HeadDim != 128 || c3.HeadDim*c3.NumHeads == c3.HiddenSize || c3.AttentionBias ||
		c3.RopeTheta != 1e6 || c3.DType != "bfloat16" {
		t.Fatalf("Qwen3-4B parsed as %+v", c3)
	}
	// the parameter counts the model cards publish
	if c.NumParams() != 494_032_768 || c3.NumParams() != 4_022_468_096 {
		t.Fatalf("parameter counts %d and %d, published 494,032,768 (Qwen2.5-0.5B) and 4,022,468,096 (Qwen3-4B)", c.NumParams(), c3.NumParams())
	}
	// JSON round trip keeps everything
	js, err := c3.JSON("float32")
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseConfig(js)
	if err != nil {
		t.Fatal(err)
	}
	if back.HeadDim != 128 || back.RopeTheta != 1e6 || back.DType != "float32" || back.NumKVHeads != 8 {
		t.Fatalf("round trip: %+v", back)
	}
	if !strings.Contains(c3.Describe(), "qwen3") {
		t.Fatal(c3.Describe())
	}
}

func TestParseConfigRefusals(t *testing.T) {
	cases := map[string]struct{ edit, want string }{
		"gemma":      {`"architectures": ["GemmaForCausalLM"]`, "GemmaForCausalLM"},
		"yarn":       {`"rope_scaling": {"type": "yarn", "factor": 4}`, `rope_scaling type "yarn"`},
		"linear":     {`"rope_parameters": {"rope_type": "linear", "factor": 2, "rope_theta": 1e6}`, `rope_parameters type "linear"`},
		"partial":    {`"rope_parameters": {"rope_type": "default", "rope_theta": 1e6, "partial_rotary_factor": 0.5}`, "partial_rotary_factor 0.5"},
		"mlp bias":   {`"mlp_bias": true`, "mlp_bias is true, but qwen2"},
		"sliding":    {`"use_sliding_window": true`, "sliding-window"},
		"gelu":       {`"hidden_act": "gelu"`, `hidden_act "gelu"`},
		"heads":      {`"num_key_value_heads": 3`, "multiple of num_key_value_heads"},
		"layer type": {`"layer_types": ["sliding_attention"]`, "layer_types[0]"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			// a later duplicate key wins in encoding/json, so append the edit
			js := strings.TrimSuffix(strings.TrimSpace(qwen25Config), "}") + "," + c.edit + "}"
			_, err := ParseConfig([]byte(js))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error mentioning %q, got %v", c.want, err)
			}
		})
	}
	if _, err := ParseConfig([]byte(`{"architectures": ["Qwen2ForCausalLM"], "hidden_size": 0}`)); err == nil || !strings.Contains(err.Error(), "vocab_size") {
		t.Fatalf("zero sizes: %v", err)
	}
}

// Counting parameters from a config gives what building the model creates,
// for both families, tied or not, with and without biases; and an adapter's
// count what attaching one creates.
func TestNumParamsFromConfig(t *testing.T) {
	for _, f := range families {
		for _, tied := range []bool{false, true} {
			for _, bias := range []bool{false, true} {
				cfg := tinyConfig(f)
				cfg.TieEmbeddings = tied
				cfg.AttentionBias = bias || f == Qwen2
				m, err := New(cfg, 1, cpu32)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := cfg.NumParams(), m.NumParams(); got != want {
					t.Errorf("%s tied=%v bias=%v: config counts %d parameters, the model has %d", f, tied, cfg.AttentionBias, got, want)
				}
				for _, targets := range [][]string{LoRATargets, {"q_proj", "down_proj"}, {"v_proj"}} {
					a, err := m.NewAdapter(LoRAConfig{Rank: 3, Alpha: 6, Targets: targets, Seed: 1})
					if err != nil {
						t.Fatal(err)
					}
					var n int64
					for _, p := range a.Params() {
						n += p.T.Numel()
					}
					if got := cfg.LoRAParams(3, targets); got != n {
						t.Errorf("%s %v: config counts %d adapter parameters, the adapter has %d", f, targets, got, n)
					}
					a.Free()
				}
				m.Free()
			}
		}
	}
}

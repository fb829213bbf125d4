package model

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Family tells the architectures apart; family.go says how they differ.
type Family string

const (
	Qwen2   Family = "qwen2"   // Qwen2, Qwen2.5: q/k/v bias, head_dim = hidden/heads
	Qwen3   Family = "qwen3"   // Qwen3: per-head q/k RMSNorm, explicit head_dim, no bias by default
	Llama   Family = "llama"   // Llama 2/3.x: no bias by default (attention_bias, mlp_bias), llama3 rope scaling
	Mistral Family = "mistral" // Mistral: the Llama block without biases; a sliding window only where it never binds
)

// Config is the part of a Hugging Face config.json that defines the
// network. Fields it does not model are kept in Extra and written back by
// Save, so an exported directory carries the original configuration.
type Config struct {
	Family           Family
	VocabSize        int
	HiddenSize       int
	IntermediateSize int
	NumLayers        int
	NumHeads         int
	NumKVHeads       int
	HeadDim          int
	RopeTheta        float64
	RMSNormEps       float64
	TieEmbeddings    bool
	AttentionBias    bool         // q/k/v projections carry a bias (Qwen2 always; Qwen3 and Llama when attention_bias, with one on o_proj too)
	MLPBias          bool         // gate/up/down projections carry a bias (Llama's mlp_bias)
	RopeScaling      *RopeScaling // nil: plain RoPE (rope.go)
	SlidingWindow    int          // Mistral's sliding_window, kept only where it cannot bind (≥ max_position_embeddings); 0: null
	MaxPositions     int
	InitializerRange float64
	BOSTokenID       *int
	EOSTokenIDs      []int
	DType            string // torch_dtype / dtype as written, e.g. "bfloat16"
	Extra            map[string]json.RawMessage
}

// Fields Config reads; everything else in config.json goes to Extra.
var knownKeys = map[string]bool{
	"architectures": true, "model_type": true, "vocab_size": true, "hidden_size": true,
	"intermediate_size": true, "num_hidden_layers": true, "num_attention_heads": true,
	"num_key_value_heads": true, "head_dim": true, "rope_theta": true, "rope_scaling": true,
	"rope_parameters": true, "rms_norm_eps": true, "tie_word_embeddings": true,
	"attention_bias": true, "max_position_embeddings": true, "initializer_range": true,
	"bos_token_id": true, "eos_token_id": true, "torch_dtype": true, "dtype": true,
	"hidden_act": true, "use_sliding_window": true, "sliding_window": true,
	"max_window_layers": true, "layer_types": true, "mlp_bias": true,
}

// ParseConfig reads a config.json's bytes. Unsupported architectures and
// features are refused with an error naming the key.
func ParseConfig(data []byte) (Config, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return Config{}, fmt.Errorf("config.json: %w", err)
	}
	var c Config
	var err error
	get := func(key string, dst any) error {
		v, ok := raw[key]
		if !ok || string(v) == "null" {
			return nil
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return fmt.Errorf("config.json: %s: %w", key, err)
		}
		return nil
	}
	var arch []string
	var modelType, hiddenAct, torchDType, dtype string
	var slidingOn bool
	var slidingWindow *int
	var ropeScaling, ropeParams map[string]any
	var layerTypes []string
	var eos any
	steps := []struct {
		key string
		dst any
	}{
		{"architectures", &arch}, {"model_type", &modelType}, {"vocab_size", &c.VocabSize},
		{"hidden_size", &c.HiddenSize}, {"intermediate_size", &c.IntermediateSize},
		{"num_hidden_layers", &c.NumLayers}, {"num_attention_heads", &c.NumHeads},
		{"num_key_value_heads", &c.NumKVHeads}, {"head_dim", &c.HeadDim}, {"rope_theta", &c.RopeTheta},
		{"rope_scaling", &ropeScaling}, {"rope_parameters", &ropeParams}, {"rms_norm_eps", &c.RMSNormEps},
		{"tie_word_embeddings", &c.TieEmbeddings}, {"attention_bias", &c.AttentionBias},
		{"max_position_embeddings", &c.MaxPositions}, {"initializer_range", &c.InitializerRange},
		{"bos_token_id", &c.BOSTokenID}, {"eos_token_id", &eos}, {"torch_dtype", &torchDType},
		{"dtype", &dtype}, {"hidden_act", &hiddenAct}, {"use_sliding_window", &slidingOn},
		{"layer_types", &layerTypes}, {"mlp_bias", &c.MLPBias}, {"sliding_window", &slidingWindow},
	}
	for _, s := range steps {
		if err := get(s.key, s.dst); err != nil {
			return Config{}, err
		}
	}
	if c.Family, err = familyOf(arch, modelType); err != nil {
		return Config{}, err
	}
	if hiddenAct != "" && hiddenAct != "silu" {
		return Config{}, fmt.Errorf("config.json: hidden_act %q is not supported (the %s block uses silu)", hiddenAct, c.Family)
	}
	if slidingOn {
		return Config{}, fmt.Errorf("config.json: use_sliding_window is true; sliding-window attention is not implemented (set it to false to load with full attention)")
	}
	for i, lt := range layerTypes {
		if lt != "full_attention" {
			return Config{}, fmt.Errorf("config.json: layer_types[%d] is %q; only full_attention is implemented", i, lt)
		}
	}
	theta, scaling, err := parseRope(ropeScaling, ropeParams)
	if err != nil {
		return Config{}, err
	}
	if theta > 0 {
		c.RopeTheta = theta
	}
	c.RopeScaling = scaling
	if c.Family == Mistral {
		c.SlidingWindow = mistralDefaultWindow // what transformers assumes when the key is absent
		if _, present := raw["sliding_window"]; present {
			c.SlidingWindow = 0 // null
			if slidingWindow != nil {
				c.SlidingWindow = *slidingWindow
			}
		}
	}
	if err := c.applyFamily(); err != nil {
		return Config{}, err
	}
	switch v := eos.(type) {
	case float64:
		c.EOSTokenIDs = []int{int(v)}
	case []any:
		for _, e := range v {
			if f, ok := e.(float64); ok {
				c.EOSTokenIDs = append(c.EOSTokenIDs, int(f))
			}
		}
	}
	c.DType = torchDType
	if dtype != "" {
		c.DType = dtype
	}
	if c.NumKVHeads == 0 {
		c.NumKVHeads = c.NumHeads
	}
	if c.HeadDim == 0 && c.NumHeads > 0 {
		c.HeadDim = c.HiddenSize / c.NumHeads
	}
	if c.RopeTheta == 0 {
		c.RopeTheta = 10000
	}
	if c.RMSNormEps == 0 {
		c.RMSNormEps = 1e-6
	}
	if c.InitializerRange == 0 {
		c.InitializerRange = 0.02
	}
	c.Extra = map[string]json.RawMessage{}
	for k, v := range raw {
		if !knownKeys[k] {
			c.Extra[k] = v
		}
	}
	return c, c.Validate()
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// LoadConfig reads dir/config.json (or the file itself when path is a file).
func LoadConfig(path string) (Config, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "config.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("model config: %w", err)
	}
	c, err := ParseConfig(data)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Validate checks the sizes are consistent.
func (c Config) Validate() error {
	pos := map[string]int{
		"vocab_size": c.VocabSize, "hidden_size": c.HiddenSize, "intermediate_size": c.IntermediateSize,
		"num_hidden_layers": c.NumLayers, "num_attention_heads": c.NumHeads,
		"num_key_value_heads": c.NumKVHeads, "head_dim": c.HeadDim,
	}
	for _, k := range []string{"vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim"} {
		if pos[k] <= 0 {
			return fmt.Errorf("config.json: %s must be > 0, got %d", k, pos[k])
		}
	}
	if c.NumHeads%c.NumKVHeads != 0 {
		return fmt.Errorf("config.json: num_attention_heads (%d) must be a multiple of num_key_value_heads (%d)", c.NumHeads, c.NumKVHeads)
	}
	if c.HeadDim%2 != 0 {
		return fmt.Errorf("config.json: head_dim must be even for rotary embedding, got %d", c.HeadDim)
	}
	if c.Family == Qwen2 && c.HeadDim*c.NumHeads != c.HiddenSize {
		return fmt.Errorf("config.json: Qwen2 needs hidden_size = num_attention_heads × head_dim, got %d ≠ %d × %d", c.HiddenSize, c.NumHeads, c.HeadDim)
	}
	if s := c.RopeScaling; s != nil && (s.Type != "llama3" || s.Factor <= 0 || s.LowFreqFactor <= 0 || s.HighFreqFactor <= s.LowFreqFactor || s.OriginalMaxPositions <= 0) {
		return fmt.Errorf("config.json: rope_scaling %+v: want type llama3 with factor, low_freq_factor and original_max_position_embeddings > 0 and high_freq_factor > low_freq_factor", *s)
	}
	if c.RopeTheta <= 0 || c.RMSNormEps <= 0 {
		return fmt.Errorf("config.json: rope_theta and rms_norm_eps must be > 0, got %g and %g", c.RopeTheta, c.RMSNormEps)
	}
	return nil
}

// JSON renders the config in Hugging Face's layout, with Extra merged back
// and dtype set to the given value (the dtype the weights are saved in).
func (c Config) JSON(dtype string) ([]byte, error) {
	out := map[string]any{}
	for k, v := range c.Extra {
		out[k] = v
	}
	arch, mt := archNames(c.Family)
	switch c.Family {
	case Qwen2:
		out["use_sliding_window"] = false
	case Qwen3:
		out["head_dim"] = c.HeadDim
		out["attention_bias"] = c.AttentionBias
		out["use_sliding_window"] = false
	case Llama:
		out["head_dim"] = c.HeadDim
		out["attention_bias"] = c.AttentionBias
		out["mlp_bias"] = c.MLPBias
	case Mistral:
		out["head_dim"] = c.HeadDim
		out["sliding_window"] = nil
		if c.SlidingWindow > 0 {
			out["sliding_window"] = c.SlidingWindow
		}
	}
	if c.RopeScaling != nil {
		out["rope_scaling"] = c.RopeScaling.json()
	}
	out["architectures"] = []string{arch}
	out["model_type"] = mt
	out["vocab_size"] = c.VocabSize
	out["hidden_size"] = c.HiddenSize
	out["intermediate_size"] = c.IntermediateSize
	out["num_hidden_layers"] = c.NumLayers
	out["num_attention_heads"] = c.NumHeads
	out["num_key_value_heads"] = c.NumKVHeads
	out["rope_theta"] = c.RopeTheta
	out["rms_norm_eps"] = c.RMSNormEps
	out["tie_word_embeddings"] = c.TieEmbeddings
	out["max_position_embeddings"] = c.MaxPositions
	out["initializer_range"] = c.InitializerRange
	out["hidden_act"] = "silu"
	if c.BOSTokenID != nil {
		out["bos_token_id"] = *c.BOSTokenID
	}
	switch len(c.EOSTokenIDs) {
	case 0:
	case 1:
		out["eos_token_id"] = c.EOSTokenIDs[0]
	default:
		out["eos_token_id"] = c.EOSTokenIDs
	}
	if dtype != "" {
		out["torch_dtype"] = dtype
	}
	return json.MarshalIndent(out, "", "  ")
}

// Describe is a one-line summary for logs.
func (c Config) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d layers, hidden %d, heads %d/%d (kv), head_dim %d, ffn %d, vocab %d",
		c.Family, c.NumLayers, c.HiddenSize, c.NumHeads, c.NumKVHeads, c.HeadDim, c.IntermediateSize, c.VocabSize)
	if c.TieEmbeddings {
		b.WriteString(", tied embeddings")
	}
	if s := c.RopeScaling; s != nil {
		fmt.Fprintf(&b, ", %s rope scaling ×%g from %d positions", s.Type, s.Factor, s.OriginalMaxPositions)
	}
	return b.String()
}

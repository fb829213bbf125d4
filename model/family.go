package model

// family.go — what tells the decoder families apart at the config level.
// They share one decoder (qwen.go): pre-norm blocks of RMSNorm, grouped-query
// attention with rotary embedding and a SwiGLU MLP. The differences are
// switches on that block, set here from config.json:
//
//	family   architectures       q/k/v bias        o_proj bias       MLP bias  q/k norm  head_dim
//	qwen2    Qwen2ForCausalLM    always            never             never     no        hidden/heads
//	qwen3    Qwen3ForCausalLM    attention_bias    attention_bias    never     yes       explicit
//	llama    LlamaForCausalLM    attention_bias    attention_bias    mlp_bias  no        explicit or hidden/heads
//	mistral  MistralForCausalLM  never             never             never     no        explicit or hidden/heads
//
// (transformers' modeling_llama.py, modeling_mistral.py, modeling_qwen2.py,
// modeling_qwen3.py.) RoPE scaling (rope.go) is read the same way for every
// family.
//
// What it is not: a general architecture registry. Sliding-window attention
// is refused (Mistral's sliding_window only loads where it cannot bind: at
// or above max_position_embeddings, or null), as are mlp_bias and
// attention_bias on the families whose transformers class has no such
// parameter.

import (
	"fmt"
)

// mistralDefaultWindow is transformers' MistralConfig.sliding_window
// default, in force when config.json leaves the key out.
const mistralDefaultWindow = 4096

// familyNames lists each family's Hugging Face architecture and model_type.
var familyNames = []struct {
	family          Family
	arch, modelType string
}{
	{Qwen2, "Qwen2ForCausalLM", "qwen2"},
	{Qwen3, "Qwen3ForCausalLM", "qwen3"},
	{Llama, "LlamaForCausalLM", "llama"},
	{Mistral, "MistralForCausalLM", "mistral"},
}

// familyOf reads config.json's architectures (or, when it has none, its
// model_type).
func familyOf(arch []string, modelType string) (Family, error) {
	for _, f := range familyNames {
		if contains(arch, f.arch) || (len(arch) == 0 && modelType == f.modelType) {
			return f.family, nil
		}
	}
	return "", fmt.Errorf("config.json: architectures %v (model_type %q) is not supported; troupe loads Qwen2ForCausalLM (Qwen2, Qwen2.5), Qwen3ForCausalLM, LlamaForCausalLM (Llama 2, 3.x) and MistralForCausalLM", arch, modelType)
}

// archNames returns the architecture and model_type config.json spells
// for f.
func archNames(f Family) (arch, modelType string) {
	for _, n := range familyNames {
		if n.family == f {
			return n.arch, n.modelType
		}
	}
	return "", ""
}

// applyFamily sets what a family fixes regardless of config.json and
// refuses the features its transformers class does not have.
func (c *Config) applyFamily() error {
	switch c.Family {
	case Qwen2:
		c.AttentionBias = true // Qwen2's q/k/v projections always carry a bias
	case Mistral:
		if c.AttentionBias {
			return fmt.Errorf("config.json: attention_bias is true, but MistralForCausalLM has no attention biases; load it as LlamaForCausalLM if the checkpoint has them")
		}
		if w := c.SlidingWindow; w > 0 && (c.MaxPositions == 0 || w < c.MaxPositions) {
			return fmt.Errorf("config.json: sliding_window is %d, below max_position_embeddings (%d): sliding-window attention is not implemented (set sliding_window to null to load with full attention, which changes the model's outputs beyond %d tokens)", w, c.MaxPositions, w)
		}
	}
	if c.MLPBias && c.Family != Llama {
		return fmt.Errorf("config.json: mlp_bias is true, but %s has no MLP biases (only LlamaForCausalLM reads mlp_bias)", c.Family)
	}
	return nil
}

// outputBias reports whether o_proj carries a bias.
func (c Config) outputBias() bool {
	return c.AttentionBias && (c.Family == Qwen3 || c.Family == Llama)
}

// hasQKNorm reports whether attention normalises each head's q and k.
func (c Config) hasQKNorm() bool { return c.Family == Qwen3 }

package bench

// shape.go — a model shape from a name or key=value list, for timing a
// random model without a checkpoint.

import (
	"fmt"
	"strconv"
	"strings"

	"troupe/model"
)

// Shapes are the named shapes: tiny is `train init`'s default (Qwen2
// layout), 40m a 40M-parameter Qwen2, qwen2.5-0.5b that model's
// architecture.
var Shapes = map[string]string{
	"tiny":         "hidden=64,layers=2,heads=4,kv-heads=2,intermediate=128,vocab=1800",
	"40m":          "hidden=512,layers=8,heads=8,kv-heads=2,intermediate=2816,vocab=1800",
	"qwen2.5-0.5b": "hidden=896,layers=24,heads=14,kv-heads=2,intermediate=4864,vocab=151936",
}

// ParseShape reads a named shape or a comma-separated key=value list
// (hidden, layers, heads, kv-heads, intermediate, vocab) into a Qwen2
// config with tied embeddings and attention biases; head_dim is
// hidden/heads.
func ParseShape(s string) (model.Config, error) {
	if named, ok := Shapes[strings.ToLower(s)]; ok {
		s = named
	}
	c := model.Config{Family: model.Qwen2, VocabSize: 1800, HiddenSize: 64, IntermediateSize: 128, NumLayers: 2,
		NumHeads: 4, NumKVHeads: 2, RopeTheta: 1e6, RMSNormEps: 1e-6, MaxPositions: 32768,
		InitializerRange: 0.02, TieEmbeddings: true, AttentionBias: true}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n <= 0 {
			return c, fmt.Errorf("bench: --shape: %q is neither a named shape (tiny, 40m, qwen2.5-0.5b) nor key=positive-integer", kv)
		}
		switch k {
		case "hidden":
			c.HiddenSize = n
		case "layers":
			c.NumLayers = n
		case "heads":
			c.NumHeads = n
		case "kv-heads":
			c.NumKVHeads = n
		case "intermediate":
			c.IntermediateSize = n
		case "vocab":
			c.VocabSize = n
		default:
			return c, fmt.Errorf("bench: --shape: unknown key %q; use hidden, layers, heads, kv-heads, intermediate, vocab", k)
		}
	}
	if c.HiddenSize%c.NumHeads != 0 || c.NumHeads%c.NumKVHeads != 0 {
		return c, fmt.Errorf("bench: --shape: hidden %d must be a multiple of heads %d, and heads of kv-heads %d", c.HiddenSize, c.NumHeads, c.NumKVHeads)
	}
	c.HeadDim = c.HiddenSize / c.NumHeads
	return c, c.Validate()
}

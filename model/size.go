package model

// size.go — parameter counts from a config alone, before any weight is
// loaded (memory planning).

import "slices"

// NumParams counts the weights a model of this config has (a tied head
// once): what New and Load create.
func (c Config) NumParams() int64 {
	D, V := int64(c.HiddenSize), int64(c.VocabSize)
	n := V*D + int64(c.NumLayers)*c.LayerParams() + D
	if !c.TieEmbeddings {
		n += V * D
	}
	return n
}

// LayerParams counts the weights of one decoder layer.
func (c Config) LayerParams() int64 {
	D, F := int64(c.HiddenSize), int64(c.IntermediateSize)
	H, KVH, Dh := int64(c.NumHeads), int64(c.NumKVHeads), int64(c.HeadDim)
	layer := 2*D + // input and post-attention norms
		D*H*Dh + 2*D*KVH*Dh + H*Dh*D + // q, k, v, o
		3*D*F // gate, up, down
	if c.AttentionBias {
		layer += H*Dh + 2*KVH*Dh
	}
	if c.outputBias() {
		layer += D
	}
	if c.MLPBias {
		layer += 2*F + D
	}
	if c.hasQKNorm() {
		layer += 2 * Dh // q and k norms
	}
	return layer
}

// LoRAParams counts the A and B matrices of a rank-r adapter on targets
// (PEFT module names, LoRATargets) in every layer.
func (c Config) LoRAParams(rank int, targets []string) int64 {
	D, F := int64(c.HiddenSize), int64(c.IntermediateSize)
	q, kv := int64(c.NumHeads*c.HeadDim), int64(c.NumKVHeads*c.HeadDim)
	shapes := map[string][2]int64{ // out, in
		"q_proj": {q, D}, "k_proj": {kv, D}, "v_proj": {kv, D}, "o_proj": {D, q},
		"gate_proj": {F, D}, "up_proj": {F, D}, "down_proj": {D, F},
	}
	var per int64
	for _, t := range LoRATargets {
		if slices.Contains(targets, t) {
			per += int64(rank) * (shapes[t][0] + shapes[t][1])
		}
	}
	return int64(c.NumLayers) * per
}

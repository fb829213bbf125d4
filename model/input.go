package model

import (
	"fmt"

	"troupe/torch"
)

// Input is a padded batch of token sequences, ready for the forward pass.
// Every tensor is (B, T) on the model's device. The caller frees it (or lets
// the enclosing torch.Scope do so).
type Input struct {
	IDs       *torch.Tensor // int64 token ids; pad positions hold PadID
	Positions *torch.Tensor // int64 RoPE positions, 0 at each sequence's first real token
	Valid     *torch.Tensor // bool, true at real tokens
	// Adapters routes row b through Adapters[b] (nil entries: the base
	// alone); a nil slice is the model's own route (a view's adapter, or
	// none). Rows of one batch may go through different adapters.
	Adapters []*Adapter
}

// Padding says on which side short sequences are padded.
type Padding int

const (
	PadRight Padding = iota // training: sequences start at column 0
	PadLeft                 // generation: sequences end at the last column
)

// PadID is the token id written into pad positions. Pad positions are masked
// out of attention and their outputs ignored, so any valid id works.
const PadID = 0

// Pack pads seqs to the longest one and builds ids, positions and the
// validity mask on dev. Empty sequences are refused.
func Pack(seqs [][]int, side Padding, dev torch.Device) (in Input, err error) {
	defer torch.Recover(&err)
	if len(seqs) == 0 {
		return Input{}, fmt.Errorf("model: empty batch")
	}
	T := 0
	for i, s := range seqs {
		if len(s) == 0 {
			return Input{}, fmt.Errorf("model: sequence %d is empty", i)
		}
		T = max(T, len(s))
	}
	B := len(seqs)
	ids := make([]int64, B*T)
	pos := make([]int64, B*T)
	valid := make([]bool, B*T)
	for b, s := range seqs {
		off := 0
		if side == PadLeft {
			off = T - len(s)
		}
		for i, tok := range s {
			ids[b*T+off+i] = int64(tok)
			pos[b*T+off+i] = int64(i)
			valid[b*T+off+i] = true
		}
	}
	in = Input{
		IDs:       torch.FromInt64(ids, int64(B), int64(T)),
		Positions: torch.FromInt64(pos, int64(B), int64(T)),
		Valid:     torch.FromBool(valid, int64(B), int64(T)),
	}
	if dev != torch.CPU {
		s := torch.NewScope()
		moved := Input{IDs: in.IDs.ToDevice(dev), Positions: in.Positions.ToDevice(dev), Valid: in.Valid.ToDevice(dev)}
		s.Keep(moved.IDs, moved.Positions, moved.Valid)
		in.Free()
		s.Close()
		in = moved
	}
	return in, nil
}

// Free releases the three tensors.
func (in Input) Free() { torch.FreeAll(in.IDs, in.Positions, in.Valid) }

// Shape is (B, T).
func (in Input) Shape() (B, T int64) {
	s := in.IDs.Shape()
	return s[0], s[1]
}

// attentionMask is the bool mask (B, 1, T, S) for a forward over T new
// positions whose keys are the S = past+T slots ending at the new ones:
// query i may see key j when j is at or before i in time and j is a real
// token; a padded query sees only itself, so no row of the softmax is empty
// (an empty row would put NaN into the padded outputs and, through 0·NaN,
// into real ones).
func attentionMask(keyValid *torch.Tensor, T int64) *torch.Tensor {
	shape := keyValid.Shape() // (B, S)
	S := shape[1]
	dev := keyValid.Device()
	past := S - T
	// causal (T, S): key j allowed for query i when j ≤ past + i
	causal := torch.Ones([]int64{T, S}, torch.Bool, dev).Tril(past)
	self := torch.Ones([]int64{T, S}, torch.Bool, dev).Triu(past).Tril(past) // j == past + i
	kv := keyValid.Unsqueeze(1).Unsqueeze(1)                                 // (B,1,1,S)
	return causal.Unsqueeze(0).Unsqueeze(0).LogicalAnd(kv.LogicalOr(self.Unsqueeze(0).Unsqueeze(0)))
}

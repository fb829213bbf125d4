package optim

// precision.go — two settings that reproduce the numerics of reference
// trainers which run torch.optim.AdamW directly on bf16 models:
//
//  1. state_dtype: where AdamW's state lives for a model whose weights are
//     not float32. "float32" (the default) keeps a float32 master copy of
//     every weight and float32 moments, so an update smaller than half a
//     bf16 step of the weight still accumulates: 4 + 8 bytes per parameter
//     besides the weight. "model" keeps no master and moments of the
//     weights' own dtype, every AdamW operation rounded to it, as
//     torch.optim.AdamW steps bf16 parameters: 2 + 2 bytes per parameter
//     for bf16, and an update below half a bf16 step of its weight is lost.
//     PettingLLMs' verl actor (ppo_trainer/eval.yaml: actor.fsdp_config
//     .model_dtype bf16) and CoMLRL's agents (torch_dtype bfloat16, or auto
//     on a bf16 checkpoint) train this way. A float32 model is the same
//     under both.
//  2. loss_padding: CoMLRL's MAGRPO loss sums the log-probs of every token
//     of a completion as generate returned it, and generate pads the G
//     completions of one call to the longest with the pad token; so each
//     shorter completion's loss also covers pad tokens after its end of
//     sequence. With loss_padding the update does the same: the rows of one
//     agent sampled together (one node of a joint tree) are extended with
//     the tokenizer's pad token up to the longest, and the pads are trained.
//
// What this file is not: the optimizer (torch/optim.go runs the state modes)
// or the padding itself (policy/padding.go).

import "fmt"

// Values of Settings.StateDType.
const (
	StateFloat32 = "float32" // float32 masters (for non-float32 weights) and float32 moments
	StateModel   = "model"   // no master; moments in the weights' dtype
)

// StateBytesPerParam is the optimizer state per trained parameter for
// weights of weightBytes bytes, and what it holds.
func (s Settings) StateBytesPerParam(weightBytes int64) (int64, string) {
	if s.StateDType == StateModel {
		return 2 * weightBytes, "two moments in the weights' dtype, no master (state_dtype model)"
	}
	if weightBytes == 4 {
		return 8, "two float32 moments"
	}
	return 12, "float32 master and two float32 moments"
}

func (s Settings) validatePrecision() error {
	if err := oneOf("state_dtype", s.StateDType, StateFloat32, StateModel); err != nil {
		return err
	}
	if s.LossPadding && s.Loss != LossMAGRPO {
		return fmt.Errorf("loss_padding: trains pad tokens as CoMLRL's MAGRPO loss does, which needs loss: %s, got loss: %s; remove loss_padding or set loss: %s", LossMAGRPO, s.Loss, LossMAGRPO)
	}
	return nil
}

package policy

// precision.go — the AdamW mode of a trained model, from its settings'
// state_dtype (optim/precision.go): float32 masters for a non-float32 model
// by default, or the weights' own dtype (no master, moments of that dtype)
// as torch.optim.AdamW runs on bf16 weights.

import (
	"troupe/optim"
	"troupe/torch"
)

func adamWMode(s optim.Settings, weights torch.DType) torch.AdamWMode {
	switch {
	case s.StateDType == optim.StateModel:
		return torch.AdamWOwnDType
	case weights != torch.Float32:
		return torch.AdamWMasters
	}
	return torch.AdamWFloat32Moments
}

package bench

// size.go — the sizes a bench is asked for, checked before a weight is
// loaded: every count positive, the rows within the model's positions, and
// the memory the largest batch needs at the least (its KV cache; the
// update's logits, gradients and AdamW state) within the device's. A size
// beyond the device would otherwise end the process in the allocator
// without a word.
//
// What it is not: a prediction of the peak (activations, the prefill's
// chunks and the allocator's slack come on top); it refuses only what
// cannot fit.

import (
	"fmt"
	"slices"

	"troupe/internal/gpu"
	"troupe/internal/meminfo"
	"troupe/model"
	"troupe/torch"
)

// CheckSizes refuses options the bench cannot run on a model of cfg whose
// weights take elem bytes per value, on a device with memory bytes (0:
// unknown, not checked).
func CheckSizes(cfg model.Config, elem int, opt Options, memory int64, device string) error {
	switch {
	case opt.Reps < 1:
		return fmt.Errorf("bench: --reps must be ≥ 1 (timed repetitions after one warm-up), got %d", opt.Reps)
	case opt.UpdateRows < 0 || opt.UpdateLen < 0:
		return fmt.Errorf("bench: --update-rows and --update-len must be ≥ 0, got %d and %d", opt.UpdateRows, opt.UpdateLen)
	case opt.UpdateRows > 0 && opt.UpdateLen < 2:
		return fmt.Errorf("bench: --update-len must be ≥ 2 with --update-rows %d (a row predicts its next tokens), got %d", opt.UpdateRows, opt.UpdateLen)
	}
	if !opt.SkipGen {
		if len(opt.Batches) == 0 {
			return fmt.Errorf("bench: --batch: name at least one batch size")
		}
		for _, b := range opt.Batches {
			if b < 1 {
				return fmt.Errorf("bench: --batch: every size must be ≥ 1, got %d", b)
			}
		}
		if opt.NewTokens < 2 || opt.PromptLen < 1 {
			return fmt.Errorf("bench: --prompt must be ≥ 1 and --new ≥ 2, got %d and %d", opt.PromptLen, opt.NewTokens)
		}
		if n := opt.PromptLen + opt.NewTokens; cfg.MaxPositions > 0 && n > cfg.MaxPositions {
			return fmt.Errorf("bench: --prompt %d + --new %d = %d tokens per row, but the model has %d positions (max_position_embeddings)", opt.PromptLen, opt.NewTokens, n, cfg.MaxPositions)
		}
	}
	if opt.UpdateRows > 0 && cfg.MaxPositions > 0 && opt.UpdateLen > cfg.MaxPositions {
		return fmt.Errorf("bench: --update-len %d tokens per row, but the model has %d positions (max_position_embeddings)", opt.UpdateLen, cfg.MaxPositions)
	}
	if memory <= 0 {
		return nil
	}
	weights := float64(cfg.NumParams()) * float64(elem)
	if !opt.SkipGen {
		b := slices.Max(opt.Batches)
		kv := float64(b) * float64(opt.PromptLen+opt.NewTokens) * float64(cfg.NumLayers) * 2 * float64(cfg.NumKVHeads*cfg.HeadDim) * float64(elem)
		if need := weights + kv; need > float64(memory) {
			return fmt.Errorf("bench: --batch %d: the weights and the KV cache of %d rows × %d tokens need at least %s, and %s has %s; use smaller batches, or fewer --prompt/--new tokens", b, b, opt.PromptLen+opt.NewTokens, gib(need), device, gib(float64(memory)))
		}
	}
	if opt.UpdateRows > 0 {
		tokens := float64(opt.UpdateRows) * float64(opt.UpdateLen)
		// the weights, their gradients and two AdamW moments; float32 logits
		// over the vocabulary, their log-softmax and its gradient
		need := 4*weights + 3*tokens*float64(cfg.VocabSize)*4
		if need > float64(memory) {
			return fmt.Errorf("bench: --update-rows %d × --update-len %d: the update needs at least %s (weights, gradients, AdamW state and the logits of %.0f tokens), and %s has %s; use fewer rows or tokens", opt.UpdateRows, opt.UpdateLen, gib(need), tokens, device, gib(float64(memory)))
		}
	}
	return nil
}

// DeviceMemory is the memory a bench may use on dev: a GPU's free memory,
// or the machine's physical memory; 0 when unknown.
func DeviceMemory(dev torch.Device) int64 {
	if dev.IsCUDA() {
		id, err := torch.CUDAPCIBusID(int(dev))
		if err != nil {
			return 0
		}
		free, _, err := gpu.FreeMemory(int(dev), id)
		if err != nil {
			return 0
		}
		return int64(free)
	}
	return meminfo.Total()
}

func gib(b float64) string { return fmt.Sprintf("%.1f GiB", b/(1<<30)) }

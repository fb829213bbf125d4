package run

// planupdate.go — the update's memory in `train plan`: what one trained
// model's update allocates on one rank above what stays resident, phase by
// phase, from the model's config.json and the run's config. The plan shows
// the phase that peaks.
//
// The phases and what each holds besides the resident state:
//
//	backward through the head   the grads kept across micro-batches, the
//	                            activations saved for the backward, and the
//	                            head's backward transients (headBackwardBytes)
//	backward through a layer    the same grads and saved activations, one
//	                            block's recomputed activations, its backward's
//	                            working set and fresh grads, or (levels 2–3)
//	                            a layer's reduce-scatter buffers
//	the grads' all-reduce       (data parallel, levels 0–1) the grads and the
//	                            all-reduce's staging buckets
//	the optimizer step          the grads (or sums), AdamW's temporaries and
//	                            (levels 1–3) the buckets of the weights'
//	                            all-gather, two in flight
//	the end of the update       (level 3) the whole model gathered again
//
// Exact where the code fixes a size (grads, float32 sums, buckets, the
// head's V×D tensors); the activations are an estimate (activationBytes).
// TestPlanHoldsToTheMeasuredPeak holds the total to a rank's measured peak
// at every shard level.

import (
	"fmt"

	"troupe/model"
	"troupe/optim"
	"troupe/policy"
	"troupe/torch"
)

// updateShape is what the plan knows of one trained model's update.
type updateShape struct {
	name             string
	dev              torch.Device
	mc               model.Config
	P                int64 // trained parameters (an adapter's under LoRA)
	b                int64 // bytes per weight
	level, ranks     int   // shard level (0 none), data-parallel ranks (0: one process)
	tokens           int64 // one micro-batch
	prompt, response int64 // the longest prompt and response of a row, in tokens
	checkpointed     bool
	sums             string // why the grads are summed in float32 ("": they are not)
	bucket           int64  // models.<name>.shard_bucket_mib in bytes (0: the defaults)
	lora             bool
	entropy          bool // an entropy term in the loss: the head's backward holds more per chunk
}

// updatePhase is what one phase of the update holds above the resident state.
type updatePhase struct {
	what  string
	parts []residentPart
}

func (p updatePhase) bytes() (n int64) {
	for _, x := range p.parts {
		n += x.bytes
	}
	return n
}

// updatePeak is the phase of u's update that holds the most.
func updatePeak(u updateShape) updatePhase {
	var peak updatePhase
	for i, p := range updatePhases(u) {
		if i == 0 || p.bytes() > peak.bytes() {
			peak = p
		}
	}
	return peak
}

// updatePhases lists u's phases with their parts.
func updatePhases(u updateShape) []updatePhase {
	part := func(format string, bytes int64, args ...any) residentPart {
		return residentPart{u.dev, fmt.Sprintf("model %s: ", u.name) + fmt.Sprintf(format, args...), bytes, false}
	}
	mc, b, P := u.mc, u.b, u.P
	D, L := int64(mc.HiddenSize), int64(mc.NumLayers)
	layer := mc.LayerParams()
	if u.lora {
		layer = P / max(L, 1)
	}
	W := int64(max(u.ranks, 1))
	cuda := u.dev.IsCUDA()

	// the grads kept across micro-batches, and those not yet reduce-scattered
	var kept, whole []residentPart
	if u.level < 2 {
		kept = append(kept, part("grads", P*b))
		if u.sums != "" {
			kept = append(kept, part("float32 grad sums (grad_accum_dtype %s)", P*4, u.sums))
		}
	} else {
		kept = append(kept, part("float32 grad sums, shard %d over %d ranks", 4*ceilDiv(P, W), u.level, u.ranks))
		if u.checkpointed {
			whole = append(whole, part("grads of the embedding and head and of one layer, until reduce-scattered", (P-L*layer+layer)*b))
		} else {
			whole = append(whole, part("one micro-batch's grads, until reduce-scattered", P*b))
		}
	}
	// level 3: the layers' weights given back, but the one a pass is in and
	// the next one's gathered buckets (prefetch)
	givenBack := func(layers int64, why string) []residentPart {
		if u.level < 3 || layers <= 0 {
			return nil
		}
		return []residentPart{part("weights given back (shard 3: %s)", -layers*layer*b, why)}
	}
	with := func(lists ...[]residentPart) []residentPart {
		var out []residentPart
		for _, l := range lists {
			out = append(out, l...)
		}
		return out
	}
	micro := with(kept, whole, givenBack(L-2, "a layer and the next one's buckets stay"))

	// a micro-batch's backward
	blockSaved, working := blockActivationBytes(mc, b, u.tokens, min(u.tokens, u.prompt+u.response), !(cuda && b == 2))
	saved, what := L*blockSaved, "activations"
	if u.checkpointed {
		saved, what = L*u.tokens*D*b, "checkpointed activations (each layer's input)"
	}
	activations := part("%s of a micro-batch of %d tokens (estimate)", saved, what, u.tokens)
	n := min(u.responseTokens(), logProbChunk)
	phases := []updatePhase{{"the backward through the head", with(micro, []residentPart{activations,
		part("the head's backward: its float32 V×D grad sum, chunks of %d positions over the vocabulary", headBackwardBytes(mc, b, n, u.tokens, u.dev, u.entropy), n)})}}
	layerParts := with(micro, []residentPart{activations})
	switch {
	case !u.checkpointed:
		layerParts = append(layerParts, part("a layer's backward working set (estimate)", working+layer*b))
	case u.level < 2:
		layerParts = append(layerParts, part("one layer's recomputed activations and backward working set (estimate), and its fresh grads", blockSaved+working+layer*b))
	default:
		// the layer's grads are among those not yet reduce-scattered; its
		// reduce-scatter comes when its activations are freed
		layerParts = append(layerParts, part("the layer before's chunks of the grad sum, reduce-scattered, not yet added", ceilDiv(layer, W)*b))
		if rs := reduceScatterBytes(u, layer); rs > blockSaved+working {
			layerParts = append(layerParts, part("a layer's reduce-scatter buffers", rs))
		} else {
			layerParts = append(layerParts, part("one layer's recomputed activations and backward working set (estimate)", blockSaved+working))
		}
	}
	phases = append(phases, updatePhase{"the backward through a layer", layerParts})

	// the grads' all-reduce (data parallel, unsharded grads)
	if u.ranks > 1 && u.level < 2 {
		wire := b
		if u.sums != "" || (!cuda && b == 2) { // float32 sums; Gloo sums half-width buckets in float32
			wire = 4
		}
		buckets := int64(1) // Gloo: one bucket at a time
		if cuda {
			buckets = 3 // NCCL: the host checks bucket k when k+2 is issued
		}
		bucket := u.bucket
		if bucket <= 0 {
			bucket = torch.DefaultBucketBytes
		}
		phases = append(phases, updatePhase{"the grads' all-reduce", with(kept,
			[]residentPart{part("the all-reduce's staging buckets (%d of at most %s)", min(buckets*bucket, P*wire), buckets, mib(bucket))})})
	}

	// the optimizer step
	step := with(kept, givenBack(L, "every layer, until the end of the update"))
	if u.level == 0 || u.ranks == 0 {
		step = append(step, part("AdamW's temporaries (estimate)", adamTemporaries(mc, b, P, cuda, u.lora)))
	} else {
		largest := max(P-L*layer, layer)
		chunk := ceilDiv(shardBucketElems(u, largest), W)
		step = append(step, part("AdamW's temporaries on a bucket's masters", 4*chunk*(1+boolInt(u.level == 1))))
		step = append(step, part("the weights' all-gather, two buckets in flight", 2*gatherBucketBytes(u, largest)))
	}
	phases = append(phases, updatePhase{"the optimizer step", step})

	// level 3: the whole model gathered again at the end
	if u.level == 3 {
		phases = append(phases, updatePhase{"the end of the update (shard 3 gathers the whole model again)",
			[]residentPart{part("a layer's all-gather buckets", gatherBucketBytes(u, layer))}})
	}
	return phases
}

// logProbChunk is the positions projected onto the vocabulary at once
// (model.LogProbOptions' default).
const logProbChunk = 1024

// responseTokens is the positions of a micro-batch the head projects (the
// loss's: its rows' responses), the response's share of its tokens.
func (u updateShape) responseTokens() int64 {
	if u.prompt+u.response <= 0 {
		return u.tokens
	}
	return ceilDiv(u.tokens*u.response, u.prompt+u.response)
}

// headBackwardBytes is what the fused head's backward (torch/csrc/fused.cc,
// LinearTokenLogProbs) allocates above its inputs, for chunks of n
// positions and up to tokens positions in all, by docs/gpu.md's formula
// (which TestLinearTokenLogProbsPeakMemoryCPU and, on CUDA,
// TestCUDALinearTokenLogProbsPeakMemory hold the code to). With bf16/f16
// weights on CUDA: the float32 sum of grad_w (4·V·D, none for a single
// chunk) with, per chunk, the logits in the weights' type and their float32
// softmax ((b + 4)·n·V; (b + 12)·n·V with the entropy in the loss), or at
// the end grad_w rounded to the weights' type (b·V·D); and grad_h (b·N·D).
// Float32 GEMMs (float32 weights, or a CPU whose bf16 GEMMs sum in float32,
// which also holds the weight in float32): 4·V·D + 8·n·V + 4·N·D.
func headBackwardBytes(mc model.Config, b, n, tokens int64, dev torch.Device, entropy bool) int64 {
	V, D := int64(mc.VocabSize), int64(mc.HiddenSize)
	perChunk := (b + 4) * n * V
	if entropy {
		perChunk += 8 * n * V
	}
	if b == 4 || !dev.IsCUDA() {
		fixed := 4 * V * D // grad_w in float32
		if b != 4 {
			fixed += 4*V*D + b*V*D // the weight in float32, grad_w rounded to its type
		}
		return fixed + max(perChunk, 8*n*V) + 4*tokens*D
	}
	if tokens <= n { // one chunk: no float32 sum
		return max(perChunk, b*n*V+b*V*D) + b*tokens*D
	}
	return 4*V*D + max(perChunk, b*V*D) + b*tokens*D
}

// blockActivationBytes estimates what one decoder block of a micro-batch
// of tokens (rows of up to seqLen) saves for its backward and what its
// backward adds while it runs, per the ops troupe runs (bf16/f16: explicit
// RMSNorm in float32, rotary embeddings, SwiGLU). Saved: per token about
// 7·D + 4·I + 4·(H + KVH)·Dh elements of the model's dtype (+3·(H + KVH)·Dh
// for Qwen3's q/k norms), and with attention off the flash kernel (a CPU,
// float32, or libtorch < 2.6: torch/csrc/attention.cc's explicit math) each
// row's scores in the dtype and probabilities in float32 (and rounded
// back), H·seqLen² each per row, at most H·tokens·seqLen. The backward's
// working set: the grads of the MLP's T×I intermediates, four at once (of
// the down projection's input, of the gate's activation and of the up
// projection, and of the gate).
func blockActivationBytes(c model.Config, b, tokens, seqLen int64, explicitAttention bool) (saved, working int64) {
	D, I := int64(c.HiddenSize), int64(c.IntermediateSize)
	heads := int64(c.NumHeads+c.NumKVHeads) * int64(c.HeadDim)
	perLayer := 7*D + 4*I + 4*heads
	if c.Family == model.Qwen3 {
		perLayer += 3 * heads
	}
	saved = tokens * perLayer * b
	if explicitAttention {
		per := b + 4
		if b != 4 {
			per += b
		}
		saved += per * int64(c.NumHeads) * tokens * seqLen
	}
	return saved, 4 * tokens * I * b
}

// shardBucketElems is the elements of the largest bucket a unit of n
// elements is cut into (policy/shard.go's layout).
func shardBucketElems(u updateShape, n int64) int64 {
	limit := u.bucket
	if limit <= 0 {
		limit = policy.DefaultShardBucketBytes
	}
	return min(n, limit/4)
}

// gatherBucketBytes is one bucket of a unit of n elements gathered: the
// whole bucket in the weights' dtype and this rank's chunk sent.
func gatherBucketBytes(u updateShape, n int64) int64 {
	e := shardBucketElems(u, n)
	W := int64(max(u.ranks, 1))
	return e*u.b + ceilDiv(e, W)*u.b
}

// reduceScatterBytes is a unit of n elements reduce-scattered: on Gloo a
// bucket laid end to end in the grads' dtype and the receive buffer of as
// much, at a time; on NCCL the whole unit's input (c10d holds it until the
// collective is waited for, a unit later) and the unit before's; and this
// rank's chunks of the unit.
func reduceScatterBytes(u updateShape, n int64) int64 {
	e := shardBucketElems(u, n)
	W := int64(max(u.ranks, 1))
	chunks := ceilDiv(n, W) * u.b
	if u.dev.IsCUDA() {
		return 2*n*u.b + chunks
	}
	return 2*e*u.b + chunks
}

// adamTemporaries is what an unsharded AdamW step allocates above the
// state: per weight on the CPU the denominator (and the float32 grad of a
// bf16 weight); on CUDA the fused kernel's float32 grads of a bf16 model, a
// 256 MiB chunk at a time.
func adamTemporaries(mc model.Config, b, P int64, cuda, lora bool) int64 {
	if cuda {
		if b == 4 {
			return 0
		}
		return min(P*4, 256<<20)
	}
	largest := int64(mc.VocabSize) * int64(mc.HiddenSize)
	largest = max(largest, int64(mc.IntermediateSize)*int64(mc.HiddenSize))
	if lora {
		largest = min(largest, P)
	}
	n := largest * 4
	if b != 4 {
		n += largest * 4
	}
	return n
}

func boolInt(v bool) int64 {
	if v {
		return 1
	}
	return 0
}

func mib(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }

// sumsWhy says why model tr's update sums its grads in float32, "" when it
// does not (policy/accum.go: levels 0–1 with bf16/f16 weights).
func sumsWhy(s optim.Settings, b int64, level, rows int) string {
	if b == 4 || s.GradAccumDType == optim.AccumParam || level >= 2 {
		return ""
	}
	if s.GradAccumDType != optim.AccumAuto {
		return "always"
	}
	if s.MicroBatchTokens == 0 && rows/s.MicroBatchSize > optim.AutoFloat32MicroBatches {
		return fmt.Sprintf("auto: at least %d micro-batches per mini-batch", rows/s.MicroBatchSize)
	}
	return "auto: if a mini-batch has more than 16 micro-batches"
}

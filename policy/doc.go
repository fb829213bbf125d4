// Package policy updates the trained models: the per-token losses (the
// clipped surrogate with dual clip, MAGRPO's objective, the KL and entropy
// terms) and their aggregation modes, the update step with mini-batches,
// micro-batch gradient accumulation, grad clipping, AdamW and the learning
// rate schedule, per-agent optimizer settings, and the assignment of agents
// to models (shared or separate). The semantics are those of the project's
// reference algorithms.md §5–6; where this package departs from the
// reference code, the file that does so says why.
//
// The settings themselves (optimizer and loss keys, their defaults and
// validation, per-agent overrides, the learning-rate schedule, and the
// assignment of agents to models) are the pure-Go package optim, so that
// config can use them without linking libtorch.
//
// It imports model and torch, and neither rollout nor advantage: the
// training loop converts rollout samples and their advantages into Sequence
// rows.
//
// # Use
//
//	groups, err := optim.Assign(specs)              // agent → model, settings checked
//	for _, g := range groups {                      // one trainer per trained model
//		var ref *model.Model                        // only when g.Settings.NeedsReference()
//		tr, err := policy.NewTrainer(policy.TrainerConfig{Group: g, Policy: m, Reference: ref, Temperature: 1})
//		...
//	}
//	metrics, err := tr.Update(rows, step)           // on the torch goroutine, once per step
//
// # Files
//
//	loss.go       ClippedLoss, MAGRPOLoss, KLPenalty, Aggregate, Loss
//	batch.go      Sequence rows, Pack (tokens → tensors + response mask), Split
//	trainer.go    Trainer: old log-probs, mini/micro-batches, clip, AdamW, skips
//	metrics.go    per-agent metrics of one update
//	rollout.go    the sampler's log-probs against the update's; rollout_is weights
//	accum.go      summing a bf16/f16 model's micro-batch grads in float32
//	dist.go       the data-parallel part of the update (grads summed across ranks, over dist.Collectives)
//	shard.go      training state sharded over the ranks: layout, masters, level 1's step
//	shardgrads.go shard level 2: grads reduce-scattered into float32 sums of 1/W, global-norm clip
//	shardparams.go shard level 3: each layer's weights gathered for its pass; the update's bracket
//	shardckpt.go  checkpoints of a sharded trainer: consolidated on save, sliced on load
//	abandon.go    a failed update undone locally, without a collective the other ranks are not issuing
//	shardcomm.go  the sharded collectives in flight: reduce-scatters a unit late, prefetched gathers, host checks
//	memory.go     what an update holds per rank: weights, grads, masters, moments
//	precision.go  the AdamW mode from optim.state_dtype (float32 masters, or the weights' dtype)
//	padding.go    optim.loss_padding: a group's rows padded to its longest, the pads trained
//
// # Memory per parameter
//
// What the update keeps per trained parameter, in bytes:
//
//	                      weight  grad  master f32  exp_avg  exp_avg_sq  total
//	bf16 (GPU)              2      2       4          4         4         16
//	bf16, state_dtype model 2      2       —          2         2          8
//	f32 (CPU, tests)        4      4       —          4         4         16
//
// The grad exists from the first backward of a mini-batch to its optimizer
// step (ZeroGrad releases it), so between updates — while the sampler runs —
// the bf16 model holds 14 bytes per parameter and the f32 one 12. The
// optimizer state is created at the first step. A frozen KL reference adds 2
// (bf16) or 4 (f32) bytes per parameter of its own, and is loaded only when
// kl_coef > 0. Activations, the log-prob chunks' float32 logits and the
// sampler's KV cache come on top. For scale: Qwen3-4B (4.0 B parameters)
// needs 64 GB during the update in bf16, so two separately trained 4B models
// (Dr. MAS math without sharing) do not fit on one 80 GB GPU this way;
// sharing one model does. With data-parallel ranks, sharding (shard.go)
// divides masters and moments (level 1), grads (2) and the weights during
// the update (3) by their number.
//
// Mixed precision is the model's dtype plus the optimizer's float32 master
// copy: forward and backward run in bf16, grads are bf16, the norm is
// computed in float32, and AdamW updates the float32 master with float32
// moments before rounding it into the bf16 weight. Micro-batch grads are
// summed in the bf16 grads themselves up to 16 micro-batches per mini-batch
// and in float32 beyond (optim.grad_accum_dtype; accum.go has the
// measurement: the bf16 sum's error grows like √k and passes half the bf16
// backward's own error at 16). bf16 keeps float32's exponent range, so no
// loss scaling is needed. optim.state_dtype: model drops the master and keeps
// the moments in bf16, every AdamW operation rounded to bf16, as
// torch.optim.AdamW runs on bf16 weights (PettingLLMs', CoMLRL's runs).
package policy

package policy

// trainer.go — the update step for one trained model (algorithms.md §6):
//
//  1. split the step's rows into mini-batches of micro-batches (batch.go);
//  2. without grad, with the parameters as they are before any update:
//     the old log-probs and the entropy of every micro-batch, and the frozen
//     reference's log-probs when the KL term is on — all at the sampler's
//     temperature and in the very micro-batches (same rows, same padding) the
//     loss will use, so the first mini-batch's ratio is exactly 1. With one
//     optimizer step per update (one mini-batch, one epoch: the default) the
//     old log-probs are instead the grad forward's own, detached — the same
//     numbers without a second forward;
//  3. per mini-batch: per micro-batch forward → Loss / (micro-batches in the
//     mini-batch) → backward, accumulating grads; clip the total grad norm;
//     AdamW step at the schedule's lr — unless the pre-clip norm is not
//     finite, in which case the grads are dropped and the skip counted.
//
// What this file is not: the training loop. One Trainer serves one model
// (several agents when shared); the loop calls Update once per model per
// step, on the torch goroutine.
//
// Mixed precision: the Trainer adds nothing of its own. The model's dtype is
// the compute dtype (bf16 on GPU, f32 on CPU), grads have the parameters'
// dtype, and the AdamW keeps float32 master weights and float32 moments for
// any non-float32 parameter (see the package doc for the bytes this costs),
// unless optim.state_dtype is model: then no master and moments of the
// weights' dtype (precision.go).

import (
	"fmt"
	"math"
	"runtime"
	"troupe/optim"

	"troupe/dist"
	"troupe/model"
	"troupe/torch"
)

// TrainerConfig builds a Trainer.
type TrainerConfig struct {
	Group     optim.Group  // the model's name, its agents and their settings (from Assign)
	Policy    *model.Model // trained in place; the caller owns and frees it
	Reference *model.Model // frozen KL reference: required when Settings.KLCoef > 0, refused otherwise
	// Temperature is the sampler's training temperature; log-probs are
	// computed from logits divided by it, as the sampler drew them (0 or 1: none).
	Temperature float64
	// Seed fixes the mini-batch order together with the step index.
	Seed uint64
	// LogProbChunk is the number of positions projected onto the vocabulary
	// at once (0: the model's default).
	LogProbChunk int
	// Dist, when set, makes the update data-parallel (dist.go): every rank
	// passes the same rows, computes the micro-batches j with j mod World =
	// Rank, and the grads are summed across ranks before clipping. The
	// group's collectives, as package dist gives them (nil: one process).
	Dist dist.Collectives
	// Shard spreads the training state over Dist's ranks (shard.go); it
	// does nothing without Dist.
	Shard ShardConfig
}

// Trainer updates one model with its own AdamW.
type Trainer struct {
	cfg            TrainerConfig
	opt            *torch.AdamW // nil when sharded
	shard          *sharded     // nil unless sharded (shard.go)
	mem            heldBytes    // what the last update held, per rank (memory.go)
	params         []*torch.Tensor
	skipped        int64
	optimizerSteps int64

	// pad, when set (benchmarks), lays micro-batches out padded (Pad)
	// instead of packed, to measure what packing saves.
	pad bool

	// oldPass, when set (tests), computes the old log-probs in their own
	// no-grad pass even when the update takes one optimizer step.
	oldPass bool

	// onMicroBatch, when set (tests), sees every training forward's
	// log-probs, the old log-probs and the mask before the backward.
	onMicroBatch func(mini, micro int, logp, oldLogp, mask *torch.Tensor)
}

// TrainerState is what a checkpoint needs besides the weights and the
// optimizer's per-parameter state (Optimizer().State).
type TrainerState struct {
	SkippedSteps   int64 `json:"skipped_steps"`   // optimizer steps skipped for a non-finite grad norm
	OptimizerSteps int64 `json:"optimizer_steps"` // optimizer steps applied
}

// NewTrainer checks the configuration, turns on grads for the policy's
// weights (off for the reference's) and builds the AdamW over every policy
// weight in one group, with float32 master weights when the policy is not
// float32 (or none under state_dtype model).
func NewTrainer(cfg TrainerConfig) (t *Trainer, err error) {
	defer torch.Recover(&err)
	g := cfg.Group
	if err := g.Settings.Validate(); err != nil {
		return nil, fmt.Errorf("policy: model %q: %w", g.Model, err)
	}
	switch {
	case len(g.Agents) == 0:
		return nil, fmt.Errorf("policy: model %q: no agents; build groups with optim.Assign", g.Model)
	case cfg.Policy == nil:
		return nil, fmt.Errorf("policy: model %q: no policy model given", g.Model)
	case g.Settings.NeedsReference() && cfg.Reference == nil:
		return nil, fmt.Errorf("policy: model %q: kl_coef is %g but no reference model was given; load the initial checkpoint as the reference, or set kl_coef: 0", g.Model, g.Settings.KLCoef)
	case !g.Settings.NeedsReference() && cfg.Reference != nil:
		return nil, fmt.Errorf("policy: model %q: a reference model was given but kl_coef is 0; do not load it (it only costs memory), or set kl_coef > 0", g.Model)
	case !(cfg.Temperature >= 0) || math.IsInf(cfg.Temperature, 0):
		return nil, fmt.Errorf("policy: model %q: temperature must be >= 0 and finite, got %g", g.Model, cfg.Temperature)
	}
	if r := cfg.Reference; r != nil {
		if r.Config.VocabSize != cfg.Policy.Config.VocabSize {
			return nil, fmt.Errorf("policy: model %q: reference vocabulary %d differs from the policy's %d; the reference must be the policy's initial checkpoint", g.Model, r.Config.VocabSize, cfg.Policy.Config.VocabSize)
		}
		r.SetRequiresGrad(false)
	}
	if l := cfg.Shard.Level; l < 0 || l > 3 {
		return nil, fmt.Errorf("policy: model %q: shard level %d is not 0, 1, 2 or 3", g.Model, l)
	}
	if cfg.Shard.Level == 3 && !g.Settings.ActivationCheckpointing {
		return nil, fmt.Errorf("policy: model %q: shard level 3 gathers each layer only while a pass uses it, which needs activation_checkpointing", g.Model)
	}
	cfg.Policy.SetRequiresGrad(true)
	s := g.Settings
	params := cfg.Policy.Parameters()
	if cfg.Dist != nil && cfg.Shard.Level > 0 {
		if s.StateDType == optim.StateModel {
			return nil, fmt.Errorf("policy: model %q: sharded training keeps float32 masters and moments, so optim.state_dtype %s cannot shard; set its shard level to 0 or state_dtype %s", g.Model, optim.StateModel, optim.StateFloat32)
		}
		if cfg.Policy.Adapter() != nil {
			return nil, fmt.Errorf("policy: model %q: adapters are not sharded; set its shard level to 0", g.Model)
		}
		sh, err := newSharded(cfg.Policy, cfg.Shard, s, cfg.Dist)
		if err != nil {
			return nil, fmt.Errorf("policy: model %q: sharding: %w", g.Model, err)
		}
		return &Trainer{cfg: cfg, shard: sh, params: params}, nil
	}
	opt := torch.NewAdamWMode([]torch.AdamWGroup{{
		Params: params, LR: s.LR, Beta1: s.Beta1, Beta2: s.Beta2, Eps: s.Eps, WeightDecay: s.WeightDecay,
	}}, adamWMode(s, cfg.Policy.DType()))
	return &Trainer{cfg: cfg, opt: opt, params: params}, nil
}

// Model is the trained model's name.
func (t *Trainer) Model() string { return t.cfg.Group.Model }

// Agents lists the agents whose rows this trainer takes.
func (t *Trainer) Agents() []string { return t.cfg.Group.Agents }

// Settings are the model's optimizer and loss settings.
func (t *Trainer) Settings() optim.Settings { return t.cfg.Group.Settings }

// Temperature returns the temperature the update's log-probs divide the
// logits by (TrainerConfig.Temperature).
func (t *Trainer) Temperature() float64 { return t.cfg.Temperature }

// Optimizer is the model's AdamW (State/LoadState per parameter, in
// Model.Params order); nil when the state is sharded (shardckpt.go has the
// checkpoint views).
func (t *Trainer) Optimizer() *torch.AdamW { return t.opt }

// ShardLevel is the level the trainer shards at (0: not sharded, whatever
// was asked, in one process).
func (t *Trainer) ShardLevel() int {
	if t.shard == nil {
		return 0
	}
	return t.shard.level
}

// State returns the trainer's counters for a checkpoint.
func (t *Trainer) State() TrainerState {
	return TrainerState{SkippedSteps: t.skipped, OptimizerSteps: t.optimizerSteps}
}

// Restore sets the counters from a checkpoint (the optimizer's state is
// restored through Optimizer().LoadState).
func (t *Trainer) Restore(s TrainerState) {
	t.skipped, t.optimizerSteps = s.SkippedSteps, s.OptimizerSteps
}

// Free releases the optimizer state. The models belong to the caller.
func (t *Trainer) Free() {
	if t != nil {
		t.opt.Free()
		t.shard.free()
	}
}

// setLR sets the learning rate of the step.
func (t *Trainer) setLR(lr float64) {
	if t.shard != nil {
		t.shard.setLR(lr)
		return
	}
	t.opt.SetLR(0, lr)
}

// zeroGrad frees the weights' grads.
func (t *Trainer) zeroGrad() {
	if t.shard != nil {
		t.shard.zeroGrads()
		return
	}
	t.opt.ZeroGrad()
}

// step is one optimizer step from the summed, clipped grads.
func (t *Trainer) step() error {
	if t.shard == nil {
		t.opt.Step()
		return nil
	}
	step := t.shard.stepWholeGrads
	if t.shard.level >= 2 {
		step = t.shard.stepSums
	}
	if err := step(); err != nil {
		return fmt.Errorf("sharded step of model %q: %w", t.Model(), err)
	}
	return nil
}

// gradients runs mini-batch i's micro-batches of this rank (micros of the
// mini-batch's total over all ranks), sums their grads across ranks, clips
// them and returns the pre-clip norm.
func (t *Trainer) gradients(i int, micros []*microBatch, total int, rows []rowRecord) (float64, error) {
	if t.shard != nil && t.shard.level >= 2 {
		return t.shardedGradients(i, micros, total, rows) // shardgrads.go
	}
	var sums float32Sums // float32 sums of this mini-batch's grads (accum.go), or nil
	if t.sumsInFloat32(total) {
		sums = newFloat32Sums(t.params)
	}
	for j, mb := range micros {
		if err := t.accumulate(mb, i, j, total, rows); err != nil {
			sums.free()
			return 0, err
		}
		if sums != nil {
			sums.add(t.params)
		}
	}
	if sums != nil {
		err := t.storeSums(sums)
		t.noteGrads(sums)
		sums.free()
		if err != nil {
			return 0, err
		}
	} else {
		if err := t.reduceGrads(); err != nil {
			return 0, err
		}
		t.noteGrads(nil)
	}
	return torch.ClipGradNorm(t.params, t.cfg.Group.Settings.GradClip), nil
}

// microBatch is one packed micro-batch with what the no-grad pass computed.
type microBatch struct {
	rows       []int
	batch      Batch
	oldLogp    *torch.Tensor // (B,T) float32
	refLogp    *torch.Tensor // (B,T) float32, nil without KL
	entropySum []float64     // per row, from the no-grad pass
}

// Update runs one train step's update over seqs (every row must belong to
// one of the trainer's agents) and returns the per-agent metrics. step is the
// 0-based train step: it sets the learning rate and the mini-batch order, so
// a resumed run repeats an uninterrupted one exactly. It must run on the
// torch goroutine. On an error the model may have taken some of the step's
// optimizer steps.
//
// Update keeps the calling goroutine on one OS thread while it runs:
// libtorch numbers autograd nodes per thread and orders the backward pass by
// those numbers, so a forward pass recorded across threads would sum some
// gradients in another order (about one update in a hundred differed in the
// last bits on this project's CPU tests) and a resumed run would drift from
// an uninterrupted one.
func (t *Trainer) Update(seqs []Sequence, step int) (metrics Metrics, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	set := t.cfg.Group.Settings
	if err := CheckSequences(seqs, t.cfg.Group.Agents, t.cfg.Policy.Config.VocabSize); err != nil {
		return nil, fmt.Errorf("model %q: %w", t.Model(), err)
	}
	if set.RolloutIS != optim.RolloutISOff {
		for i, s := range seqs {
			if s.SampleLogProbs == nil {
				return nil, fmt.Errorf("model %q: sequence %d (agent %q) has no sampler log-probs, which rollout_is %s weighs by; set rollout_is: off, or give every row its SampleLogProbs", t.Model(), i, s.Agent, set.RolloutIS)
			}
		}
	}
	defer torch.Recover(&err)
	scope := torch.NewScope()
	defer scope.Close()
	defer t.zeroGrad()
	t.mem = heldBytes{}
	if t.shard != nil {
		if t.pad && t.shard.level == 3 {
			return nil, fmt.Errorf("model %q: shard level 3 runs on packed micro-batches", t.Model())
		}
		t.shard.beginUpdate(t.cfg.Policy) // shardparams.go
		defer func() {
			if p := recover(); p != nil || err != nil {
				t.shard.abandonUpdate(t.cfg.Policy) // abandon.go: no collective on an error path
				if p != nil {
					panic(p) // torch.Recover above makes it the error
				}
				return
			}
			if e := t.shard.endUpdate(t.cfg.Policy); e != nil {
				err = fmt.Errorf("model %q: gathering the sharded weights after the update: %w", t.Model(), e)
			}
		}()
	}

	report := stepReport{lr: set.LearningRate(step), settings: set, rows: make([]rowRecord, len(seqs))}
	for i, s := range seqs {
		report.rows[i] = rowRecord{agent: s.Agent, advantage: s.Advantage}
	}
	t.setLR(report.lr)

	updates := set.MiniBatches(len(seqs))
	split := Split(len(seqs), updates, set.MicroBatchSize, t.cfg.Seed, step)
	if set.MicroBatchTokens > 0 {
		lengths := make([]int, len(seqs))
		for i, s := range seqs {
			lengths[i] = len(s.Prompt) + len(s.Response)
		}
		split = SplitTokens(lengths, updates, set.MicroBatchTokens, t.cfg.Seed, step)
	}
	minis := make([][]*microBatch, len(split))
	for i, micros := range split {
		for j, rows := range micros {
			if !t.mine(j) {
				continue
			}
			part := make([]Sequence, len(rows))
			for j, r := range rows {
				part[j] = seqs[r]
			}
			layout := Pack
			if t.pad {
				layout = Pad
			}
			b, err := layout(part, t.cfg.Policy.Device())
			if err != nil {
				return nil, err
			}
			minis[i] = append(minis[i], &microBatch{rows: rows, batch: b})
		}
	}
	// With one optimizer step in the update (one mini-batch, one epoch) no
	// weight changes before the loss is taken, so the old log-probs are the
	// grad forward's own values, detached (accumulate): the no-grad pass
	// would compute the same numbers at the cost of another forward, a
	// quarter of the update's FLOPs. Several steps need the pass: every
	// mini-batch after the first is measured against the weights before the
	// first.
	oldPass := len(split)*set.Epochs > 1 || t.oldPass
	if err := t.beforeUpdate(minis, split, oldPass); err != nil {
		return nil, err
	}

	// verl's ppo_epochs: every epoch takes one optimizer step per mini-batch,
	// the same mini-batches against the same old log-probs; from the second
	// mini-batch on, the ratios leave 1.
	for range set.Epochs {
		for i, micros := range minis {
			norm, err := t.gradients(i, micros, len(split[i]), report.rows)
			if err != nil {
				return nil, err
			}
			report.gradNorms = append(report.gradNorms, norm)
			if math.IsNaN(norm) || math.IsInf(norm, 0) {
				t.skipped++
			} else {
				if err := t.step(); err != nil {
					return nil, err
				}
				t.cfg.Policy.MarkUpdated()
				t.optimizerSteps++
				report.updates++
			}
			t.zeroGrad()
		}
	}
	if err := t.reduceRows(report.rows); err != nil {
		return nil, err
	}
	report.skipped = t.skipped
	metrics = report.metrics(t.cfg.Group.Agents)
	t.memoryMetrics(metrics)
	return metrics, nil
}

// logProbOptions are the options of every log-prob forward of the update.
func (t *Trainer) logProbOptions(entropy bool) model.LogProbOptions {
	return model.LogProbOptions{Temperature: t.cfg.Temperature, Entropy: entropy, Chunk: t.cfg.LogProbChunk}
}

// beforeUpdate fills every micro-batch's old log-probs and entropy sums
// (when old is set) and reference log-probs (with KL), without grad, before
// the first optimizer step.
func (t *Trainer) beforeUpdate(minis [][]*microBatch, split [][][]int, old bool) (err error) {
	if !old && t.cfg.Reference == nil {
		return nil
	}
	torch.NoGrad(func() {
		for i, micros := range minis {
			if old {
				for range t.shard.ghosts(len(split[i]), len(micros)) {
					t.shard.ghostForward() // sharded weights: the other ranks' collectives (shardparams.go)
				}
			}
			for _, mb := range micros {
				b := mb.batch
				if old {
					var ent *torch.Tensor
					mb.oldLogp, ent, err = b.LogProbs(t.cfg.Policy, t.logProbOptions(true))
					if err != nil {
						return
					}
					mb.entropySum = ent.Mul(b.Mask.ToDType(torch.Float32)).SumDim(1, false).Float64s()
				}
				if t.cfg.Reference != nil {
					if mb.refLogp, err = t.referenceLogProbs(b); err != nil {
						return
					}
				}
			}
		}
	})
	return err
}

// referenceLogProbs runs the frozen reference over a micro-batch, on the
// reference's device (the batch goes there and the log-probs come back).
func (t *Trainer) referenceLogProbs(b Batch) (*torch.Tensor, error) {
	ref, dev := t.cfg.Reference, t.cfg.Policy.Device()
	if ref.Device() == dev {
		lp, _, err := b.LogProbs(ref, t.logProbOptions(false))
		return lp, err
	}
	lp, _, err := b.to(ref.Device()).LogProbs(ref, t.logProbOptions(false))
	if err != nil {
		return nil, err
	}
	return lp.ToDevice(dev), nil
}

// accumulate runs one micro-batch's forward and backward (its loss divided
// by the number of micro-batches in its mini-batch) and records its rows'
// statistics.
func (t *Trainer) accumulate(mb *microBatch, mini, micro, micros int, rows []rowRecord) error {
	set := t.cfg.Group.Settings
	s := torch.NewScope()
	defer s.Close()
	b := mb.batch
	var logp, ent *torch.Tensor
	var finish func() error
	var err error
	fused := mb.oldLogp == nil // the only optimizer step: this forward is the old policy's (Update)
	opts := t.logProbOptions(set.EntropyCoef > 0 || fused)
	if set.ActivationCheckpointing && !t.pad {
		logp, ent, finish, err = b.CheckpointedLogProbs(t.cfg.Policy, opts)
	} else {
		logp, ent, err = b.LogProbs(t.cfg.Policy, opts)
	}
	if err != nil {
		return err
	}
	if fused {
		mb.oldLogp = logp.Detach()
		torch.NoGrad(func() {
			mb.entropySum = ent.Detach().Mul(b.Mask.ToDType(torch.Float32)).SumDim(1, false).Float64s()
		})
		defer func() { mb.oldLogp = nil }() // freed with this scope
		if set.EntropyCoef == 0 {
			ent = nil // asked for the metrics only: no gradient through it
		}
	}
	if t.onMicroBatch != nil {
		t.onMicroBatch(mini, micro, logp, mb.oldLogp, b.Mask)
	}
	in := LossInput{
		LogProbs: logp, OldLogProbs: mb.oldLogp, RefLogProbs: mb.refLogp, Entropy: ent,
		Advantages: b.Advantages, Mask: b.Mask, RolloutLogProbs: b.RolloutLogProbs,
	}
	out := Loss(in, set)
	out.Loss.DivScalar(float64(micros)).Backward()
	if finish != nil {
		if err := finish(); err != nil {
			return err
		}
	}
	stats := rowStats(out, in, b.RolloutMask).Float64s() // (B, numStats)
	for j, r := range mb.rows {
		copy(rows[r].stats[:], stats[j*numStats:(j+1)*numStats])
		rows[r].entropySum = mb.entropySum[j]
	}
	return nil
}

package optim

// settings.go — the per-agent optimizer and loss settings: one plain struct
// that maps onto an agent's `optim:` section of a run config, the reference
// defaults, and validation whose messages name the key, the value and the fix.
//
// What this file is not: the config loader. The config package decodes YAML
// over DefaultSettings() (absent keys keep their defaults), rejects unknown
// keys, applies per-agent overrides (overrides.go) and prefixes Validate's
// messages with the key path, e.g. `config: agents[1].optim.` + `lr: ...`.

import (
	"fmt"
	"math"
	"strings"
)

// Values of Settings.Loss.
const (
	// LossClipped is the PPO clipped surrogate with separate low/high clip
	// ratios and dual clip (Dr. MAS, AT-GRPO; algorithms.md §6).
	LossClipped = "clipped"
	// LossMAGRPO is MAGRPO's objective: per token −A·log π, no ratio, no
	// clipping (algorithms.md §5). With loss_agg seq-mean-token-sum it is
	// exactly −mean_k A_k · Σ_t log π.
	LossMAGRPO = "magrpo"
)

// Values of Settings.LossAgg: how per-token losses of a micro-batch become
// one number (see Aggregate).
const (
	TokenMean           = "token-mean"              // Σ masked / number of response tokens
	SeqMeanTokenSum     = "seq-mean-token-sum"      // mean over sequences of their token sums
	SeqMeanTokenMean    = "seq-mean-token-mean"     // mean over sequences of their token means
	SeqMeanTokenSumNorm = "seq-mean-token-sum-norm" // mean over sequences of token sum / dr_grpo_length (Dr. GRPO)
)

// Values of Settings.KLEstimator.
const (
	KLK1       = "k1"         // log π − log π_ref
	KLK3       = "k3"         // exp(ref − log π) − (ref − log π) − 1, clamped to [−10, 10]
	KLLowVarKL = "low_var_kl" // verl's name for k3
)

// Values of Settings.LogProbTemperature: the temperature the update's
// log-probs (old and new) divide the logits by.
const (
	// LogProbAuto is LogProbRaw for the magrpo loss and LogProbSampling for
	// the clipped loss: each as its reference code computes them.
	LogProbAuto = "auto"
	// LogProbSampling divides by the agent's training sampling temperature,
	// so the log-probs are those of the distribution the rows were drawn from.
	LogProbSampling = "sampling"
	// LogProbRaw takes the raw logits (T = 1): CoMLRL's MAGRPO loss, and
	// PettingLLMs' trainer, which computes them at rollout.temperature 1
	// whatever the agents sampled at.
	LogProbRaw = "raw"
)

// Values of Settings.RolloutIS: truncated importance weights of the policy
// term on the ratio of the update's old log-probs to the sampler's
// (verl's algorithm.rollout_is; policy/rollout.go).
const (
	RolloutISOff      = "off"      // no weights (the default)
	RolloutISToken    = "token"    // one weight per token
	RolloutISSequence = "sequence" // one weight per row, from the sum of its tokens' log-ratios
)

// Values of Settings.LRSchedule.
const (
	ScheduleConstant = "constant" // after warmup the lr stays at lr
	ScheduleCosine   = "cosine"   // after warmup a half cosine from lr down to min_lr_ratio·lr
)

// MiniBatches is the number of mini-batches (optimizer steps per epoch) for
// rows rows: ceil(rows/mini_batch_rows) with mini_batch_rows, else
// updates_per_step; at most rows, at least 1.
func (s Settings) MiniBatches(rows int) int {
	n := s.UpdatesPerStep
	if s.MiniBatchRows > 0 {
		n = (rows + s.MiniBatchRows - 1) / s.MiniBatchRows
	}
	return max(1, min(n, rows))
}

// Settings are one trained model's optimizer and loss settings. Agents that
// share a model must have identical Settings (Assign checks it).
type Settings struct {
	// AdamW (decoupled weight decay).
	LR          float64 `yaml:"lr"`           // peak learning rate; 0 freezes the model
	Beta1       float64 `yaml:"beta1"`        // first-moment decay
	Beta2       float64 `yaml:"beta2"`        // second-moment decay
	Eps         float64 `yaml:"eps"`          // added to √v̂
	WeightDecay float64 `yaml:"weight_decay"` // decoupled: p ← p·(1 − lr·wd)
	GradClip    float64 `yaml:"grad_clip"`    // max total grad 2-norm; 0 disables clipping

	// Learning-rate schedule over train steps (schedule.go).
	LRSchedule  string  `yaml:"lr_schedule"`  // constant | cosine
	WarmupSteps int     `yaml:"warmup_steps"` // linear warmup: lr·(step+1)/warmup_steps
	MinLRRatio  float64 `yaml:"min_lr_ratio"` // cosine floor as a fraction of lr
	TotalSteps  int     `yaml:"total_steps"`  // cosine: the step at which the floor is reached

	// Loss (loss.go).
	Loss         string  `yaml:"loss"`           // clipped | magrpo
	LossAgg      string  `yaml:"loss_agg"`       // token-mean | seq-mean-token-sum | seq-mean-token-mean | seq-mean-token-sum-norm
	DrGRPOLength int     `yaml:"dr_grpo_length"` // the constant length of seq-mean-token-sum-norm
	ClipLow      float64 `yaml:"clip_low"`       // ε_low: ratio clipped below at 1 − ε_low
	ClipHigh     float64 `yaml:"clip_high"`      // ε_high: ratio clipped above at 1 + ε_high
	DualClip     float64 `yaml:"dual_clip"`      // c: for A < 0 the loss is at most −A·c; 0 turns it off
	EntropyCoef  float64 `yaml:"entropy_coef"`   // loss −= coef · agg(entropy)
	KLCoef       float64 `yaml:"kl_coef"`        // loss += coef · agg(KL to the reference model); > 0 loads the reference
	KLEstimator  string  `yaml:"kl_estimator"`   // k1 | k3 (= low_var_kl)
	// LogProbTemperature is auto | sampling | raw (LogProbTemperatureOf).
	LogProbTemperature string `yaml:"logprob_temperature"`
	// RolloutIS is off | token | sequence; RolloutISThreshold caps the
	// weights (verl's rollout_is_threshold).
	RolloutIS          string  `yaml:"rollout_is"`
	RolloutISThreshold float64 `yaml:"rollout_is_threshold"`

	// Batching of one update.
	MicroBatchSize int `yaml:"micro_batch_size"` // sequences per forward/backward
	// MicroBatchTokens, when > 0, cuts micro-batches by tokens (prompt +
	// response, packed without padding) instead of micro_batch_size rows.
	MicroBatchTokens int `yaml:"micro_batch_tokens"`
	// ActivationCheckpointing keeps only each block's input during the
	// training forward and recomputes the block in the backward pass: one
	// more forward of the blocks for activations of one block at a time.
	ActivationCheckpointing bool `yaml:"activation_checkpointing"`
	UpdatesPerStep          int  `yaml:"updates_per_step"` // mini-batches (optimizer steps) per train step, at most one per row
	// MiniBatchRows, when > 0, sets the mini-batches by size instead:
	// ceil(rows / mini_batch_rows) of them (verl's ppo_mini_batch_size;
	// PettingLLMs: 16), so the number of optimizer steps follows the rows
	// the step kept.
	MiniBatchRows int `yaml:"mini_batch_rows"`
	// Epochs is the passes over the step's mini-batches (verl's ppo_epochs),
	// each an optimizer step per mini-batch, against the old log-probs
	// computed once before the first.
	Epochs int `yaml:"epochs"`
	// GradAccumDType is where a bf16/f16 model's micro-batch grads are summed:
	// "param" (in the grads themselves, the model's dtype: no extra memory),
	// "float32" (a float32 sum per parameter, 4 more bytes per parameter
	// during the update, rounded into the grads once), or "auto" (float32
	// when a mini-batch has more than AutoFloat32MicroBatches micro-batches;
	// see policy/accum.go for the measurement behind it).
	GradAccumDType string `yaml:"grad_accum_dtype"`

	// Precision of the optimizer (precision.go): float32 (masters and
	// moments) or model (the weights' own dtype, no master).
	StateDType string `yaml:"state_dtype"`
	// LossPadding trains on the pad tokens after each shorter completion of
	// a group sampled together, up to the group's longest (precision.go).
	LossPadding bool `yaml:"loss_padding"`
}

// Where micro-batch grads are summed (Settings.GradAccumDType).
const (
	AccumAuto    = "auto"
	AccumParam   = "param"
	AccumFloat32 = "float32"
	// AutoFloat32MicroBatches is the most micro-batches per mini-batch that
	// "auto" still sums in the model's dtype.
	AutoFloat32MicroBatches = 16
)

// DefaultSettings returns the Dr. MAS math column of algorithms.md §6: lr
// 1e-6 constant, clip 0.2/0.2, dual clip 3, one update per step, no entropy
// bonus, KL off (k3 when switched on), AdamW β (0.9, 0.999), ε 1e-8 (torch's
// default, which verl does not override), weight decay 0.01, grad clip 1.0,
// token-mean aggregation, and micro-batches of 4 sequences (the Dr. MAS math
// and search scripts' actor_ppo_micro_batch_size_per_gpu, [4,4] and [4,4,4]).
func DefaultSettings() Settings {
	return Settings{
		LR:                 1e-6,
		Beta1:              0.9,
		Beta2:              0.999,
		Eps:                1e-8,
		WeightDecay:        0.01,
		GradClip:           1.0,
		LRSchedule:         ScheduleConstant,
		Loss:               LossClipped,
		LossAgg:            TokenMean,
		ClipLow:            0.2,
		ClipHigh:           0.2,
		DualClip:           3,
		KLEstimator:        KLK3,
		LogProbTemperature: LogProbAuto,
		RolloutIS:          RolloutISOff,
		RolloutISThreshold: 2,
		MicroBatchSize:     4,
		UpdatesPerStep:     1,
		Epochs:             1,
		GradAccumDType:     AccumAuto,
		StateDType:         StateFloat32,
	}
}

// Validate reports the first invalid setting as "key: problem, got value;
// fix", the key being the YAML key.
func (s Settings) Validate() error {
	// the update computes in float32: a value beyond its range is infinite
	// there (and an eps below its smallest step is 0)
	finite := func(x float64) bool { return !math.IsNaN(x) && math.Abs(x) <= math.MaxFloat32 }
	switch {
	case s.LR > math.MaxFloat32:
		return fmt.Errorf("lr: must be finite in float32, where the update computes (at most %.4g), got %g; troupe's default is 1e-06", math.MaxFloat32, s.LR)
	case !(s.LR >= 0) || !finite(s.LR):
		return fmt.Errorf("lr: must be >= 0 and finite, got %g; troupe's default is 1e-06 (0 freezes the model)", s.LR)
	case s.Eps > 0 && s.Eps < math.SmallestNonzeroFloat32:
		return fmt.Errorf("eps: must be at least float32's smallest value, %.4g, got %g (it would be 0); AdamW's usual value is 1e-08", math.SmallestNonzeroFloat32, s.Eps)
	case !(s.Beta1 >= 0 && s.Beta1 < 1):
		return fmt.Errorf("beta1: must be in [0, 1), got %g; AdamW's usual value is 0.9", s.Beta1)
	case !(s.Beta2 >= 0 && s.Beta2 < 1):
		return fmt.Errorf("beta2: must be in [0, 1), got %g; AdamW's usual value is 0.999", s.Beta2)
	case !(s.Eps > 0) || !finite(s.Eps):
		return fmt.Errorf("eps: must be > 0 and finite, got %g; AdamW's usual value is 1e-08", s.Eps)
	case !(s.WeightDecay >= 0) || !finite(s.WeightDecay):
		return fmt.Errorf("weight_decay: must be >= 0 and finite, got %g; troupe's default is 0.01", s.WeightDecay)
	case !(s.GradClip >= 0) || !finite(s.GradClip):
		return fmt.Errorf("grad_clip: must be >= 0 and finite, got %g; troupe's default is 1.0 (0 disables clipping)", s.GradClip)
	}
	if err := oneOf("lr_schedule", s.LRSchedule, ScheduleConstant, ScheduleCosine); err != nil {
		return err
	}
	switch {
	case s.WarmupSteps < 0:
		return fmt.Errorf("warmup_steps: must be >= 0, got %d; 0 means no warmup", s.WarmupSteps)
	case !(s.MinLRRatio >= 0 && s.MinLRRatio <= 1):
		return fmt.Errorf("min_lr_ratio: must be in [0, 1], got %g; it is the cosine floor as a fraction of lr", s.MinLRRatio)
	case s.TotalSteps < 0:
		return fmt.Errorf("total_steps: must be >= 0, got %d", s.TotalSteps)
	case s.LRSchedule == ScheduleCosine && s.TotalSteps <= s.WarmupSteps:
		return fmt.Errorf("total_steps: lr_schedule cosine needs total_steps > warmup_steps (%d), got %d; set it to the run's number of train steps", s.WarmupSteps, s.TotalSteps)
	}
	if err := oneOf("loss", s.Loss, LossClipped, LossMAGRPO); err != nil {
		return err
	}
	if err := oneOf("loss_agg", s.LossAgg, TokenMean, SeqMeanTokenSum, SeqMeanTokenMean, SeqMeanTokenSumNorm); err != nil {
		return err
	}
	switch {
	case s.LossAgg == SeqMeanTokenSumNorm && s.DrGRPOLength <= 0:
		return fmt.Errorf("dr_grpo_length: loss_agg %s divides by a constant length, got %d; set it to the maximum response length (e.g. 4096)", SeqMeanTokenSumNorm, s.DrGRPOLength)
	case s.DrGRPOLength < 0:
		return fmt.Errorf("dr_grpo_length: must be >= 0, got %d", s.DrGRPOLength)
	case !(s.ClipLow >= 0 && s.ClipLow < 1):
		return fmt.Errorf("clip_low: must be in [0, 1), got %g; troupe's default is 0.2", s.ClipLow)
	case !(s.ClipHigh >= 0) || !finite(s.ClipHigh):
		return fmt.Errorf("clip_high: must be >= 0 and finite, got %g; troupe's default is 0.2 (DAPO's clip-higher uses 0.28)", s.ClipHigh)
	case !(s.DualClip == 0 || s.DualClip > 1) || !finite(s.DualClip):
		return fmt.Errorf("dual_clip: must be > 1, or 0 to turn it off, got %g; troupe's default is 3", s.DualClip)
	case !(s.EntropyCoef >= 0) || !finite(s.EntropyCoef):
		return fmt.Errorf("entropy_coef: must be >= 0 and finite, got %g; 0 turns the bonus off", s.EntropyCoef)
	case !(s.KLCoef >= 0) || !finite(s.KLCoef):
		return fmt.Errorf("kl_coef: must be >= 0 and finite, got %g; 0 turns the KL term off", s.KLCoef)
	}
	if err := oneOf("kl_estimator", s.KLEstimator, KLK1, KLK3, KLLowVarKL); err != nil {
		return err
	}
	if err := oneOf("logprob_temperature", s.LogProbTemperature, LogProbAuto, LogProbSampling, LogProbRaw); err != nil {
		return err
	}
	if err := oneOf("rollout_is", s.RolloutIS, RolloutISOff, RolloutISToken, RolloutISSequence); err != nil {
		return err
	}
	if !(s.RolloutISThreshold > 0) || !finite(s.RolloutISThreshold) {
		return fmt.Errorf("rollout_is_threshold: must be > 0 and finite, got %g; verl's default is 2.0", s.RolloutISThreshold)
	}
	if s.RolloutIS != RolloutISOff && s.LossPadding {
		return fmt.Errorf("rollout_is: %s weighs tokens by the sampler's log-probs, which the pad tokens of loss_padding do not have; set rollout_is: off or loss_padding: false", s.RolloutIS)
	}
	switch {
	case s.MicroBatchSize < 1:
		return fmt.Errorf("micro_batch_size: must be >= 1 sequence, got %d", s.MicroBatchSize)
	case s.MicroBatchTokens < 0:
		return fmt.Errorf("micro_batch_tokens: must be >= 0 (0 = micro_batch_size rows per micro-batch), got %d", s.MicroBatchTokens)
	case s.UpdatesPerStep < 1:
		return fmt.Errorf("updates_per_step: must be >= 1 mini-batch, got %d", s.UpdatesPerStep)
	case s.MiniBatchRows < 0:
		return fmt.Errorf("mini_batch_rows: must be >= 0 (0 = updates_per_step mini-batches), got %d", s.MiniBatchRows)
	case s.MiniBatchRows > 0 && s.UpdatesPerStep != 1:
		return fmt.Errorf("mini_batch_rows: %d and updates_per_step: %d both set the mini-batches; keep one (updates_per_step: 1 with mini_batch_rows)", s.MiniBatchRows, s.UpdatesPerStep)
	case s.Epochs < 1:
		return fmt.Errorf("epochs: must be >= 1 pass over the step's rows, got %d", s.Epochs)
	}
	if err := oneOf("grad_accum_dtype", s.GradAccumDType, AccumAuto, AccumParam, AccumFloat32); err != nil {
		return err
	}
	return s.validatePrecision()
}

// LogProbTemperatureOf is the temperature the update divides the logits by,
// for agents that sample at sampling: 1 under raw (and auto with the magrpo
// loss), the sampling temperature under sampling (and auto with the clipped
// loss).
func (s Settings) LogProbTemperatureOf(sampling float64) float64 {
	switch {
	case s.LogProbTemperature == LogProbRaw, s.LogProbTemperature == LogProbAuto && s.Loss == LossMAGRPO:
		return 1
	}
	return sampling
}

// NeedsReference reports whether the KL term is on, and so whether a frozen
// reference model must be loaded for this model.
func (s Settings) NeedsReference() bool { return s.KLCoef > 0 }

func oneOf(key, got string, valid ...string) error {
	for _, v := range valid {
		if got == v {
			return nil
		}
	}
	return fmt.Errorf("%s: must be one of %s, got %q", key, strings.Join(valid, ", "), got)
}

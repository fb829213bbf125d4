package optim

// overrides.go — per-agent partial settings applied over a base, and the
// key-by-key comparison that the sharing check reports.
//
// Overrides mirrors Settings field for field with pointer types (nil: keep
// the base); a test keeps the two structs in step. A config loader may use
// it, or simply decode an agent's YAML over a copy of the base Settings, which
// yaml.v3 does field by field with the same result.

import (
	"fmt"
	"reflect"
)

// Overrides is a partial Settings: every non-nil field replaces the base's.
type Overrides struct {
	LR          *float64 `yaml:"lr"`
	Beta1       *float64 `yaml:"beta1"`
	Beta2       *float64 `yaml:"beta2"`
	Eps         *float64 `yaml:"eps"`
	WeightDecay *float64 `yaml:"weight_decay"`
	GradClip    *float64 `yaml:"grad_clip"`

	LRSchedule  *string  `yaml:"lr_schedule"`
	WarmupSteps *int     `yaml:"warmup_steps"`
	MinLRRatio  *float64 `yaml:"min_lr_ratio"`
	TotalSteps  *int     `yaml:"total_steps"`

	Loss         *string  `yaml:"loss"`
	LossAgg      *string  `yaml:"loss_agg"`
	DrGRPOLength *int     `yaml:"dr_grpo_length"`
	ClipLow      *float64 `yaml:"clip_low"`
	ClipHigh     *float64 `yaml:"clip_high"`
	DualClip     *float64 `yaml:"dual_clip"`
	EntropyCoef  *float64 `yaml:"entropy_coef"`
	KLCoef       *float64 `yaml:"kl_coef"`
	KLEstimator  *string  `yaml:"kl_estimator"`
	// the update's log-prob temperature
	LogProbTemperature *string `yaml:"logprob_temperature"`
	// truncated importance weights on the sampler's log-probs
	RolloutIS          *string  `yaml:"rollout_is"`
	RolloutISThreshold *float64 `yaml:"rollout_is_threshold"`

	MicroBatchSize   *int `yaml:"micro_batch_size"`
	MicroBatchTokens *int `yaml:"micro_batch_tokens"`
	// activation checkpointing
	ActivationCheckpointing *bool   `yaml:"activation_checkpointing"`
	UpdatesPerStep          *int    `yaml:"updates_per_step"`
	MiniBatchRows           *int    `yaml:"mini_batch_rows"`
	Epochs                  *int    `yaml:"epochs"`
	GradAccumDType          *string `yaml:"grad_accum_dtype"`
	StateDType              *string `yaml:"state_dtype"`
	LossPadding             *bool   `yaml:"loss_padding"`
}

// Apply returns base with every field set in o replaced. It does not
// validate; call Validate on the result.
func (o Overrides) Apply(base Settings) Settings {
	out := base
	ov := reflect.ValueOf(o)
	sv := reflect.ValueOf(&out).Elem()
	for i := 0; i < ov.NumField(); i++ {
		f := ov.Field(i)
		if f.IsNil() {
			continue
		}
		sv.FieldByName(ov.Type().Field(i).Name).Set(f.Elem())
	}
	return out
}

// Keys lists the settings the overrides set, by YAML key, in field order.
func (o Overrides) Keys() []string {
	var keys []string
	ov := reflect.ValueOf(o)
	for i := 0; i < ov.NumField(); i++ {
		if !ov.Field(i).IsNil() {
			keys = append(keys, ov.Type().Field(i).Tag.Get("yaml"))
		}
	}
	return keys
}

// SettingsDiff lists every key on which a and b differ as
// "key (a's value vs b's value)", in field order; nil when they are equal.
func SettingsDiff(a, b Settings) []string {
	var out []string
	av, bv := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := 0; i < av.NumField(); i++ {
		x, y := av.Field(i).Interface(), bv.Field(i).Interface()
		if x == y {
			continue
		}
		key := av.Type().Field(i).Tag.Get("yaml")
		if _, isString := x.(string); isString {
			out = append(out, fmt.Sprintf("%s (%q vs %q)", key, x, y))
		} else {
			out = append(out, fmt.Sprintf("%s (%v vs %v)", key, x, y))
		}
	}
	return out
}

package model

// rope.go — RoPE settings from config.json and Llama 3.1's frequency
// scaling. The rotary tables themselves are in qwen.go (rotary).
//
// Accepted: plain RoPE ("default", or no rope_scaling) and "llama3", read
// from rope_scaling (transformers 4) or rope_parameters (transformers 5,
// which also carries rope_theta). Every other rope_type (linear, dynamic,
// yarn, longrope, …) and any partial_rotary_factor other than 1 is refused
// by name: their tables differ, and a model loaded with the wrong one runs
// without complaint and answers worse.
//
// llama3 (Llama 3.1, 3.2, 3.3) rescales the inverse frequencies once, at
// load, as transformers' _compute_llama3_parameters
// (modeling_rope_utils.py) does; its attention factor is 1, so the cos and
// sin tables are the plain ones over the new frequencies. With wavelength
// λᵢ = 2π/ωᵢ, old context L = original_max_position_embeddings, and the
// factors s (factor), α (low_freq_factor), β (high_freq_factor):
//
//	λᵢ < L/β            ωᵢ               (high frequencies kept)
//	λᵢ > L/α            ωᵢ / s           (low frequencies slowed down)
//	otherwise           (1 − γᵢ)·ωᵢ/s + γᵢ·ωᵢ,   γᵢ = (L/λᵢ − α) / (β − α)
//
// computed in float32, one rounding per operation in transformers' order,
// so the frequencies are bit-identical to transformers' on the CPU
// (TestLlama3FrequenciesMatchTransformers).

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// RopeScaling is a rope_scaling of type "llama3".
type RopeScaling struct {
	Type                 string  // "llama3"
	Factor               float64 // s
	LowFreqFactor        float64 // α
	HighFreqFactor       float64 // β
	OriginalMaxPositions int     // L, the context length before scaling
}

// ropeKeys are the keys each accepted rope_type may carry.
var ropeKeys = map[string][]string{
	"default": {"rope_type", "type", "rope_theta", "partial_rotary_factor"},
	"llama3":  {"rope_type", "type", "rope_theta", "partial_rotary_factor", "factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"},
}

// parseRope reads rope_scaling and rope_parameters (either may be nil).
// theta is rope_parameters' rope_theta (0 when absent); scaling is nil for
// plain RoPE.
func parseRope(ropeScaling, ropeParams map[string]any) (theta float64, scaling *RopeScaling, err error) {
	for _, src := range []struct {
		key string
		rp  map[string]any
	}{{"rope_scaling", ropeScaling}, {"rope_parameters", ropeParams}} {
		if src.rp == nil {
			continue
		}
		kind, _ := src.rp["rope_type"].(string)
		if kind == "" {
			kind, _ = src.rp["type"].(string)
		}
		if kind == "" {
			kind = "default"
		}
		allowed, ok := ropeKeys[kind]
		if !ok {
			return 0, nil, fmt.Errorf("config.json: %s type %q is not supported (troupe implements default and llama3 RoPE)", src.key, kind)
		}
		var extra []string
		for k := range src.rp {
			if !slices.Contains(allowed, k) {
				extra = append(extra, k)
			}
		}
		if len(extra) > 0 {
			sort.Strings(extra)
			return 0, nil, fmt.Errorf("config.json: %s (%s) has %v, which troupe does not implement", src.key, kind, extra)
		}
		if p, ok := src.rp["partial_rotary_factor"]; ok && p != 1.0 {
			return 0, nil, fmt.Errorf("config.json: %s.partial_rotary_factor %v is not supported (only 1: every dimension rotates)", src.key, p)
		}
		if th, ok := src.rp["rope_theta"].(float64); ok {
			theta = th
		}
		if kind == "llama3" {
			if scaling, err = parseLlama3(src.key, src.rp); err != nil {
				return 0, nil, err
			}
		}
	}
	return theta, scaling, nil
}

func parseLlama3(key string, rp map[string]any) (*RopeScaling, error) {
	num := func(name string) (float64, error) {
		v, ok := rp[name].(float64)
		if !ok {
			return 0, fmt.Errorf("config.json: %s (llama3) needs a number %s, got %v", key, name, rp[name])
		}
		return v, nil
	}
	s := &RopeScaling{Type: "llama3"}
	var old float64
	var err error
	for _, f := range []struct {
		name string
		dst  *float64
	}{{"factor", &s.Factor}, {"low_freq_factor", &s.LowFreqFactor}, {"high_freq_factor", &s.HighFreqFactor}, {"original_max_position_embeddings", &old}} {
		if *f.dst, err = num(f.name); err != nil {
			return nil, err
		}
	}
	s.OriginalMaxPositions = int(old)
	switch {
	case s.Factor <= 0 || s.LowFreqFactor <= 0 || float64(s.OriginalMaxPositions) != old || old <= 0:
		return nil, fmt.Errorf("config.json: %s (llama3): factor, low_freq_factor and original_max_position_embeddings (an integer) must be > 0, got %g, %g, %g", key, s.Factor, s.LowFreqFactor, old)
	case s.HighFreqFactor <= s.LowFreqFactor:
		return nil, fmt.Errorf("config.json: %s (llama3): high_freq_factor (%g) must be > low_freq_factor (%g)", key, s.HighFreqFactor, s.LowFreqFactor)
	}
	return s, nil
}

// json renders the scaling as rope_scaling, which transformers 4 and 5 read.
func (s *RopeScaling) json() map[string]any {
	return map[string]any{
		"rope_type": s.Type, "factor": s.Factor, "low_freq_factor": s.LowFreqFactor,
		"high_freq_factor": s.HighFreqFactor, "original_max_position_embeddings": s.OriginalMaxPositions,
	}
}

// scale returns the llama3 inverse frequencies for the plain ones inv
// (float32, as transformers holds them). Each operation rounds to float32
// on its own (the explicit conversions keep Go from fusing a multiply and
// an add), in the order and with the operand forms PyTorch evaluates
// transformers' expression in: a Python scalar divided by a tensor is the
// tensor's reciprocal times the scalar, and scalars are rounded to float32
// before they meet a float32 tensor.
func (s *RopeScaling) scale(inv []float32) []float32 {
	f32 := func(x float64) float32 { return float32(x) }
	factor, lff := f32(s.Factor), f32(s.LowFreqFactor)
	old := f32(float64(s.OriginalMaxPositions))
	lowWavelen := f32(float64(s.OriginalMaxPositions) / s.LowFreqFactor)
	highWavelen := f32(float64(s.OriginalMaxPositions) / s.HighFreqFactor)
	span := f32(s.HighFreqFactor - s.LowFreqFactor)
	twoPi := f32(2 * math.Pi)
	out := make([]float32, len(inv))
	for i, w := range inv {
		wavelen := float32(1/w) * twoPi // 2π / ω
		scaled := w
		if wavelen > lowWavelen {
			scaled = w / factor
		}
		if !(wavelen < highWavelen) && !(wavelen > lowWavelen) {
			smooth := float32(float32(float32(1/wavelen)*old)-lff) / span // (L/λ − α) / (β − α)
			scaled = float32(float32(float32(1-smooth)*scaled)/factor) + float32(smooth*scaled)
		}
		out[i] = scaled
	}
	return out
}

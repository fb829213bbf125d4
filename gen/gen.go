// Package gen is the generation contract between rollout, which asks for
// completions, and model, which computes them: a request (prompt ids, a
// length limit, stop ids, sampling parameters), its result (the generated
// ids, their sampler log-probabilities, why it stopped) and a finished
// request of an engine (a Completion).
//
// It is its own package so that both sides name the same types without
// either importing the other: rollout stays pure Go (no torch), and model
// does not depend on the orchestration above it. The interfaces rollout
// calls through (rollout.Engine, rollout.Generator) live in rollout; the
// engine that implements them is model.Engine, behind one adapter in
// package run (engine.go), which adds what only the run knows (the seed
// stream, the LoRA adapter a request goes through).
//
// The files:
//
//	gen.go  Sampling, Request, Finish, Result, Completion
package gen

import (
	"fmt"
	"math"
)

// Sampling holds the per-request sampling parameters.
// Temperature 0 means greedy; TopK 0 disables top-k; TopP 1 disables top-p.
//
// RepetitionPenalty 1 (or 0, its unset value) is off; otherwise it divides a
// positive logit (multiplies a negative one) of every token already in the
// row, prompt included, as transformers' and vLLM's repetition_penalty.
type Sampling struct {
	Temperature       float64 `yaml:"temperature"`
	TopP              float64 `yaml:"top_p"`
	TopK              int     `yaml:"top_k"`
	RepetitionPenalty float64 `yaml:"repetition_penalty"`
}

// Penalised reports whether the row's repetition penalty is on.
func (s Sampling) Penalised() bool { return s.RepetitionPenalty != 0 && s.RepetitionPenalty != 1 }

// DefaultSampling is plain ancestral sampling: T = 1, no top-p, no top-k
// (the Dr. MAS training setting).
var DefaultSampling = Sampling{Temperature: 1, TopP: 1, TopK: 0, RepetitionPenalty: 1}

// Validate reports the first out-of-range parameter of a configured
// sampling, naming key and fix. (model accepts TopP 0 as "off" as well, for
// callers that leave it unset; a config must say 1.)
func (s Sampling) Validate() error {
	switch {
	case s.Temperature < 0 || math.IsNaN(s.Temperature) || math.IsInf(s.Temperature, 0):
		return fmt.Errorf("sampling.temperature: must be a finite number >= 0 (0 = greedy), got %g", s.Temperature)
	case !(s.TopP > 0 && s.TopP <= 1):
		return fmt.Errorf("sampling.top_p: must be in (0, 1] (1 = off), got %g", s.TopP)
	case s.TopK < 0:
		return fmt.Errorf("sampling.top_k: must be >= 0 (0 = off), got %d", s.TopK)
	case s.RepetitionPenalty < 0 || math.IsNaN(s.RepetitionPenalty) || math.IsInf(s.RepetitionPenalty, 0):
		return fmt.Errorf("sampling.repetition_penalty: must be a finite number > 0 (1 = off; PettingLLMs trains at 1.2), got %g", s.RepetitionPenalty)
	}
	return nil
}

// Request is one row of generation. Rows of one batch may differ in prompt
// length and sampling parameters.
type Request struct {
	Prompt       []int    // prompt token ids (the rendered chat)
	MaxNewTokens int      // at most this many tokens are generated
	Stop         []int    // generation ends after any of these ids is produced (it is returned)
	Sampling     Sampling // per-row sampling parameters
}

// Finish says why a row stopped generating.
type Finish int

const (
	// FinishStop: a stop token was produced; it is the last entry of Tokens.
	FinishStop Finish = iota
	// FinishLength: MaxNewTokens tokens were produced without a stop token.
	FinishLength
)

func (f Finish) String() string {
	switch f {
	case FinishStop:
		return "stop"
	case FinishLength:
		return "length"
	}
	return fmt.Sprintf("Finish(%d)", int(f))
}

// Result is the output for one Request.
type Result struct {
	Tokens   []int     // generated ids, including the stop token when Finish == FinishStop
	LogProbs []float32 // sampler log-probability of each generated token (len == len(Tokens))
	Finish   Finish
}

// Completion is a finished request of an engine.
type Completion struct {
	ID int // the id the engine's Submit returned
	Result
}

// generator.go — the narrow interfaces rollout needs from the model side:
// a token codec, a chat renderer and a batched generator.
//
// What this file is: the contract between rollout (pure Go) and model/
// (libtorch). model.Generate is wrapped by the training loop (cmd/train) into a Generator;
// *tokenizer.Tokenizer satisfies Codec; tokenizer.ApplyChatTemplate, bound
// per agent (thinking on or off), becomes a ChatRenderer.
//
// What it deliberately is not: an implementation. rollout never imports
// troupe/model, troupe/torch or troupe/tokenizer, so every piece of
// orchestration is testable with the scripted generator (rollout/scripted).
package rollout

import (
	"fmt"
	"math"
)

// Codec is what rollout needs of a tokenizer; *tokenizer.Tokenizer satisfies it.
type Codec interface {
	Encode(text string) []int
	Decode(ids []int) string
}

// Message is one chat message: Role is "system", "user", "assistant" or
// "tool".
type Message struct {
	Role, Content string
}

// ChatRenderer renders a chat — a system message, any earlier turns, and the
// new user message — with the generation prompt appended, as text ready to
// encode. The training loop wraps the model's chat template (per agent,
// including thinking on/off).
type ChatRenderer func(msgs []Message) (string, error)

// Sampling holds the per-request sampling parameters.
// Temperature 0 means greedy; TopK 0 disables top-k; TopP 1 disables top-p;
// RepetitionPenalty 1 (or 0, its unset value) disables the penalty, which
// divides a positive logit (multiplies a negative one) of every token
// already in the row by it, as transformers' and vLLM's repetition_penalty.
type Sampling struct {
	Temperature       float64 `yaml:"temperature"`
	TopP              float64 `yaml:"top_p"`
	TopK              int     `yaml:"top_k"`
	RepetitionPenalty float64 `yaml:"repetition_penalty"`
}

// DefaultSampling is plain ancestral sampling: T = 1, no top-p, no top-k
// (the Dr. MAS training setting).
var DefaultSampling = Sampling{Temperature: 1, TopP: 1, TopK: 0, RepetitionPenalty: 1}

// Validate reports the first out-of-range parameter, naming key and fix.
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

// GenRequest is one row of a batched generation call. Rows of one call may
// differ in prompt length and sampling parameters.
type GenRequest struct {
	Prompt       []int    // prompt token ids (the rendered chat)
	MaxNewTokens int      // at most this many tokens are generated
	Stop         []int    // generation ends after any of these ids is produced
	Sampling     Sampling // per-row sampling parameters
}

// FinishReason says why a row stopped generating.
type FinishReason int

const (
	// FinishStop: a stop token was produced; it is the last entry of Tokens.
	FinishStop FinishReason = iota
	// FinishLength: MaxNewTokens tokens were produced without a stop token.
	FinishLength
)

func (f FinishReason) String() string {
	switch f {
	case FinishStop:
		return "stop"
	case FinishLength:
		return "length"
	}
	return fmt.Sprintf("FinishReason(%d)", int(f))
}

// GenResult is the output for one GenRequest.
type GenResult struct {
	Tokens   []int     // generated ids, including the stop token when Finish == FinishStop
	LogProbs []float32 // sampler log-probability of each generated token (len == len(Tokens))
	Finish   FinishReason
}

// Generator samples a batch of requests with one model. seed determines all
// randomness of the call: equal requests and seed give equal results. The
// sampler calls Generate from a single goroutine (the caller's), which the
// training loop locks to the torch thread.
type Generator interface {
	Generate(reqs []GenRequest, seed uint64) ([]GenResult, error)
}

// GeneratorFunc adapts a function to Generator (e.g. a closure over
// model.Generate and its KV cache settings).
type GeneratorFunc func(reqs []GenRequest, seed uint64) ([]GenResult, error)

// Generate implements Generator.
func (f GeneratorFunc) Generate(reqs []GenRequest, seed uint64) ([]GenResult, error) {
	return f(reqs, seed)
}

// Engine is a generator that takes requests as they come and hands them
// back as they finish (model.Engine behind an adapter in cmd/train). The
// sampler submits an episode's next call as soon as the episode's previous
// calls are back, without waiting for the rest of the batch. seed
// determines the request's random draws whatever else runs beside it.
// Step does a bounded amount of work (a few decode steps) and returns the
// requests that finished, in id order. Results must follow the Generator
// contract row by row.
type Engine interface {
	Submit(req GenRequest, seed uint64) (id int, err error)
	Step() ([]Completion, error)
	Pending() int // requests submitted and not yet returned
}

// Completion is a finished Engine request.
type Completion struct {
	ID int
	GenResult
}

// generator.go — the narrow interfaces rollout needs from the model side:
// a token codec, a chat renderer and a batched generator.
//
// What this file is: the interfaces rollout calls through, in the types of
// the generation contract (package gen). model.Engine, behind one adapter in
// package run, is the Engine; model.Generate wrapped as a Generator is the
// reference path (engine.enabled: false);
// *tokenizer.Tokenizer satisfies Codec; tokenizer.ApplyChatTemplate, bound
// per agent (thinking on or off), becomes a ChatRenderer.
//
// What it deliberately is not: an implementation. rollout never imports
// troupe/model, troupe/torch or troupe/tokenizer, so every piece of
// orchestration is testable with the scripted generator (rollout/scripted).
package rollout

import "troupe/gen"

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

// Sampling is the contract's per-request sampling parameters (gen.Sampling),
// under the name configs and environments spell.
type Sampling = gen.Sampling

// DefaultSampling is plain ancestral sampling: T = 1, no top-p, no top-k
// (the Dr. MAS training setting).
var DefaultSampling = gen.DefaultSampling

// Generator samples a batch of requests with one model (model.Generate: the
// reference path when engine.enabled is false, and the engine's test
// oracle). seed determines all
// randomness of the call: equal requests and seed give equal results. The
// sampler calls Generate from a single goroutine (the caller's), which the
// training loop locks to the torch thread.
type Generator interface {
	Generate(reqs []gen.Request, seed uint64) ([]gen.Result, error)
}

// GeneratorFunc adapts a function to Generator (e.g. a closure over
// model.Generate and its KV cache settings).
type GeneratorFunc func(reqs []gen.Request, seed uint64) ([]gen.Result, error)

// Generate implements Generator.
func (f GeneratorFunc) Generate(reqs []gen.Request, seed uint64) ([]gen.Result, error) {
	return f(reqs, seed)
}

// Engine is a generator that takes requests as they come and hands them
// back as they finish (model.Engine behind one adapter in package run). The
// sampler submits an episode's next call as soon as the episode's previous
// calls are back, without waiting for the rest of the batch. seed
// determines the request's random draws whatever else runs beside it.
// Step does a bounded amount of work (a few decode steps) and returns the
// requests that finished, in id order. Results must follow the Generator
// contract row by row.
type Engine interface {
	Submit(req gen.Request, seed uint64) (id int, err error)
	Step() ([]gen.Completion, error)
	Pending() int // requests submitted and not yet returned
}

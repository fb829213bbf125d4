// Package model is the Qwen2 / Qwen2.5 / Qwen3, Llama 2 / 3.x and Mistral
// causal language model on troupe's torch binding: configs and weights in
// the Hugging Face layout, the forward pass the policy update needs, and
// batched generation with a KV cache for rollouts. The families share one
// decoder; family.go lists the switches that tell them apart.
//
//   - config.go   Config from config.json; unsupported features are refused by name
//   - family.go   per-family switches (biases, q/k norms, head_dim) and refusals
//   - rope.go     rope_scaling / rope_parameters; Llama 3.1's llama3 frequency scaling
//   - qwen.go     the network: RMSNorm → rotary → attention → MLP → block → model
//   - weights.go  Load (safetensors, strict; non-float and non-finite weights and
//     float16 on the CPU refused at load), New (seeded random init), Save, Params;
//     q/k/v and gate/up stored fused, each projection a view (generation's one GEMM)
//   - input.go    padded batches (Pack) and the attention mask
//   - logprobs.go TokenLogProbs: per-token log-probs (and entropy) at chosen positions
//   - cache.go    KVCache, passed in by the caller
//   - sample.go   per-row repetition penalty / temperature / top-k / top-p sampling
//   - penalty.go  the engine's per-slot record of the tokens seen, for the repetition penalty
//   - generate.go Generate: prefill + decode, stop tokens, finished rows compacted away;
//     the reference the engine is tested against (and engine.enabled: false)
//   - engine.go   the generation engine, one per model for the whole run: Submit, Step
//   - enginecopy.go EngineCopy: a second copy of a model's weights for an engine, refreshed in place
//   - decode.go   the engine's decode batch: the per-row device state
//   - prefill.go  computing the admitted prompts' keys and values, in packed forwards
//   - prefix.go   reusing keys and values already in the arena (shared prompt prefixes)
//   - graphs.go   decoding in batches of fixed sizes, captured as CUDA graphs
//   - packed.go   the forward over sequences laid end to end (the update's forward)
//   - checkpoint.go activation checkpointing for the packed training forward
//   - layerhook.go a call around each decoder layer in the training passes (sharded weights)
//   - lora.go     low-rank adapters on a frozen base model
//   - peft.go     adapters on disk in PEFT's layout
//   - size.go     parameter counts from a config alone, before any weight loads
//   - limits.go   FitLength: a prompt and its response within the model's positions
//
// A Model holds weights only and is safe to share between agents and
// rollouts; the cache, the generator and the sampling parameters are
// arguments. Every exported entry point recovers torch panics into errors.
// All torch work must run on one goroutine (see package torch).
//
// What it is not: a general transformer library. Sliding-window attention
// (where it can bind), rope scaling other than llama3 (YaRN, linear,
// dynamic) and other architectures are refused at load time rather than
// computed approximately.
package model

// Package scripted is a test double for rollout.Generator: a byte-level
// codec, a ChatML-like chat renderer, and a generator whose responses are
// written by the test as a function of the prompt text and a seed.
//
// Files: scripted.go (all of it).
//
// What it is: enough of a model for orchestration tests of rollout and of
// the packages that drive it (run), offline and without libtorch —
// with its own byte codec, or with a real tokenizer (Generator.Codec). It
// honours the Generator contract: per-row MaxNewTokens truncation
// (FinishLength), a stop token appended otherwise (FinishStop), one log-prob
// per token, and results that depend only on the requests and the seed.
//
// What it deliberately is not: a language model. Log-probs are fake (a fixed
// function of seed, row and position) and sampling parameters are ignored
// except that they are recorded for tests to inspect.
package scripted

import (
	"fmt"
	"strings"
	"troupe/gen"

	"troupe/rollout"
)

// Special token ids of Codec (byte ids are 0–255).
const (
	EOS     = 256 // "<|im_end|>": the stop token
	Unknown = 257 // any id the codec does not know decodes to "\uFFFD"
)

// Codec encodes text as its UTF-8 bytes; EOS decodes to "<|im_end|>".
// Encode does not recognise special-token text: like a real tokenizer used
// on untrusted text, a response that spells "<|im_end|>" stays bytes.
type Codec struct{}

func (Codec) Encode(text string) []int {
	ids := make([]int, len(text))
	for i := 0; i < len(text); i++ {
		ids[i] = int(text[i])
	}
	return ids
}

func (Codec) Decode(ids []int) string {
	var b strings.Builder
	var raw []byte
	flush := func() { b.Write(raw); raw = raw[:0] }
	for _, id := range ids {
		switch {
		case id >= 0 && id < 256:
			raw = append(raw, byte(id))
		case id == EOS:
			flush()
			b.WriteString("<|im_end|>")
		default:
			flush()
			b.WriteString("\uFFFD")
		}
	}
	flush()
	return b.String()
}

// Chat renders a chat in ChatML with the assistant turn open.
func Chat(msgs []rollout.Message) (string, error) {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("<|im_start|>" + m.Role + "\n" + m.Content + "<|im_end|>\n")
	}
	b.WriteString("<|im_start|>assistant\n")
	return b.String(), nil
}

// Binding binds an agent to this package's codec and chat renderer.
func Binding() rollout.Binding {
	return rollout.Binding{Chat: Chat, Codec: Codec{}, Stop: []int{EOS}}
}

// Responder writes the response for one request, given the decoded prompt
// and a per-row seed derived from the call's seed and the row index.
type Responder func(prompt string, seed uint64) string

// Call records one Generate call.
type Call struct {
	Seed     uint64
	Requests []gen.Request
	Prompts  []string // decoded prompts
}

// Generator is the scripted rollout.Generator. It is meant to be called from
// one goroutine, as the sampler does.
type Generator struct {
	Respond Responder
	Codec   rollout.Codec // decodes prompts and encodes responses; nil = this package's Codec
	Calls   []Call        // every call so far, in order
}

// New returns a generator with the given responder.
func New(respond Responder) *Generator { return &Generator{Respond: respond} }

// Generate implements rollout.Generator.
func (g *Generator) Generate(reqs []gen.Request, seed uint64) ([]gen.Result, error) {
	codec := g.Codec
	if codec == nil {
		codec = Codec{}
	}
	call := Call{Seed: seed, Requests: reqs}
	out := make([]gen.Result, len(reqs))
	for i, r := range reqs {
		if r.MaxNewTokens <= 0 {
			return nil, fmt.Errorf("scripted: row %d: max new tokens must be > 0, got %d", i, r.MaxNewTokens)
		}
		prompt := codec.Decode(r.Prompt)
		call.Prompts = append(call.Prompts, prompt)
		rowSeed := rollout.DeriveSeed(seed, uint64(i))
		ids := codec.Encode(g.Respond(prompt, rowSeed))
		res := gen.Result{Finish: gen.FinishStop}
		switch {
		case len(ids) >= r.MaxNewTokens:
			ids, res.Finish = ids[:r.MaxNewTokens], gen.FinishLength
		case len(r.Stop) == 0:
			return nil, fmt.Errorf("scripted: row %d: no stop tokens and the response fits; pass Stop ids (e.g. scripted.EOS)", i)
		default:
			ids = append(ids, r.Stop[0])
		}
		res.Tokens = ids
		res.LogProbs = make([]float32, len(ids))
		for k := range ids {
			res.LogProbs[k] = -float32(rollout.DeriveSeed(rowSeed, uint64(k))%1000) / 250 // in (-4, 0]
		}
		out[i] = res
	}
	g.Calls = append(g.Calls, call)
	return out, nil
}

// Rule answers prompts that contain a marker.
type Rule struct {
	Contains string
	Reply    Responder
}

// Match returns a Responder that uses the first rule whose marker the prompt
// contains, and fails loudly (a response naming the problem) otherwise.
func Match(rules ...Rule) Responder {
	return func(prompt string, seed uint64) string {
		for _, r := range rules {
			if strings.Contains(prompt, r.Contains) {
				return r.Reply(prompt, seed)
			}
		}
		return "scripted: no rule matches this prompt"
	}
}

// Fixed always replies with text.
func Fixed(text string) Responder { return func(string, uint64) string { return text } }

// Sequence replies with texts[k] on its k-th use and repeats the last one
// after that. It counts uses, so it is deterministic only when the sampler's
// call order is (which it is).
func Sequence(texts ...string) Responder {
	k := 0
	return func(string, uint64) string {
		t := texts[min(k, len(texts)-1)]
		k++
		return t
	}
}

// Engine is a scripted rollout.Engine: each request is answered by the
// generator when submitted (with the request's own seed) and handed back
// after 1 + len(tokens)/TokensPerStep Steps, so long responses finish later
// than short ones, as in a real engine.
type Engine struct {
	Gen           *Generator
	TokensPerStep int // 0 = 4
	Submitted     []Submission
	steps         int
	live          []engineReq
	next          int
}

// Submission records one Submit: at which Step count, and the prompt.
type Submission struct {
	Step   int
	Prompt string
	Seed   uint64
}

type engineReq struct {
	id, left int
	res      gen.Result
}

// NewEngine returns a scripted engine over a responder.
func NewEngine(respond Responder) *Engine { return &Engine{Gen: New(respond)} }

// Submit implements rollout.Engine.
func (e *Engine) Submit(req gen.Request, seed uint64) (int, error) {
	out, err := e.Gen.Generate([]gen.Request{req}, seed)
	if err != nil {
		return 0, err
	}
	per := e.TokensPerStep
	if per <= 0 {
		per = 4
	}
	id := e.next
	e.next++
	e.live = append(e.live, engineReq{id: id, left: 1 + len(out[0].Tokens)/per, res: out[0]})
	e.Submitted = append(e.Submitted, Submission{Step: e.steps, Prompt: e.Gen.Calls[len(e.Gen.Calls)-1].Prompts[0], Seed: seed})
	return id, nil
}

// Step implements rollout.Engine.
func (e *Engine) Step() ([]gen.Completion, error) {
	e.steps++
	var done []gen.Completion
	kept := e.live[:0]
	for _, r := range e.live {
		if r.left--; r.left <= 0 {
			done = append(done, gen.Completion{ID: r.id, Result: r.res})
		} else {
			kept = append(kept, r)
		}
	}
	e.live = kept
	return done, nil
}

// Pending implements rollout.Engine.
func (e *Engine) Pending() int { return len(e.live) }

// Steps is the number of Step calls so far.
func (e *Engine) Steps() int { return e.steps }

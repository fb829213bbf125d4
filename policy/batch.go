package policy

// batch.go — the update's input rows, their packing into padded tensors with
// the response-token mask, and the deterministic split of a step's rows into
// mini-batches and micro-batches.
//
// For a row of P prompt tokens followed by R response tokens, packed
// right-padded as prompt+response, response token j (0-based) is predicted at
// position P+j−1, so the mask is true at positions P−1 … P+R−2 (minus the
// tokens the row's own loss mask excludes) and the target there is the next
// id (model.ShiftTargets).
//
// The split: the rows are permuted by a PCG stream seeded with (seed, step),
// cut into updates_per_step contiguous mini-batches whose sizes differ by at
// most one, and each mini-batch into micro-batches of micro_batch_size rows
// (the last may be smaller). The permutation is a function of the step index,
// so a resumed run splits exactly as an uninterrupted one. Rows are not
// sorted by length: with the reference's per-micro-batch normalisation, the
// grouping would change each token's weight systematically.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"troupe/model"
	"troupe/torch"
)

// Sequence is one training row: an agent's prompt, the response it sampled,
// and the advantage of that response. The training loop builds these from
// rollout samples and the advantage estimator's output.
type Sequence struct {
	Agent    string
	Prompt   []int // token ids the agent was conditioned on (at least one)
	Response []int // token ids it sampled (at least one); the loss covers these only
	// Mask, when set, has one entry per Response token: false excludes the
	// token from the loss (text the environment inserted into a response,
	// such as a tool's output). nil trains on every response token.
	Mask      []bool
	Advantage float64
}

// Batch is a packed set of rows on one device. The caller frees it (Free),
// or lets the enclosing torch.Scope do so.
type Batch struct {
	Input      model.Input   // prompt+response, right-padded, (B, T)
	Targets    *torch.Tensor // int64 (B, T): the next token at every position
	Mask       *torch.Tensor // bool (B, T): true at positions that predict a response token
	Advantages *torch.Tensor // float32 (B, 1)
	Tokens     []int         // trained response tokens per row
}

// Pack builds the padded batch of seqs on dev. Rows must have a non-empty
// prompt and response (CheckSequences reports the first that does not).
func Pack(seqs []Sequence, dev torch.Device) (b Batch, err error) {
	defer torch.Recover(&err)
	if len(seqs) == 0 {
		return Batch{}, fmt.Errorf("policy: no sequences to pack")
	}
	full := make([][]int, len(seqs))
	T := 0
	for i, s := range seqs {
		if len(s.Prompt) == 0 || len(s.Response) == 0 {
			return Batch{}, fmt.Errorf("policy: sequence %d (agent %q) has %d prompt and %d response tokens; both must be at least 1", i, s.Agent, len(s.Prompt), len(s.Response))
		}
		full[i] = append(append(make([]int, 0, len(s.Prompt)+len(s.Response)), s.Prompt...), s.Response...)
		T = max(T, len(full[i]))
	}
	s := torch.NewScope()
	defer s.Close()
	in, err := model.Pack(full, model.PadRight, dev)
	if err != nil {
		return Batch{}, err
	}
	B := len(seqs)
	mask := make([]bool, B*T)
	adv := make([]float32, B)
	tokens := make([]int, B)
	for i, sq := range seqs {
		P, R := len(sq.Prompt), len(sq.Response)
		for j := 0; j < R; j++ {
			if sq.Mask == nil || sq.Mask[j] {
				mask[i*T+P-1+j] = true
				tokens[i]++
			}
		}
		adv[i] = float32(sq.Advantage)
	}
	b = Batch{
		Input:      in,
		Targets:    model.ShiftTargets(in),
		Mask:       torch.FromBool(mask, int64(B), int64(T)).ToDevice(dev),
		Advantages: torch.FromFloat32(adv, int64(B), 1).ToDevice(dev),
		Tokens:     tokens,
	}
	s.Keep(b.Input.IDs, b.Input.Positions, b.Input.Valid, b.Targets, b.Mask, b.Advantages)
	return b, nil
}

// Free releases the batch's tensors.
func (b Batch) Free() {
	b.Input.Free()
	torch.FreeAll(b.Targets, b.Mask, b.Advantages)
}

// CheckSequences reports the first row that cannot be trained on: an agent
// not in agents (nil: any), an empty prompt or response, a token id outside
// [0, vocab), or a non-finite advantage.
func CheckSequences(seqs []Sequence, agents []string, vocab int) error {
	known := map[string]bool{}
	for _, a := range agents {
		known[a] = true
	}
	for i, s := range seqs {
		switch {
		case agents != nil && !known[s.Agent]:
			return fmt.Errorf("policy: sequence %d: agent %q is not trained by this model (its agents are %q); route the row to its own model's trainer", i, s.Agent, agents)
		case len(s.Prompt) == 0:
			return fmt.Errorf("policy: sequence %d (agent %q): empty prompt; a response token's log-prob needs at least one token before it", i, s.Agent)
		case len(s.Response) == 0:
			return fmt.Errorf("policy: sequence %d (agent %q): empty response; drop rows without response tokens before the update", i, s.Agent)
		case s.Mask != nil && len(s.Mask) != len(s.Response):
			return fmt.Errorf("policy: sequence %d (agent %q): loss mask has %d entries for %d response tokens; give one per token (or none)", i, s.Agent, len(s.Mask), len(s.Response))
		case s.Mask != nil && !slices.Contains(s.Mask, true):
			return fmt.Errorf("policy: sequence %d (agent %q): the loss mask excludes every response token; drop the row before the update", i, s.Agent)
		case math.IsNaN(s.Advantage) || math.IsInf(s.Advantage, 0):
			return fmt.Errorf("policy: sequence %d (agent %q): advantage is %g; it must be finite", i, s.Agent, s.Advantage)
		}
		for _, part := range []struct {
			name string
			ids  []int
		}{{"prompt", s.Prompt}, {"response", s.Response}} {
			for j, id := range part.ids {
				if id < 0 || id >= vocab {
					return fmt.Errorf("policy: sequence %d (agent %q): %s token %d is id %d, outside the model's vocabulary [0, %d)", i, s.Agent, part.name, j, id, vocab)
				}
			}
		}
	}
	return nil
}

// Split returns the mini-batches of a step over n rows, each a list of
// micro-batches of row indices: a seeded permutation of 0…n−1 cut into
// min(updates, n) mini-batches of near-equal size, each cut into
// micro-batches of at most micro rows.
func Split(n, updates, micro int, seed uint64, step int) [][][]int {
	if n == 0 {
		return nil
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	r := rand.NewPCG(seed, uint64(step))
	for i := n - 1; i > 0; i-- { // Fisher–Yates on the PCG stream (its outputs are fixed by the seed)
		j := int(r.Uint64() % uint64(i+1))
		order[i], order[j] = order[j], order[i]
	}
	updates = min(max(updates, 1), n)
	micro = max(micro, 1)
	minis := make([][][]int, 0, updates)
	start := 0
	for u := 0; u < updates; u++ {
		size := n / updates
		if u < n%updates {
			size++
		}
		rows := order[start : start+size]
		start += size
		var micros [][]int
		for m := 0; m < len(rows); m += micro {
			micros = append(micros, rows[m:min(m+micro, len(rows))])
		}
		minis = append(minis, micros)
	}
	return minis
}

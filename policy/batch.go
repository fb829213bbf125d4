package policy

// batch.go — the update's input rows, their layout as tensors with the
// response-token mask, and the deterministic split of a step's rows into
// mini-batches and micro-batches.
//
// Two layouts of one micro-batch, with the same loss:
//
//   - packed (Pack, what the update uses): the rows' prompt+response tokens
//     laid end to end (model.Packed) — the forward runs over real tokens only,
//     with variable-length attention, whatever the spread of row lengths;
//   - padded (Pad, the reference): rows right-padded to the longest, (B, T).
//
// The loss always sees (B, T) tensors: the packed forward's log-probs are
// scattered into the padded layout (cheap: one float per position), so every
// aggregation mode computes exactly as before, and packing changes only
// which positions the model's forward visits.
//
// For a row of P prompt tokens followed by R response tokens, response token
// j (0-based) is predicted at position P+j−1 of the row, so the mask is true
// at positions P−1 … P+R−2 (minus the tokens the row's own loss mask
// excludes) and the target there is the next id.
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
	// SampleLogProbs, when set, has one entry per Response token: the
	// sampler's log-probability of it (gen.Result.LogProbs), which the
	// update compares with its own (rollout.go). nil: not compared.
	SampleLogProbs []float32
}

// Batch is a micro-batch of rows on one device, packed (Pack) or padded
// (Pad). The caller frees it (Free), or lets the enclosing torch.Scope do so.
type Batch struct {
	Input      model.Input   // padded: prompt+response, right-padded, (B, T); zero when packed
	Targets    *torch.Tensor // padded: int64 (B, T), the next token at every position; packed: (N)
	Mask       *torch.Tensor // bool (B, T): true at positions that predict a response token
	Advantages *torch.Tensor // float32 (B, 1)
	Tokens     []int         // trained response tokens per row
	// RolloutLogProbs (float32) and RolloutMask (bool), (B, T): the
	// sampler's log-probs at the masked positions of the rows that have
	// them, and where they are; nil when no row has them.
	RolloutLogProbs *torch.Tensor
	RolloutMask     *torch.Tensor

	packed     *model.Packed // packed: the rows end to end
	packedMask *torch.Tensor // packed: bool (N), Mask in the packed layout
	index      *torch.Tensor // packed: int64 (N), each packed position's index in the (B·T) layout
}

// LogProbs is m's log-probabilities of the batch's targets, (B, T) float32,
// zero off the mask (and the entropies when opt asks), through whichever
// layout the batch has.
func (b Batch) LogProbs(m *model.Model, opt model.LogProbOptions) (logp, entropy *torch.Tensor, err error) {
	if b.packed == nil {
		return m.TokenLogProbs(b.Input, b.Targets, b.Mask, opt)
	}
	lp, ent, err := m.PackedTokenLogProbs(*b.packed, b.Targets, b.packedMask, opt)
	if err != nil {
		return nil, nil, err
	}
	defer torch.Recover(&err)
	s := torch.NewScope()
	defer s.Close()
	logp = s.Keep(b.toPadded(lp))
	if ent != nil {
		entropy = s.Keep(b.toPadded(ent))
	}
	torch.FreeAll(lp, ent)
	return logp, entropy, nil
}

// CheckpointedLogProbs is LogProbs through an activation-checkpointed
// forward (model.Checkpointed): after the loss's backward, call finish to
// back-propagate through the blocks. Packed batches only.
func (b Batch) CheckpointedLogProbs(m *model.Model, opt model.LogProbOptions) (logp, entropy *torch.Tensor, finish func() error, err error) {
	if b.packed == nil {
		return nil, nil, nil, fmt.Errorf("policy: activation checkpointing runs on packed micro-batches (Pack), not padded ones")
	}
	lp, ent, c, err := m.CheckpointedPackedLogProbs(*b.packed, b.Targets, b.packedMask, opt)
	if err != nil {
		return nil, nil, nil, err
	}
	defer torch.Recover(&err)
	logp, entropy = b.toPadded(lp), b.toPadded(ent)
	return logp, entropy, c.Backward, nil
}

// toPadded scatters packed (N) values into the (B, T) layout (nil stays nil).
func (b Batch) toPadded(x *torch.Tensor) *torch.Tensor {
	if x == nil {
		return nil
	}
	shape := b.Mask.Shape()
	out := torch.Zeros([]int64{shape[0] * shape[1]}, torch.Float32, x.Device())
	return out.IndexPut([]*torch.Tensor{b.index}, x, false).Reshape(shape...)
}

// to is a copy of the batch on dev (in the current scope).
func (b Batch) to(dev torch.Device) Batch {
	on := func(x *torch.Tensor) *torch.Tensor {
		if x == nil {
			return nil
		}
		return x.ToDevice(dev)
	}
	c := b
	c.Targets, c.Mask, c.Advantages, c.packedMask, c.index = on(b.Targets), on(b.Mask), on(b.Advantages), on(b.packedMask), on(b.index)
	c.RolloutLogProbs, c.RolloutMask = on(b.RolloutLogProbs), on(b.RolloutMask)
	if b.packed != nil {
		p := *b.packed
		p.IDs, p.Positions, p.CuSeqLens = on(p.IDs), on(p.Positions), on(p.CuSeqLens)
		c.packed = &p
	} else {
		c.Input.IDs, c.Input.Positions, c.Input.Valid = on(b.Input.IDs), on(b.Input.Positions), on(b.Input.Valid)
	}
	return c
}

// layout is what Pack and Pad share: each row's prompt+response, the
// longest length T, and in the (B, T) layout the positions that predict a
// trained response token (mask), each row's advantage and how many tokens
// it trains, and the sampler's log-probs there (rollout, rolloutMask: nil
// when no row has them).
type layout struct {
	full        [][]int
	T           int
	mask        []bool
	adv         []float32
	tokens      []int
	rollout     []float32
	rolloutMask []bool
}

// joinRows lays the rows out; an empty batch, prompt or response is refused.
func joinRows(seqs []Sequence) (l layout, err error) {
	if len(seqs) == 0 {
		return l, fmt.Errorf("policy: no sequences to pack")
	}
	l.full = make([][]int, len(seqs))
	for i, s := range seqs {
		if len(s.Prompt) == 0 || len(s.Response) == 0 {
			return l, fmt.Errorf("policy: sequence %d (agent %q) has %d prompt and %d response tokens; both must be at least 1", i, s.Agent, len(s.Prompt), len(s.Response))
		}
		l.full[i] = append(append(make([]int, 0, len(s.Prompt)+len(s.Response)), s.Prompt...), s.Response...)
		l.T = max(l.T, len(l.full[i]))
	}
	B := len(seqs)
	l.mask, l.adv, l.tokens = make([]bool, B*l.T), make([]float32, B), make([]int, B)
	for _, sq := range seqs {
		if sq.SampleLogProbs != nil {
			l.rollout, l.rolloutMask = make([]float32, B*l.T), make([]bool, B*l.T)
			break
		}
	}
	for i, sq := range seqs {
		P := len(sq.Prompt)
		for j := range sq.Response {
			if sq.Mask == nil || sq.Mask[j] {
				at := i*l.T + P - 1 + j // position P−1+j predicts response token j
				l.mask[at] = true
				l.tokens[i]++
				if sq.SampleLogProbs != nil {
					l.rollout[at], l.rolloutMask[at] = sq.SampleLogProbs[j], true
				}
			}
		}
		l.adv[i] = float32(sq.Advantage)
	}
	return l, nil
}

// build lays seqs out and runs fill in a scope whose tensors are freed
// unless fill keeps them, turning a libtorch error into err: the frame of
// Pack and Pad.
func build(seqs []Sequence, fill func(l layout, s *torch.Scope) (Batch, error)) (b Batch, err error) {
	defer torch.Recover(&err)
	l, err := joinRows(seqs)
	if err != nil {
		return Batch{}, err
	}
	s := torch.NewScope()
	defer s.Close()
	return fill(l, s)
}

// Pack builds the packed batch of seqs on dev. Rows must have a non-empty
// prompt and response (CheckSequences reports the first that does not).
func Pack(seqs []Sequence, dev torch.Device) (Batch, error) {
	return build(seqs, func(l layout, s *torch.Scope) (Batch, error) {
		p, err := model.PackSequences(l.full, dev)
		if err != nil {
			return Batch{}, err
		}
		s.Keep(p.IDs, p.Positions, p.CuSeqLens)
		N := int(p.Tokens())
		targets := make([]int64, 0, N) // each packed position's next token (0 at a row's end)
		pmask := make([]bool, 0, N)    // the mask in the packed layout
		index := make([]int64, 0, N)   // each packed position's place in the (B, T) layout
		for i, row := range l.full {
			for t := range row {
				next := int64(0)
				if t+1 < len(row) {
					next = int64(row[t+1])
				}
				targets, pmask, index = append(targets, next), append(pmask, l.mask[i*l.T+t]), append(index, int64(i*l.T+t))
			}
		}
		B := int64(len(seqs))
		b := Batch{
			Targets:    s.Keep(torch.FromInt64(targets).ToDevice(dev)),
			Mask:       s.Keep(torch.FromBool(l.mask, B, int64(l.T)).ToDevice(dev)),
			Advantages: s.Keep(torch.FromFloat32(l.adv, B, 1).ToDevice(dev)),
			Tokens:     l.tokens,
			packed:     &p,
			packedMask: s.Keep(torch.FromBool(pmask).ToDevice(dev)),
			index:      s.Keep(torch.FromInt64(index).ToDevice(dev)),
		}
		b.RolloutLogProbs, b.RolloutMask = l.rolloutTensors(s, dev)
		return b, nil
	})
}

// Pad builds the padded batch of seqs on dev (the reference layout). Rows
// must have a non-empty prompt and response.
func Pad(seqs []Sequence, dev torch.Device) (Batch, error) {
	return build(seqs, func(l layout, s *torch.Scope) (Batch, error) {
		in, err := model.Pack(l.full, model.PadRight, dev)
		if err != nil {
			return Batch{}, err
		}
		B := int64(len(seqs))
		b := Batch{
			Input:      in,
			Targets:    model.ShiftTargets(in),
			Mask:       torch.FromBool(l.mask, B, int64(l.T)).ToDevice(dev),
			Advantages: torch.FromFloat32(l.adv, B, 1).ToDevice(dev),
			Tokens:     l.tokens,
		}
		s.Keep(b.Input.IDs, b.Input.Positions, b.Input.Valid, b.Targets, b.Mask, b.Advantages)
		b.RolloutLogProbs, b.RolloutMask = l.rolloutTensors(s, dev)
		return b, nil
	})
}

// rolloutTensors are the sampler's log-probs and where they are, (B, T) on
// dev and kept in s; nil when no row has them.
func (l layout) rolloutTensors(s *torch.Scope, dev torch.Device) (logp, mask *torch.Tensor) {
	if l.rollout == nil {
		return nil, nil
	}
	B, T := int64(len(l.full)), int64(l.T)
	return s.Keep(torch.FromFloat32(l.rollout, B, T).ToDevice(dev)), s.Keep(torch.FromBool(l.rolloutMask, B, T).ToDevice(dev))
}

// Free releases the batch's tensors.
func (b Batch) Free() {
	if b.packed != nil {
		b.packed.Free()
	} else {
		b.Input.Free()
	}
	torch.FreeAll(b.Targets, b.Mask, b.Advantages, b.packedMask, b.index, b.RolloutLogProbs, b.RolloutMask)
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
		case s.SampleLogProbs != nil && len(s.SampleLogProbs) != len(s.Response):
			return fmt.Errorf("policy: sequence %d (agent %q): %d sampler log-probs for %d response tokens; give one per token (or none)", i, s.Agent, len(s.SampleLogProbs), len(s.Response))
		}
		for j, lp := range s.SampleLogProbs {
			if !(lp <= 0) || math.IsInf(float64(lp), -1) { // NaN, ±Inf, or a probability above 1
				return fmt.Errorf("policy: sequence %d (agent %q): sampler log-prob of response token %d is %g; a sampled token's log-probability is finite and <= 0 (leave SampleLogProbs nil when the sampler gave none)", i, s.Agent, j, lp)
			}
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

// SplitTokens is Split with micro-batches of at most budget tokens
// (lengths[i] is row i's prompt + response length) instead of a fixed
// number of rows: the same permutation and mini-batches, each cut greedily
// in order; a row longer than the budget is a micro-batch of its own.
func SplitTokens(lengths []int, updates, budget int, seed uint64, step int) [][][]int {
	minis := Split(len(lengths), updates, len(lengths), seed, step)
	for i, micros := range minis {
		var cut [][]int
		for _, rows := range micros {
			var cur []int
			tokens := 0
			for _, r := range rows {
				if len(cur) > 0 && tokens+lengths[r] > budget {
					cut, cur, tokens = append(cut, cur), nil, 0
				}
				cur, tokens = append(cur, r), tokens+lengths[r]
			}
			if len(cur) > 0 {
				cut = append(cut, cur)
			}
		}
		minis[i] = cut
	}
	return minis
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

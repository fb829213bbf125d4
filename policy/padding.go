package policy

// padding.go — optim.loss_padding (optim/precision.go): CoMLRL's MAGRPO
// loss over the pad tokens of a group sampled together.
//
// The reference samples an agent's G completions at a node in one
// generate call, which right-pads the shorter ones with the pad token to
// the longest; it then trains each completion as generate returned it: the
// forward sees [prompt, completion[:-1]] under an all-ones attention mask
// and the loss sums log π of every completion token, pads included
// (comlrl 1.3.7, comlrl/trainers/reinforce/magrpo.py,
// MAGRPOTrainer._generate_completions and _compute_loss_with_gradients).
// PadGroups lays the rows out the same way: each row of a group gets the
// pad token repeated up to the group's longest response, and the pads are
// trained like sampled tokens (a row's Mask, when set, grows with true).
//
// What it is not: a change to the loss. The pads are ordinary response
// tokens to the update; a group of one row, or of rows of equal length, is
// unchanged.

import "fmt"

// PadGroups returns seqs with every row of a group right-padded with pad to
// the group's longest response. group[i] names seqs[i]'s group; longest
// maps a group to its longest response in tokens, which may exceed every
// row passed (a longer row of the group that is not trained still sets the
// length, as it did in the reference's generate call); a group missing from
// longest takes its longest row here. seqs is not modified.
func PadGroups(seqs []Sequence, group []int, longest map[int]int, pad int) ([]Sequence, error) {
	if len(group) != len(seqs) {
		return nil, fmt.Errorf("policy: loss_padding: %d group ids for %d rows", len(group), len(seqs))
	}
	if pad < 0 {
		return nil, fmt.Errorf("policy: loss_padding: the tokenizer has no pad or end-of-sequence token to pad with, got id %d; turn loss_padding off", pad)
	}
	want := map[int]int{}
	for g, n := range longest {
		want[g] = n
	}
	for i, s := range seqs {
		want[group[i]] = max(want[group[i]], len(s.Response))
	}
	out := make([]Sequence, len(seqs))
	for i, s := range seqs {
		out[i] = s
		n := want[group[i]] - len(s.Response)
		if n <= 0 {
			continue
		}
		resp := make([]int, len(s.Response), len(s.Response)+n)
		copy(resp, s.Response)
		for range n {
			resp = append(resp, pad)
		}
		out[i].Response = resp
		if s.Mask != nil {
			mask := make([]bool, len(s.Mask), len(s.Mask)+n)
			copy(mask, s.Mask)
			for range n {
				mask = append(mask, true)
			}
			out[i].Mask = mask
		}
	}
	return out, nil
}

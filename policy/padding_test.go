package policy

import (
	"reflect"
	"strings"
	"testing"
)

// CoMLRL's generate returns an agent's G completions of one call padded
// with the pad token to the longest, and its loss trains every token of
// each (comlrl 1.3.7 magrpo.py, _generate_completions and
// _compute_loss_with_gradients). PadGroups makes the same rows by hand:
// group 0's rows (lengths 3, 1, 2; a longer untrained row of 4 sets the
// length through longest) and group 1's (2 and 2, unchanged); a Mask
// grows with trained pads. The input is left as it was.
func TestPadGroupsAsGenerateReturns(t *testing.T) {
	const pad = 9
	seqs := []Sequence{
		{Agent: "a", Prompt: []int{1}, Response: []int{5, 6, 7}, Advantage: 1},
		{Agent: "a", Prompt: []int{1}, Response: []int{5}, Advantage: -1},
		{Agent: "b", Prompt: []int{2}, Response: []int{3, 4}, Mask: []bool{true, false}},
		{Agent: "a", Prompt: []int{1}, Response: []int{8, 8}, Mask: []bool{false, true}},
		{Agent: "b", Prompt: []int{2}, Response: []int{4, 4}},
	}
	got, err := PadGroups(seqs, []int{0, 0, 1, 0, 1}, map[int]int{0: 4}, pad)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int{{5, 6, 7, 9}, {5, 9, 9, 9}, {3, 4}, {8, 8, 9, 9}, {4, 4}}
	for i, w := range want {
		if !reflect.DeepEqual(got[i].Response, w) {
			t.Errorf("row %d: response %v, want %v", i, got[i].Response, w)
		}
		if got[i].Advantage != seqs[i].Advantage || got[i].Agent != seqs[i].Agent {
			t.Errorf("row %d: agent or advantage changed", i)
		}
	}
	if m := got[3].Mask; !reflect.DeepEqual(m, []bool{false, true, true, true}) {
		t.Errorf("row 3 mask %v: the pads must be trained", m)
	}
	if m := got[2].Mask; !reflect.DeepEqual(m, []bool{true, false}) {
		t.Errorf("row 2 mask %v: an unpadded row keeps its mask", m)
	}
	if got[0].Mask != nil || len(seqs[1].Response) != 1 {
		t.Errorf("a row without a mask keeps none, and the input is not modified")
	}
	if _, err := PadGroups(seqs, []int{0}, nil, pad); err == nil || !strings.Contains(err.Error(), "loss_padding") {
		t.Errorf("group ids of the wrong length: got %v", err)
	}
	if _, err := PadGroups(seqs, []int{0, 0, 1, 0, 1}, nil, -1); err == nil || !strings.Contains(err.Error(), "pad") {
		t.Errorf("no pad token: got %v", err)
	}
}

package run

import (
	"reflect"
	"testing"

	"troupe/advantage"
	"troupe/rollout"
)

// A sample's loss mask reaches the policy's sequence; rows the estimator
// dropped and other agents' rows do not.
func TestSequencesCarryLossMasks(t *testing.T) {
	samples := []rollout.Sample{
		{Agent: "search", PromptTokens: []int{1}, ResponseTokens: []int{5, 6, 7, 8}, LossMask: []bool{true, false, false, true}},
		{Agent: "search", PromptTokens: []int{1}, ResponseTokens: []int{9}},
		{Agent: "answer", PromptTokens: []int{1}, ResponseTokens: []int{3}},
		{Agent: "search", PromptTokens: []int{1}, ResponseTokens: []int{4}},
	}
	res := advantage.Result{Advantages: []float64{0.5, -1, 2, 3}, Train: []bool{true, true, true, false}}
	seqs := sequences(samples, res, []string{"search"}, false)
	if len(seqs) != 2 {
		t.Fatalf("%d sequences, want 2", len(seqs))
	}
	if !reflect.DeepEqual(seqs[0].Mask, []bool{true, false, false, true}) || seqs[0].Advantage != 0.5 || seqs[1].Mask != nil || seqs[1].Advantage != -1 {
		t.Errorf("sequences %+v", seqs)
	}
}

// Under loss_padding the rows one agent sampled together at one node of
// one episode are padded to the longest of them — a row the estimator
// dropped still counts, as it was in the reference's generate call — while
// another node, another agent and another episode are groups of their own.
func TestPaddedSequencesGroupByNode(t *testing.T) {
	const pad = 0
	s := func(traj, node int, agent string, resp ...int) rollout.Sample {
		return rollout.Sample{Prompt: traj, Traj: traj, Node: node, Turn: node, Agent: agent, PromptTokens: []int{1}, ResponseTokens: resp}
	}
	samples := []rollout.Sample{
		s(0, 0, "first", 5, 6), s(0, 0, "first", 5), s(0, 0, "first", 7, 7, 7, 7), // the 4-token row is dropped
		s(0, 0, "second", 3), s(0, 1, "first", 2), s(0, 1, "first", 2, 2, 2), s(1, 0, "first", 4),
	}
	res := advantage.Result{Advantages: make([]float64, len(samples)), Train: []bool{true, true, false, true, true, true, true}}
	seqs, err := paddedSequences(samples, res, []string{"first"}, pad)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int{{5, 6, 0, 0}, {5, 0, 0, 0}, {2, 0, 0}, {2, 2, 2}, {4}}
	if len(seqs) != len(want) {
		t.Fatalf("%d rows, want %d", len(seqs), len(want))
	}
	for i, w := range want {
		if !reflect.DeepEqual(seqs[i].Response, w) {
			t.Errorf("row %d: %v, want %v", i, seqs[i].Response, w)
		}
	}
}

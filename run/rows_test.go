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

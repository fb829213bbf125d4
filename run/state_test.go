package run

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTrainStateBatchNames(t *testing.T) {
	for _, doc := range []string{
		`{"PromptsPerStep": 8, "N": 4, "MaxBatchRows": 64, "Shuffle": true}`,     // before 2026-11
		`{"prompts_per_step": 8, "n": 4, "max_batch_rows": 64, "shuffle": true}`, // now
	} {
		var b batchState
		if err := json.Unmarshal([]byte(doc), &b); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if want := (batchState{PromptsPerStep: 8, N: 4, MaxBatchRows: 64, Shuffle: true}); b != want {
			t.Errorf("%s: got %+v, want %+v", doc, b, want)
		}
	}
	out, err := json.Marshal(batchState{PromptsPerStep: 8, N: 4})
	if err != nil || !strings.Contains(string(out), `"prompts_per_step":8`) {
		t.Errorf("written as %s (%v), want snake_case names", out, err)
	}
	var b batchState
	if err := json.Unmarshal([]byte(`{"prompts": 8}`), &b); err == nil {
		t.Error("an unknown batch field was accepted")
	}
}

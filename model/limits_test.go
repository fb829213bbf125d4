package model

import (
	"strings"
	"testing"
)

func TestFitLength(t *testing.T) {
	c := Config{MaxPositions: 4096}
	for _, tc := range []struct {
		prompt, maxNew int
		want           string
	}{
		{10, 4086, ""},
		{10, 4087, "4087 new tokens after a 10-token prompt need 4097 positions, the model has 4096 (max_position_embeddings); ask for at most 4086"},
		{0, 1 << 40, "ask for at most 4096"},
		{4096, 1, "the prompt is 4096 tokens"},
		{10, 0, "must be >= 1"},
	} {
		err := c.FitLength(tc.prompt, tc.maxNew)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("prompt %d, new %d: %v, want %q", tc.prompt, tc.maxNew, err, tc.want)
		}
	}
}

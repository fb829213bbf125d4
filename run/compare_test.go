package run

import (
	"io"
	"math"
	"os"
	"strings"
	"testing"
)

func TestSpikesAndMedian(t *testing.T) {
	cases := []struct {
		v    []float64
		want int
	}{
		{[]float64{1, 1, 1, 1, 1, 3.1, 1}, 1},        // 3.1 > 3 × 1
		{[]float64{1, 1, 1, 1, 1, 3, 1}, 0},          // not above
		{[]float64{1, 1, 1, 1, 10}, 0},               // too early: 4 earlier norms
		{[]float64{0, 0, 0, 1, 1, 1, 1, 1, 4, 0}, 1}, // zeros are steps without an update
		{[]float64{1, 2, 3, 4, 5, 100, 100, 100}, 3}, // each step of a run of spikes counts
		{[]float64{math.NaN()}, 0},
	}
	for _, c := range cases {
		if got := spikes(c.v); got != c.want {
			t.Errorf("spikes(%v) = %d, want %d", c.v, got, c.want)
		}
	}
	if m := median([]float64{3, 1, 2, 10}); m != 2.5 {
		t.Errorf("median = %g, want 2.5", m)
	}
	if m := mean([]float64{1, math.NaN(), 3}); m != 2 {
		t.Errorf("mean skipping NaN = %g, want 2", m)
	}
}

func TestCompareRefusesARunGivenTwice(t *testing.T) {
	dir := t.TempDir()
	run := dir + "/grpo-s1"
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(run+"/metrics.jsonl", []byte(`{"step":1,"grad_norm/solver":1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := CompareRuns(io.Discard, dir+"/report", []string{run, dir + "/./grpo-s1/"})
	if err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Fatalf("the same run twice: want an error naming it, got %v", err)
	}
}

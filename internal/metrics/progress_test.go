package metrics

import (
	"math"
	"strings"
	"testing"
	"time"
)

// fakeClock returns the given instants one per call.
func fakeClock(instants ...time.Time) func() time.Time {
	return func() time.Time {
		t := instants[0]
		if len(instants) > 1 {
			instants = instants[1:]
		}
		return t
	}
}

func TestProgressLines(t *testing.T) {
	var out strings.Builder
	clock := fakeClock(t0, t0.Add(4*time.Second), t0.Add(10*time.Second), t0.Add(12*time.Second))
	p := NewProgress(&out, 1, 20, clock)
	p.Report(StepSummary{Step: 1, Reward: 0.25, GradNorm: map[string]float64{"verifier": 1.2, "solver": 0.8149}, Tokens: 1248})
	p.Report(StepSummary{Step: 2, Reward: 0.375, GradNorm: map[string]float64{"solver": 0.81, "verifier": 1.204}, Tokens: 1872})
	p.Report(StepSummary{Step: 3, Reward: math.NaN(), Tokens: 0})
	want := "" +
		// 1248 tokens in 4 s; 4 s per step × 19 remaining steps = 76 s.
		"step 1/20  reward 0.250  gnorm solver=0.81 verifier=1.20  312 tok/s  elapsed 4s  eta 1m16s\n" +
		// 1872 tokens in 6 s; 10 s / 2 steps × 18 = 90 s.
		"step 2/20  reward 0.375  gnorm solver=0.81 verifier=1.20  312 tok/s  elapsed 10s  eta 1m30s\n" +
		// 12 s / 3 × 17 = 68 s.
		"step 3/20  reward nan  0 tok/s  elapsed 12s  eta 1m08s\n"
	if out.String() != want {
		t.Errorf("progress\n got %q\nwant %q", out.String(), want)
	}
}

// A resumed run extrapolates from the steps this process ran.
func TestProgressResumedETA(t *testing.T) {
	var out strings.Builder
	p := NewProgress(&out, 11, 20, fakeClock(t0, t0.Add(30*time.Second)))
	p.Report(StepSummary{Step: 11, Reward: 1, Tokens: 300})
	if want := "step 11/20  reward 1.000  10 tok/s  elapsed 30s  eta 4m30s\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

func TestFormatDuration(t *testing.T) {
	cases := map[time.Duration]string{
		850 * time.Millisecond:                     "850ms",
		12*time.Second + 900*time.Millisecond:      "12s",
		80 * time.Second:                           "1m20s",
		time.Hour + 5*time.Minute + 59*time.Second: "1h05m",
		27 * time.Hour:                             "1d03h",
		-time.Second:                               "0ms",
	}
	for d, want := range cases {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// progress.go: the one-line console summary printed after each step,
//
//	step 3/20  reward 0.375  gnorm solver=0.81 verifier=1.20  312 tok/s  elapsed 12s  eta 1m20s
//
// Steps count from 1 to TotalSteps. Throughput is the step's generated
// tokens over the time since the previous line (or since the start). The
// ETA extrapolates the mean step time of this process (so a resumed run is
// not misled by the steps it skipped) over the remaining steps. Agents are
// printed in name order. The clock is injectable so that the line is
// deterministic in tests.
package metrics

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"
)

// Progress prints one summary line per step.
type Progress struct {
	out         io.Writer
	firstStep   int // the first step this process runs
	totalSteps  int
	now         func() time.Time
	start, last time.Time
}

// StepSummary is what one line reports.
type StepSummary struct {
	Step     int                // the step just finished, 1-based
	Reward   float64            // mean reward of the step's samples
	GradNorm map[string]float64 // per agent, before clipping
	Tokens   int                // tokens generated during the step
}

// NewProgress starts the clock for a run that executes steps firstStep
// through totalSteps in this process. now may be nil for time.Now.
func NewProgress(out io.Writer, firstStep, totalSteps int, now func() time.Time) *Progress {
	if now == nil {
		now = time.Now
	}
	t := now()
	return &Progress{out: out, firstStep: firstStep, totalSteps: totalSteps, now: now, start: t, last: t}
}

// Report writes the line for s.
func (p *Progress) Report(s StepSummary) error {
	t := p.now()
	_, err := io.WriteString(p.out, p.format(s, t)+"\n")
	p.last = t
	return err
}

func (p *Progress) format(s StepSummary, t time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "step %d/%d  reward %s", s.Step, p.totalSteps, decimal(s.Reward, 3))
	if len(s.GradNorm) > 0 {
		agents := make([]string, 0, len(s.GradNorm))
		for a := range s.GradNorm {
			agents = append(agents, a)
		}
		sort.Strings(agents)
		b.WriteString("  gnorm")
		for _, a := range agents {
			fmt.Fprintf(&b, " %s=%s", a, decimal(s.GradNorm[a], 2))
		}
	}
	if dt := t.Sub(p.last).Seconds(); dt > 0 {
		fmt.Fprintf(&b, "  %.0f tok/s", float64(s.Tokens)/dt)
	}
	elapsed := t.Sub(p.start)
	fmt.Fprintf(&b, "  elapsed %s", FormatDuration(elapsed))
	done := s.Step - p.firstStep + 1
	if remaining := p.totalSteps - s.Step; done > 0 && remaining >= 0 {
		eta := time.Duration(float64(elapsed) / float64(done) * float64(remaining))
		fmt.Fprintf(&b, "  eta %s", FormatDuration(eta))
	}
	return b.String()
}

// decimal formats v with the given decimals; NaN and ±Inf as nan, inf, -inf.
func decimal(v float64, decimals int) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return fmt.Sprintf("%.*f", decimals, v)
}

// FormatDuration prints d compactly at a precision a person reads at a
// glance: 850ms, 12s, 1m20s, 2h05m, 3d04h.
func FormatDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
}

package run

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/internal/metrics"
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

// Runs that differ only in their seed are also charted as one group: the
// mean over seeds at each step, and the lowest and highest seed.
func TestCompareGroupsSeeds(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		d := dir + "/" + name
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(d+"/metrics.jsonl", []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	runs := []string{
		write("team-s1", `{"step":0,"eval/accuracy":0.1}`+"\n"+`{"step":1,"reward/mean":1,"eval/accuracy":0.4}`+"\n"),
		write("team-s2", `{"step":0,"eval/accuracy":0.1}`+"\n"+`{"step":1,"reward/mean":3,"eval/accuracy":0.2}`+"\n"),
		write("single-s1", `{"step":0,"eval/accuracy":0.05}`+"\n"+`{"step":1,"reward/mean":2,"eval/accuracy":0.3}`+"\n"),
	}
	if err := CompareRuns(io.Discard, dir+"/report", runs); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"accuracy-by-group.png", "reward-by-group.png", "accuracy.png"} {
		if _, err := os.Stat(dir + "/report/" + f); err != nil {
			t.Errorf("no %s: %v", f, err)
		}
	}
	var series []runSeries
	for _, d := range runs {
		recs, err := metrics.ReadJSONL(filepath.Join(d, "metrics.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		label := filepath.Base(d)
		series = append(series, runSeries{label: label, group: seedSuffix.ReplaceAllString(label, ""), records: recs})
	}
	recs, groups := groupOverlay(series, "eval/accuracy")
	if strings.Join(groups, ",") != "single,team" || len(recs) != 2 {
		t.Fatalf("groups %v over %d steps, want single and team over 2", groups, len(recs))
	}
	at1 := recs[1].Values
	if math.Abs(at1["team"]-0.3) > 1e-12 || at1["team (lowest)"] != 0.2 || at1["team (highest)"] != 0.4 || at1["single"] != 0.3 {
		t.Errorf("step 1: %v, want team mean 0.3 over [0.2, 0.4] and single 0.3", at1)
	}
	// without seeds there is nothing to group
	if err := CompareRuns(io.Discard, dir+"/plain", []string{runs[0], runs[2]}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir + "/plain/accuracy-by-group.png"); err == nil {
		t.Error("runs of one seed each were charted by group")
	}
}

package run

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"troupe/config"
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
	write := func(name, body string, sets ...string) string {
		return writeCompareRun(t, dir, name, body, sets...)
	}
	runs := []string{
		write("team-s1", `{"step":0,"eval/accuracy":0.1}`+"\n"+`{"step":1,"reward/mean":1,"eval/accuracy":0.4}`+"\n", "run.seed=1"),
		write("team-s2", `{"step":0,"eval/accuracy":0.1}`+"\n"+`{"step":1,"reward/mean":3,"eval/accuracy":0.2}`+"\n", "run.seed=2", "run.output_dir=elsewhere"),
		write("single-s1", `{"step":0,"eval/accuracy":0.05}`+"\n"+`{"step":1,"reward/mean":2,"eval/accuracy":0.3}`+"\n", "run.seed=1", "optim.lr=1e-2"),
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
		series = append(series, runSeries{label: filepath.Base(d), records: recs})
	}
	var info []compareRun
	for _, d := range runs {
		info = append(info, loadCompareRun(d))
	}
	groupSeeds(series, info)
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

// writeCompareRun writes a run directory with metrics body and the
// config.yaml of the tiny config with sets.
func writeCompareRun(t *testing.T, dir, name, body string, sets ...string) string {
	t.Helper()
	d := filepath.Join(dir, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d+"/metrics.jsonl", []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "model") // config.json and tokenizer.json, as config requires
	for _, f := range []string{"config.json", "tokenizer.json"} {
		if err := os.MkdirAll(model, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(model, f), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	yaml := strings.ReplaceAll(strings.ReplaceAll(tinyConfigYAML, "OUT", d), "MODEL", model)
	cfg, err := config.Parse([]byte(yaml), append([]string{"run.output_dir=" + d}, sets...))
	if err == nil {
		var raw []byte
		if raw, err = cfg.Marshal(); err == nil {
			err = os.WriteFile(filepath.Join(d, RunConfigFile), raw, 0o644)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Runs are grouped by what their configs say, not by their names: a run
// named as a seed but trained otherwise, a copy of a run (same seed), runs
// of one name in two directories and a run without a config each stand
// alone, and the report says why; a symbolic link to a run is the run.
func TestCompareGroupsOnlyLikeRuns(t *testing.T) {
	dir := t.TempDir()
	body := `{"step":1,"reward/mean":1,"eval/accuracy":0.4}` + "\n"
	s1 := writeCompareRun(t, dir, "team-s1", body, "run.seed=1")
	s2 := writeCompareRun(t, dir, "team-s2", body, "run.seed=2", "engine.enabled=false", "run.log_samples=0")
	lr := writeCompareRun(t, dir, "team-s3", body, "run.seed=3", "optim.lr=5e-4")
	cp := writeCompareRun(t, dir, "copy/team-s1", body, "run.seed=1")
	bare := dir + "/bare-s4"
	if err := os.MkdirAll(bare, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bare+"/metrics.jsonl", []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	link := dir + "/link"
	if err := os.Symlink(s1, link); err != nil {
		t.Fatal(err)
	}
	if err := CompareRuns(io.Discard, dir+"/r0", []string{s1, link}); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("a run and a symbolic link to it: %v, want 'given twice'", err)
	}
	var console strings.Builder
	if err := CompareRuns(&console, dir+"/r1", []string{s1, s2, lr, cp, bare}); err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(dir + "/r1/report.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"group team: " + s1 + ", team-s2 (configs that agree but for run.seed)",
		"team-s3 is not grouped with " + s1 + ": its config differs in optim.lr: 0.001 → 0.0005",
		cp + " is not grouped with " + s1 + ": it repeats the config and run.seed 1",
		"bare-s4 stands alone: its config.yaml cannot be read",
		"| team (2 runs) |",
	} {
		if !strings.Contains(string(report), want) || (!strings.HasPrefix(want, "|") && !strings.Contains(console.String(), want)) {
			t.Errorf("the report and the console should say %q:\n%s", want, report)
		}
	}
}

// A group whose seeds ran different lengths is named in a warning, on the
// console and in the report; a group of one run says "1 run" and no ±; a
// spread that is rounding noise reads 0.
func TestCompareWarnsOfUnequalLengths(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, steps int, amp float64, seed string) string {
		var b strings.Builder
		for s := 1; s <= steps; s++ {
			b.WriteString(`{"step":` + itoa(s) + `,"grad_norm/solver":1,"amplification/solver":` + strconv.FormatFloat(amp, 'g', -1, 64) + `,"reward/mean":0.5}` + "\n")
		}
		return writeCompareRun(t, dir, name, b.String(), "run.seed="+seed) // seeds of one config: grouped
	}
	// 1 and the next float above it: a spread of 2.2e-16 is noise
	runs := []string{write("a-s1", 10, 1, "1"), write("a-s2", 10, math.Nextafter(1, 2), "2"), write("a-s3", 30, 1, "3"), write("b-s1", 10, 1, "1")}
	var console strings.Builder
	if err := CompareRuns(&console, filepath.Join(dir, "report"), runs); err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(filepath.Join(dir, "report", "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := "group a averages runs of different lengths (a-s1 10, a-s2 10, a-s3 30 steps)"
	if !strings.Contains(console.String(), "compare: warning: "+want) || !strings.Contains(string(report), "Warning: "+want) {
		t.Errorf("no warning %q:\n%s\n%s", want, console.String(), report)
	}
	if strings.Contains(console.String(), "group b") {
		t.Errorf("a group of one run warned:\n%s", console.String())
	}
	for _, w := range []string{"| b (1 run) | 10 |", "| a (3 runs) |", " 1 ± 0 "} {
		if !strings.Contains(string(report), w) {
			t.Errorf("the report should hold %q:\n%s", w, report)
		}
	}
	if strings.Contains(string(report), "e-16") || strings.Contains(string(report), "(1 runs)") {
		t.Errorf("the report shows rounding noise or \"1 runs\":\n%s", report)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

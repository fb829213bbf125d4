package run

// compare.go — `train compare`: one report over several runs (the Dr. MAS
// stability experiment, or any sweep): per-agent gradient-norm curves,
// spike counts, amplification factors, rewards and held-out accuracy, as
// PNG charts and a Markdown table; per group of seeds (comparegroups.go:
// runs whose configs agree but for the seed) their mean and spread.
//
// A spike is a step whose pre-clip gradient norm exceeds spikeFactor times
// the median of that agent's earlier norms in the same run (counted from the
// sixth nonzero one on, so the median means something).

import (
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"troupe/internal/atomicfile"
	"troupe/internal/metrics"
)

const (
	spikeFactor   = 3.0
	spikeMinSteps = 5
)

// runSeries is one run's metrics.
type runSeries struct {
	label, group string
	records      []metrics.Record
}

func CompareRuns(w io.Writer, out string, dirs []string) error {
	var runs []runSeries
	agents := map[string]bool{}
	// the same run given twice would count its steps twice in its group's
	// mean and spread
	if err := distinctRuns(dirs); err != nil {
		return err
	}
	labels := runLabels(dirs)
	var info []compareRun
	for i, d := range dirs {
		recs, err := metrics.ReadJSONL(filepath.Join(d, "metrics.jsonl"))
		if err != nil {
			return fmt.Errorf("compare: %w", err)
		}
		info = append(info, loadCompareRun(d))
		runs = append(runs, runSeries{label: labels[i], records: recs})
		for _, r := range recs {
			for k := range r.Values {
				if a, ok := strings.CutPrefix(k, "grad_norm/"); ok {
					agents[a] = true
				}
			}
		}
	}
	notes := groupSeeds(runs, info) // comparegroups.go
	for _, n := range notes {
		fmt.Fprintf(w, "compare: %s\n", n)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for a := range agents {
			if !yield(a) {
				return
			}
		}
	})
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	var charts []string
	// draw renders one chart of recs to out/file
	draw := func(file string, recs []metrics.Record, chart metrics.Chart) error {
		img, err := metrics.Render(recs, []metrics.Chart{chart}, metrics.PlotOptions{})
		if err != nil {
			return fmt.Errorf("compare: %s: %w", file, err)
		}
		charts = append(charts, file)
		return atomicfile.Write(filepath.Join(out, file), func(w io.Writer) error { return png.Encode(w, img) })
	}
	// plot: one line per run
	plot := func(file, title, key string, ymin, ymax float64) error {
		return draw(file, overlay(runs, key), metrics.Chart{Title: title, Keys: []string{"*"}, YMin: ymin, YMax: ymax})
	}
	for _, a := range names {
		if err := plot("grad_norm-"+a+".png", "pre-clip gradient norm: "+a, "grad_norm/"+a, 0, 0); err != nil {
			return err
		}
		if err := plot("amplification-"+a+".png", "amplification factor (σ_k² + (μ_k − μ)²)/σ²: "+a, "amplification/"+a, 0, 0); err != nil {
			return err
		}
	}
	if err := plot("reward.png", "reward (mean over rows)", "reward/mean", 0, 0); err != nil {
		return err
	}
	if err := plot("accuracy.png", "held-out accuracy", "eval/accuracy", 0, 1); err != nil {
		return err
	}
	// runs that differ only in their seed (name-sN): each group's mean over
	// its seeds as a line, shaded from the lowest to the highest seed
	if seeded(runs) {
		byGroup := func(file, title, key string, ymin, ymax float64, sparse bool) error {
			recs, groups := groupOverlay(runs, key)
			bands := map[string][2]string{}
			for _, g := range groups {
				bands[g] = [2]string{g + lowSuffix, g + highSuffix}
			}
			return draw(file, recs, metrics.Chart{Title: title, Keys: groups, YMin: ymin, YMax: ymax, Bands: bands, Sparse: sparse})
		}
		if err := byGroup("reward-by-group.png", "reward (mean over rows): mean over seeds, shaded from the lowest to the highest", "reward/mean", 0, 0, false); err != nil {
			return err
		}
		if err := byGroup("accuracy-by-group.png", "held-out accuracy: mean over seeds, shaded from the lowest to the highest", "eval/accuracy", 0, 1, true); err != nil {
			return err
		}
	}
	byGroup := map[string][]runSeries{}
	var groupOrder []string
	for _, r := range runs {
		if _, ok := byGroup[r.group]; !ok {
			groupOrder = append(groupOrder, r.group)
		}
		byGroup[r.group] = append(byGroup[r.group], r)
	}
	for _, g := range groupOrder {
		if warn := unequalLengths(g, byGroup[g]); warn != "" {
			fmt.Fprintf(w, "compare: warning: %s\n", warn)
		}
	}
	report := compareReport(runs, names, charts, notes)
	if err := atomicfile.Write(filepath.Join(out, "report.md"), func(w io.Writer) error { _, err := io.WriteString(w, report); return err }); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	fmt.Fprintf(w, "compare: wrote %s and %d charts\n", filepath.Join(out, "report.md"), len(charts))
	return nil
}

// overlay turns one metric of every run into records whose keys are the
// run labels, for one chart with a line per run.
func overlay(runs []runSeries, key string) []metrics.Record {
	byStep := map[int]map[string]float64{}
	for _, r := range runs {
		for _, rec := range r.records {
			if v, ok := rec.Values[key]; ok {
				if byStep[rec.Step] == nil {
					byStep[rec.Step] = map[string]float64{}
				}
				byStep[rec.Step][r.label] = v
			}
		}
	}
	steps := make([]int, 0, len(byStep))
	for s := range byStep {
		steps = append(steps, s)
	}
	sort.Ints(steps)
	out := make([]metrics.Record, len(steps))
	for i, s := range steps {
		out[i] = metrics.Record{Step: s, Values: byStep[s]}
	}
	return out
}

// The keys of a group's lowest and highest seed in groupOverlay's records.
const lowSuffix, highSuffix = " (lowest)", " (highest)"

// seeded reports whether some group holds more than one run.
func seeded(runs []runSeries) bool {
	n := map[string]int{}
	for _, r := range runs {
		if n[r.group]++; n[r.group] > 1 {
			return true
		}
	}
	return false
}

// groupOverlay turns one metric into records keyed by group: at each step
// the mean over the group's runs that log it there, and (lowSuffix,
// highSuffix) their lowest and highest; the groups in sorted order.
func groupOverlay(runs []runSeries, key string) ([]metrics.Record, []string) {
	vals := map[int]map[string][]float64{}
	set := map[string]bool{}
	for _, r := range runs {
		set[r.group] = true
		for _, rec := range r.records {
			if v, ok := rec.Values[key]; ok {
				if vals[rec.Step] == nil {
					vals[rec.Step] = map[string][]float64{}
				}
				vals[rec.Step][r.group] = append(vals[rec.Step][r.group], v)
			}
		}
	}
	steps := slices.Sorted(func(yield func(int) bool) {
		for s := range vals {
			if !yield(s) {
				return
			}
		}
	})
	out := make([]metrics.Record, len(steps))
	for i, s := range steps {
		values := map[string]float64{}
		for g, xs := range vals[s] {
			values[g], values[g+lowSuffix], values[g+highSuffix] = mean(xs), slices.Min(xs), slices.Max(xs)
		}
		out[i] = metrics.Record{Step: s, Values: values}
	}
	groups := slices.Sorted(func(yield func(string) bool) {
		for g := range set {
			if !yield(g) {
				return
			}
		}
	})
	return out, groups
}

// steps counts the run's training steps (records of step ≥ 1; step 0 is
// the evaluation before training).
func (r runSeries) steps() int {
	n := 0
	for _, rec := range r.records {
		if rec.Step >= 1 {
			n++
		}
	}
	return n
}

// series is one metric of one run, in step order, NaN-free.
func (r runSeries) series(key string) []float64 {
	var v []float64
	for _, rec := range r.records {
		if x, ok := rec.Values[key]; ok && !math.IsNaN(x) && !math.IsInf(x, 0) {
			v = append(v, x)
		}
	}
	return v
}

// spikes counts the values above spikeFactor × the median of the nonzero
// values before them, once there are spikeMinSteps of those (a zero norm is
// a step without an update: every advantage of the agent was 0).
func spikes(v []float64) int {
	n := 0
	var seen []float64
	for _, x := range v {
		if len(seen) >= spikeMinSteps && x > spikeFactor*median(seen) {
			n++
		}
		if x > 0 {
			seen = append(seen, x)
		}
	}
	return n
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	sort.Float64s(s)
	if len(s) == 0 {
		return math.NaN()
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// mean and stddev skip NaN (a run without that metric).
func mean(v []float64) float64 {
	s, n := 0.0, 0
	for _, x := range v {
		if !math.IsNaN(x) {
			s += x
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return s / float64(n)
}

func stddev(v []float64) float64 {
	m, s, n := mean(v), 0.0, 0
	for _, x := range v {
		if !math.IsNaN(x) {
			s += (x - m) * (x - m)
			n++
		}
	}
	if n < 2 {
		return 0
	}
	return math.Sqrt(s / float64(n-1))
}

func last(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	return v[len(v)-1]
}

func tail5(v []float64) []float64 { return v[max(0, len(v)-5):] }

// meanSD is "mean ± sd" in format f; the sd of a single run is left out,
// and one that is rounding noise (runs that agree to the last bits) is 0.
func meanSD(v []float64, f string) string {
	if len(v) < 2 {
		return fmt.Sprintf(f, mean(v))
	}
	m, sd := mean(v), stddev(v)
	if sd <= 1e-9*max(1, math.Abs(m)) {
		sd = 0
	}
	return fmt.Sprintf(f+" ± "+f, m, sd)
}

// unequalLengths warns when the runs of group g ran different numbers of
// steps: its means put one run's late steps beside another's early ones.
func unequalLengths(g string, rs []runSeries) string {
	var lens []string
	differ := false
	for _, r := range rs {
		lens = append(lens, fmt.Sprintf("%s %d", r.label, r.steps()))
		differ = differ || r.steps() != rs[0].steps()
	}
	if !differ {
		return ""
	}
	return fmt.Sprintf("group %s averages runs of different lengths (%s steps): its last-5-steps reward and last accuracy compare different points of training; compare runs of one length", g, strings.Join(lens, ", "))
}

func compareReport(runs []runSeries, agents, charts, notes []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Run comparison\n\nA spike is a step whose pre-clip gradient norm exceeds %g× the median of that agent's earlier nonzero norms in the run (once there are %d of them). Amplification is Dr. MAS's (σ_k² + (μ_k − μ)²)/σ², averaged over the run.\n\n", spikeFactor, spikeMinSteps)
	b.WriteString("Runs are grouped as seeds of one experiment only when their config.yaml files agree but for run.seed (and where they write, log and run).\n\n")
	for _, n := range notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	if len(notes) > 0 {
		b.WriteString("\n")
	}
	head := []string{"run", "steps"}
	for _, a := range agents {
		head = append(head, "spikes "+a, "max grad norm "+a, "amplification "+a)
	}
	head = append(head, "reward (last 5 steps)", "held-out accuracy (last)")
	table := func(rows [][]string) {
		fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat(" --- |", len(head)))
		for _, r := range rows {
			fmt.Fprintf(&b, "| %s |\n", strings.Join(r, " | "))
		}
		b.WriteString("\n")
	}
	var rows [][]string
	groups := map[string][]runSeries{}
	var order []string
	for _, r := range runs {
		row := []string{r.label, fmt.Sprint(r.steps())}
		for _, a := range agents {
			g := r.series("grad_norm/" + a)
			row = append(row, fmt.Sprint(spikes(g)), fmt.Sprintf("%.3g", slices.Max(append([]float64{0}, g...))), fmt.Sprintf("%.3g", mean(r.series("amplification/"+a))))
		}
		row = append(row, fmt.Sprintf("%.3f", mean(tail5(r.series("reward/mean")))), fmt.Sprintf("%.3f", last(r.series("eval/accuracy"))))
		rows = append(rows, row)
		if _, ok := groups[r.group]; !ok {
			order = append(order, r.group)
		}
		groups[r.group] = append(groups[r.group], r)
	}
	b.WriteString("## Per run\n\n")
	table(rows)
	b.WriteString("## Per group (mean ± standard deviation over its runs)\n\n")
	rows = nil
	var warnings []string
	for _, g := range order {
		rs := groups[g]
		pm := func(v []float64, f string) string { return meanSD(v, f) }
		steps := make([]float64, len(rs))
		for i, r := range rs {
			steps[i] = float64(r.steps())
		}
		if w := unequalLengths(g, rs); w != "" {
			warnings = append(warnings, w)
		}
		what := fmt.Sprintf("%s (%d runs)", g, len(rs))
		if len(rs) == 1 {
			what = g + " (1 run)"
		}
		row := []string{what, fmt.Sprintf("%.0f", mean(steps))}
		for _, a := range agents {
			var sp, mx, amp []float64
			for _, r := range rs {
				gn := r.series("grad_norm/" + a)
				sp = append(sp, float64(spikes(gn)))
				mx = append(mx, slices.Max(append([]float64{0}, gn...)))
				amp = append(amp, mean(r.series("amplification/"+a)))
			}
			row = append(row, pm(sp, "%.1f"), pm(mx, "%.3g"), pm(amp, "%.3g"))
		}
		var rew, acc []float64
		for _, r := range rs {
			rew = append(rew, mean(tail5(r.series("reward/mean"))))
			acc = append(acc, last(r.series("eval/accuracy")))
		}
		row = append(row, pm(rew, "%.3f"), pm(acc, "%.3f"))
		rows = append(rows, row)
	}
	table(rows)
	for _, w := range warnings {
		fmt.Fprintf(&b, "Warning: %s\n\n", w)
	}
	b.WriteString("## Charts\n\n")
	for _, c := range charts {
		fmt.Fprintf(&b, "![%s](%s)\n\n", strings.TrimSuffix(c, ".png"), c)
	}
	return b.String()
}

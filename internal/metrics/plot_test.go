package metrics

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// frame finds the plot area's frame by looking for long black runs: the
// outermost rows and columns more than half the panel long. This uses only
// what a person sees (a black box), not the layout constants.
func frame(t *testing.T, img *image.RGBA, panel image.Rectangle) (left, right, top, bottom int) {
	t.Helper()
	black := func(x, y int) bool { return img.RGBAAt(x, y) == axisColor }
	left, right, top, bottom = -1, -1, -1, -1
	for x := panel.Min.X; x < panel.Max.X; x++ {
		run := 0
		for y := panel.Min.Y; y < panel.Max.Y; y++ {
			if black(x, y) {
				run++
			}
		}
		if run > panel.Dy()/2 {
			if left < 0 {
				left = x
			}
			right = x
		}
	}
	for y := panel.Min.Y; y < panel.Max.Y; y++ {
		run := 0
		for x := panel.Min.X; x < panel.Max.X; x++ {
			if black(x, y) {
				run++
			}
		}
		if run > panel.Dx()/2 {
			if top < 0 {
				top = y
			}
			bottom = y
		}
	}
	if left < 0 || top < 0 || right-left < 100 || bottom-top < 100 {
		t.Fatalf("no plot frame found: x %d..%d, y %d..%d", left, right, top, bottom)
	}
	return
}

// colourNear reports whether c occurs in column x within tol rows of y.
func colourNear(img *image.RGBA, x, y, tol int, c color.RGBA) bool {
	for dy := -tol; dy <= tol; dy++ {
		if img.RGBAAt(x, y+dy) == c {
			return true
		}
	}
	return false
}

func TestRenderPutsPointsWhereExpected(t *testing.T) {
	var records []Record
	for step := 0; step <= 10; step++ {
		r := Record{Step: step, Values: map[string]float64{"diag": float64(step) / 10}}
		if step != 5 { // a gap in "flat"
			r.Values["flat"] = 0.25
		}
		records = append(records, r)
	}
	charts := []Chart{
		{Title: "reward", Keys: []string{"diag", "flat"}, YMin: 0, YMax: 1},
		{Title: "empty", Keys: []string{"absent"}},
	}
	img, err := Render(records, charts, PlotOptions{Width: 400, ChartHeight: 300})
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds() != image.Rect(0, 0, 400, 600) {
		t.Fatalf("bounds %v, want 400x600", img.Bounds())
	}
	left, right, top, bottom := frame(t, img, image.Rect(0, 0, 400, 300))
	px := func(step float64) int { return left + int(math.Round(step/10*float64(right-left))) }
	py := func(v float64) int { return bottom - int(math.Round(v*float64(bottom-top))) }
	diag, flat := seriesColors[0], seriesColors[1]

	for _, step := range []float64{0.5, 1, 2, 3.5, 4, 5, 6} {
		if !colourNear(img, px(step), py(step/10), 2, diag) {
			t.Errorf("diag: no line pixel near (%d, %d) for step %g", px(step), py(step/10), step)
		}
		// Nowhere else in that column.
		for y := top + 1; y < bottom; y++ {
			if img.RGBAAt(px(step), y) == diag && math.Abs(float64(y-py(step/10))) > 3 {
				t.Errorf("diag: stray pixel at (%d, %d), line is at row %d", px(step), y, py(step/10))
				break
			}
		}
	}
	for _, step := range []float64{0.5, 1, 3, 4, 6, 7.5, 9} {
		if !colourNear(img, px(step), py(0.25), 2, flat) {
			t.Errorf("flat: no line pixel near (%d, %d) for step %g", px(step), py(0.25), step)
		}
	}
	// Step 5 is missing: no "flat" pixel strictly between steps 4 and 6.
	for x := px(4) + 3; x <= px(6)-3; x++ {
		for y := top + 1; y < bottom; y++ {
			if img.RGBAAt(x, y) == flat {
				t.Fatalf("flat: pixel at (%d, %d) inside the gap between steps 4 and 6", x, y)
			}
		}
	}
	// The legend sits right of the frame, beside its top, and shows both
	// colours; it covers no data: the diagonal reaches the top-right corner.
	legend := image.Rect(right+1, top, 400, (top+bottom)/2)
	for _, c := range []color.RGBA{diag, flat} {
		if !regionHas(img, legend, c) {
			t.Errorf("legend: colour %v missing right of the frame", c)
		}
	}
	for _, step := range []float64{8.5, 9, 9.5} {
		if !colourNear(img, px(step), py(step/10), 2, diag) {
			t.Errorf("diag: no line pixel near (%d, %d) for step %g: something covers the top-right corner", px(step), py(step/10), step)
		}
	}
	// Tick labels and title are drawn in the text colour outside the frame.
	if !regionHas(img, image.Rect(0, top, left-4, bottom), textColor) {
		t.Error("no y tick labels left of the frame")
	}
	if !regionHas(img, image.Rect(left, bottom+4, right, 300), textColor) {
		t.Error("no x tick labels below the frame")
	}
	if !regionHas(img, image.Rect(0, 0, 400, top), textColor) {
		t.Error("no title above the frame")
	}
	// The second chart has no data: a frame and no series pixels.
	frame(t, img, image.Rect(0, 300, 400, 600))
	for _, c := range []color.RGBA{diag, flat} {
		if regionHas(img, image.Rect(0, 300, 400, 600), c) {
			t.Errorf("empty chart holds series colour %v", c)
		}
	}
}

func regionHas(img *image.RGBA, r image.Rectangle, c color.RGBA) bool {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if img.RGBAAt(x, y) == c {
				return true
			}
		}
	}
	return false
}

func TestCollectSeriesExpandsPrefixes(t *testing.T) {
	records := []Record{
		{Step: 1, Values: map[string]float64{"grad_norm/verifier": 1, "grad_norm/solver": 2, "reward/mean": 0}},
		{Step: 2, Values: map[string]float64{"grad_norm/solver": 3}},
	}
	got := collectSeries(records, []string{"grad_norm/*", "grad_norm/solver", "reward/mean"})
	var keys []string
	for _, s := range got {
		keys = append(keys, s.key)
	}
	if want := []string{"grad_norm/solver", "grad_norm/verifier", "reward/mean"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	mid := collectSeries([]Record{{Step: 1, Values: map[string]float64{
		"policy/solver/entropy": 1, "policy/verifier/entropy": 2, "policy/solver/loss": 3, "memory/0/peak_gib": 4, "memory/rollout_peak_gib": 5,
	}}}, []string{"policy/*/entropy", "memory/*"})
	keys = keys[:0]
	for _, s := range mid {
		keys = append(keys, s.key)
	}
	if want := []string{"policy/solver/entropy", "policy/verifier/entropy", "memory/0/peak_gib", "memory/rollout_peak_gib"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("patterns: keys %v, want %v", keys, want)
	}
	if v := got[1].ys; v[0] != 1 || !math.IsNaN(v[1]) {
		t.Errorf("verifier values %v, want [1 NaN]", v)
	}
}

func TestNiceTicks(t *testing.T) {
	cases := []struct {
		lo, hi   float64
		want     int
		integral bool
		ticks    []float64
	}{
		{0, 10, 6, false, []float64{0, 2, 4, 6, 8, 10}},
		{-0.05, 1.05, 6, false, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}},
		{0, 3, 8, true, []float64{0, 1, 2, 3}},
		{1, 100, 8, true, []float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}},
		{0, 0.003, 4, false, []float64{0, 0.001, 0.002, 0.003}},
		{-3, 3, 4, false, []float64{-2, 0, 2}},
	}
	for _, c := range cases {
		if got := niceTicks(c.lo, c.hi, c.want, c.integral); !reflect.DeepEqual(got, c.ticks) {
			t.Errorf("niceTicks(%g, %g, %d) = %v, want %v", c.lo, c.hi, c.want, got, c.ticks)
		}
	}
	for _, c := range []struct {
		v, step float64
		want    string
	}{{0.2, 0.2, "0.2"}, {0.05, 0.05, "0.05"}, {120, 20, "120"}, {2e6, 1e6, "2e+06"}} {
		if got := formatTick(c.v, c.step); got != c.want {
			t.Errorf("formatTick(%g, %g) = %q, want %q", c.v, c.step, got, c.want)
		}
	}
}

func TestPlotJSONLWritesPNG(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "metrics.jsonl")
	w, _, err := OpenJSONL(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	for step := 1; step <= 20; step++ {
		w.Write(Record{Step: step, Time: t0, Values: map[string]float64{
			"reward/mean":        1 - math.Exp(-float64(step)/6),
			"grad_norm/solver":   1.5 * math.Exp(-float64(step)/10),
			"grad_norm/verifier": 0.8 + 0.1*math.Sin(float64(step)),
		}})
	}
	w.Close()
	out := filepath.Join(dir, "metrics.png")
	charts := []Chart{{Title: "mean reward", Keys: []string{"reward/mean"}}, {Title: "grad norm", Keys: []string{"grad_norm/*"}}}
	if err := PlotJSONL(path, out, charts, PlotOptions{}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() != 960 || img.Bounds().Dy() != 520 {
		t.Errorf("PNG is %v, want 960x520", img.Bounds())
	}
	if os.Getenv("TROUPE_KEEP_PLOT") != "" {
		raw, _ := os.ReadFile(out)
		os.WriteFile(os.Getenv("TROUPE_KEEP_PLOT"), raw, 0o644)
	}
}

// Values that differ only by rounding once made the tick search loop forever
// (its float64 tick index stopped changing) and allocate until the process
// died; a two-line metrics file was enough.
func TestPlotValuesDifferingByRounding(t *testing.T) {
	done := make(chan error, 1)
	go func() {
		if ticks := niceTicks(-0.10000000000000005, -0.10000000000000002, 6, false); len(ticks) == 0 || len(ticks) > 24 {
			done <- fmt.Errorf("niceTicks over a rounding-sized range gave %d ticks", len(ticks))
			return
		}
		records := []Record{
			{Step: 1, Values: map[string]float64{"loss/solver": -0.10000000000000005}},
			{Step: 2, Values: map[string]float64{"loss/solver": -0.10000000000000002}},
		}
		_, err := Render(records, []Chart{{Keys: []string{"loss/*"}}}, PlotOptions{})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second): // a guard against the old endless loop, not a speed check
		t.Fatal("rendering two values that differ by rounding did not finish")
	}
}

// Optional charts without data are left out; a required one stays (and says
// "no data").
func TestOptionalChartsWithoutDataAreLeftOut(t *testing.T) {
	records := []Record{{Step: 1, Values: map[string]float64{"reward/mean": 1}}, {Step: 2, Values: map[string]float64{"reward/mean": 2}}}
	charts := []Chart{
		{Keys: []string{"reward/mean"}},
		{Keys: []string{"memory/*"}, Optional: true},
		{Keys: []string{"eval/accuracy"}},
	}
	img, err := Render(records, charts, PlotOptions{Width: 400, ChartHeight: 200})
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dy() != 400 {
		t.Fatalf("image height %d, want two charts of 200", img.Bounds().Dy())
	}
	if _, err := Render(records, charts[1:2], PlotOptions{}); err == nil {
		t.Fatal("a plot whose only chart is optional and empty was drawn")
	}
}

// A sparse series (evaluation every few steps) is joined across the steps
// that lack it.
func TestRenderJoinsSparseSeries(t *testing.T) {
	var records []Record
	for step := 0; step <= 10; step++ {
		r := Record{Step: step, Values: map[string]float64{"train": 0.9}}
		if step%5 == 0 {
			r.Values["eval"] = float64(step) / 10
		}
		records = append(records, r)
	}
	for _, sparse := range []bool{true, false} {
		img, err := Render(records, []Chart{{Title: "eval", Keys: []string{"eval", "train"}, YMin: 0, YMax: 1, Sparse: sparse}}, PlotOptions{Width: 400, ChartHeight: 300})
		if err != nil {
			t.Fatal(err)
		}
		left, right, top, bottom := frame(t, img, image.Rect(0, 0, 400, 300))
		px := func(step float64) int { return left + int(math.Round(step/10*float64(right-left))) }
		py := func(v float64) int { return bottom - int(math.Round(v*float64(bottom-top))) }
		for _, step := range []float64{1, 2.5, 4, 6, 8.5} {
			if got := colourNear(img, px(step), py(step/10), 2, seriesColors[0]); got != sparse {
				t.Errorf("sparse %v: line pixel near step %g: %v", sparse, step, got)
			}
		}
	}
}

// A band shades its series' range in a tint of the series' colour, under
// the line, between the low and high keys, which get no line of their own.
func TestRenderShadesBands(t *testing.T) {
	var records []Record
	for step := 0; step <= 10; step++ {
		records = append(records, Record{Step: step, Values: map[string]float64{"mean": 0.5, "lo": 0.3, "hi": 0.7}})
	}
	chart := Chart{Title: "band", Keys: []string{"mean"}, YMin: 0, YMax: 1, Bands: map[string][2]string{"mean": {"lo", "hi"}}}
	img, err := Render(records, []Chart{chart}, PlotOptions{Width: 400, ChartHeight: 300})
	if err != nil {
		t.Fatal(err)
	}
	left, right, top, bottom := frame(t, img, image.Rect(0, 0, 400, 300))
	px := func(step float64) int { return left + int(math.Round(step/10*float64(right-left))) }
	py := func(v float64) int { return bottom - int(math.Round(v*float64(bottom-top))) }
	shade := tint(seriesColors[0])
	for _, step := range []float64{1, 4.5, 7} { // off the grid lines
		for _, v := range []float64{0.33, 0.55, 0.67} {
			if got := img.RGBAAt(px(step), py(v)); got != shade {
				t.Errorf("step %g, value %g: pixel %v, want the band's tint %v", step, v, got, shade)
			}
		}
		for _, v := range []float64{0.2, 0.8} {
			if got := img.RGBAAt(px(step), py(v)); got == shade {
				t.Errorf("step %g, value %g: the band reaches outside [0.3, 0.7]", step, v)
			}
		}
		if !colourNear(img, px(step), py(0.5), 2, seriesColors[0]) {
			t.Errorf("step %g: the mean's line is not drawn over its band", step)
		}
	}
	if regionHas(img, image.Rect(left, top, right, bottom), seriesColors[1]) {
		t.Error("the band's low or high key got a line of its own")
	}
}

// A chart whose every series is flat (MAGRPO's amplification factor of 1,
// a KL of 0) is left out and named in a note under the charts; the same
// chart with a series that moves is drawn. Flat series of a chart that
// does not ask for it are drawn.
func TestConstantChartsBecomeANote(t *testing.T) {
	var records []Record
	for s := 1; s <= 5; s++ {
		records = append(records, Record{Step: s, Values: map[string]float64{
			"reward/mean": float64(s), "amplification/first": 1, "amplification/second": 1, "kl/first": 0, "kl/second": 0.01 * float64(s)}})
	}
	opt := PlotOptions{Width: 400, ChartHeight: 200}
	charts := []Chart{
		{Keys: []string{"reward/mean"}},
		{Title: "amplification", Keys: []string{"amplification/*"}, OmitIfConstant: true},
		{Title: "kl", Keys: []string{"kl/*"}, OmitIfConstant: true},
	}
	img, err := Render(records, charts, opt)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2*200 + 3*noteRow; img.Bounds().Dy() != want {
		t.Fatalf("image height %d, want two charts and a one-line note (%d)", img.Bounds().Dy(), want)
	}
	if v, ok := constant(collectSeries(records, []string{"amplification/*"})); !ok || v != "1" {
		t.Errorf("constant(amplification) = %q, %v; want 1", v, ok)
	}
	if _, ok := constant(collectSeries(records, []string{"kl/*"})); ok {
		t.Error("a moving series was taken for constant")
	}
	charts[1].OmitIfConstant = false
	if img, _ := Render(records, charts, opt); img.Bounds().Dy() != 3*200 {
		t.Fatalf("without OmitIfConstant the flat chart should be drawn: height %d", img.Bounds().Dy())
	}
}

// Series with the same value at every step (both agents of a joint reward)
// are one line whose legend names both; others stay apart.
func TestIdenticalSeriesShareALine(t *testing.T) {
	var records []Record
	for s := 1; s <= 4; s++ {
		records = append(records, Record{Step: s, Values: map[string]float64{"r/first": float64(s), "r/second": float64(s), "r/third": float64(-s)}})
	}
	lines := mergeIdentical(collectSeries(records, []string{"r/*"}))
	if len(lines) != 2 || lines[0].legend() != "r/first = r/second" || lines[1].legend() != "r/third" {
		var got []string
		for _, l := range lines {
			got = append(got, l.legend())
		}
		t.Fatalf("legends %q, want [r/first = r/second, r/third]", got)
	}
}

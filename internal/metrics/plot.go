// plot.go: line charts of metrics against step, stacked vertically in one
// PNG, drawn in pure Go (image/png, and x/image's 7×13 bitmap font).
//
// Each chart has a title, a framed plot area with grid lines at "nice" tick
// values (1, 2 or 5 × 10^k), tick labels on both axes, one coloured line per
// key, and a legend to the right of the plot area, where it covers no data. The x range is the
// steps present; the y range is the finite values present, padded by 5%,
// unless the chart fixes it. A missing or non-finite value breaks the line
// rather than being drawn as zero.
//
// What it deliberately is not: a plotting library. No log scales, no
// smoothing, no anti-aliasing; it exists so that a run can be looked at
// without Python.
package metrics

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"troupe/internal/atomicfile"
)

// Chart is one panel of a plot.
type Chart struct {
	Title string
	// Keys are metric keys; a key ending in "*" stands for every key with
	// that prefix ("grad_norm/*" → one line per agent), and a key with a
	// "*" elsewhere is a path.Match pattern ("policy/*/entropy"); matches
	// come in sorted order.
	Keys []string
	// YMin and YMax fix the y range when YMin < YMax; otherwise it fits
	// the data.
	YMin, YMax float64
	// Optional charts are left out when none of their keys has data (GPU
	// memory on a CPU run, evaluation when it is off).
	Optional bool
	// Sparse series are logged only on some steps (evaluation every k
	// steps): their points are joined across the steps without them,
	// where other series break their line at a missing value.
	Sparse bool
	// OmitIfConstant leaves the chart out when every series holds one value
	// at every step (a Dr. MAS amplification factor of 1 under another
	// estimator, a KL of 0 without a reference): a note under the charts
	// says so and gives the values, rather than a panel of flat lines.
	OmitIfConstant bool
	// Bands shades, around the series of a key, the range between two other
	// keys (its spread: the min and max over seeds), in a light tint of the
	// series' colour: key → [low key, high key]. The low and high keys are
	// not drawn as lines of their own.
	Bands map[string][2]string
}

// PlotOptions sizes the image.
type PlotOptions struct {
	Width       int // pixels; 0 means 960
	ChartHeight int // pixels per chart; 0 means 260
}

// Geometry of a panel, in pixels from the panel's corner.
const (
	marginLeft   = 64 // y tick labels
	marginRight  = 12
	legendGap    = 10 // between the plot area and the legend
	marginTop    = 22 // title
	marginBottom = 34 // x tick labels and the axis name
)

// Colours: the plot's furniture, and the series palette (Tableau 10).
var (
	backgroundColor = color.RGBA{255, 255, 255, 255}
	axisColor       = color.RGBA{0, 0, 0, 255}
	gridColor       = color.RGBA{225, 225, 225, 255}
	textColor       = color.RGBA{30, 30, 30, 255}
	seriesColors    = []color.RGBA{
		{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
		{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
		{188, 189, 34, 255}, {23, 190, 207, 255},
	}
)

// PlotJSONL reads a metrics file and writes charts of it to pngPath
// (atomically).
func PlotJSONL(jsonlPath, pngPath string, charts []Chart, opts PlotOptions) error {
	records, err := ReadJSONL(jsonlPath)
	if err != nil {
		return err
	}
	img, err := Render(records, charts, opts)
	if err != nil {
		return fmt.Errorf("metrics: plotting %s: %w", jsonlPath, err)
	}
	if err := atomicfile.Write(pngPath, func(w io.Writer) error { return png.Encode(w, img) }); err != nil {
		return fmt.Errorf("metrics: writing %s: %w", pngPath, err)
	}
	return nil
}

// series is one line of a chart: a key's values by step.
type series struct {
	key    string
	label  string // the legend's text: the key, or the keys of identical series drawn as one
	color  color.RGBA
	steps  []float64
	ys     []float64 // NaN where the record lacks the key
	lo, hi []float64 // the band around it (Chart.Bands), nil without one
}

// Render draws the charts, one below the other, from records.
func Render(records []Record, charts []Chart, opts PlotOptions) (*image.RGBA, error) {
	if len(charts) == 0 {
		return nil, fmt.Errorf("no charts requested")
	}
	if opts.Width == 0 {
		opts.Width = 960
	}
	if opts.ChartHeight == 0 {
		opts.ChartHeight = 260
	}
	if opts.Width < marginLeft+marginRight+40 || opts.ChartHeight < marginTop+marginBottom+40 {
		return nil, fmt.Errorf("image too small: %dx%d per chart, want at least %dx%d",
			opts.Width, opts.ChartHeight, marginLeft+marginRight+40, marginTop+marginBottom+40)
	}
	sorted := append([]Record(nil), records...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Step < sorted[j].Step })

	type panel struct {
		chart Chart
		lines []series
	}
	var panels []panel
	var notes []string // the charts left out as constant
	for _, c := range charts {
		lines := collectSeries(sorted, c.Keys)
		for i := range lines {
			if b, ok := c.Bands[lines[i].key]; ok {
				lines[i].lo, lines[i].hi = column(sorted, b[0]), column(sorted, b[1])
			}
		}
		if _, ys := dataBounds(lines); c.Optional && math.IsInf(ys[0], 0) {
			continue
		}
		if v, ok := constant(lines); ok && c.OmitIfConstant {
			notes = append(notes, fmt.Sprintf("%s: %s at every step (chart left out)", c.Title, v))
			continue
		}
		panels = append(panels, panel{c, mergeIdentical(lines)})
	}
	if len(panels) == 0 {
		return nil, fmt.Errorf("none of the charts has data")
	}
	notesHeight := 0
	if len(notes) > 0 {
		notesHeight = 2*noteRow + len(notes)*noteRow
	}
	img := image.NewRGBA(image.Rect(0, 0, opts.Width, opts.ChartHeight*len(panels)+notesHeight))
	fillRect(img, img.Bounds(), backgroundColor)
	for i, p := range panels {
		rect := image.Rect(0, i*opts.ChartHeight, opts.Width, (i+1)*opts.ChartHeight)
		drawChart(img, rect, p.chart, p.lines)
	}
	y := opts.ChartHeight*len(panels) + noteRow
	for _, n := range notes {
		drawText(img, marginLeft, y+11, n, textColor)
		y += noteRow
	}
	return img, nil
}

// noteRow is the height of a line of the notes under the charts.
const noteRow = 16

// constant reports whether every finite value of every series is the same
// up to rounding, and that value as text ("1", or "0 and 1" when series
// differ but each is flat). Series without a finite value are not constant.
func constant(lines []series) (string, bool) {
	var values []float64
	for _, s := range lines {
		first, seen := 0.0, false
		for _, y := range s.ys {
			if !finite(y) {
				continue
			}
			if !seen {
				first, seen = y, true
			} else if math.Abs(y-first) > 1e-12*math.Max(1, math.Abs(first)) {
				return "", false
			}
		}
		if !seen {
			return "", false
		}
		if !slices.ContainsFunc(values, func(v float64) bool { return math.Abs(v-first) <= 1e-12*math.Max(1, math.Abs(v)) }) {
			values = append(values, first)
		}
	}
	if len(values) == 0 {
		return "", false
	}
	text := make([]string, len(values))
	for i, v := range values {
		text[i] = strconv.FormatFloat(v, 'g', 4, 64)
	}
	return strings.Join(text, " and "), true
}

// mergeIdentical draws series that hold the same values at every step as
// one line, its legend naming them all ("reward/agent/first =
// reward/agent/second"): otherwise the later line hides the earlier one.
func mergeIdentical(lines []series) []series {
	var out []series
	for _, s := range lines {
		if s.label == "" {
			s.label = s.key
		}
		merged := false
		for i := range out {
			if out[i].lo == nil && s.lo == nil && sameValues(out[i].ys, s.ys) {
				out[i].label += " = " + s.key
				merged = true
				break
			}
		}
		if !merged {
			out = append(out, s)
		}
	}
	return out
}

// sameValues: a and b hold equal values, and missing ones, at every step.
func sameValues(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.IsNaN(a[i]) != math.IsNaN(b[i]) || (!math.IsNaN(a[i]) && a[i] != b[i]) {
			return false
		}
	}
	return true
}

// collectSeries expands the chart's keys (prefix patterns included) into
// series over the records.
func collectSeries(records []Record, keys []string) []series {
	var names []string
	seen := map[string]bool{}
	for _, k := range keys {
		matched := []string{k}
		if strings.Contains(k, "*") {
			prefix, trailing := strings.CutSuffix(k, "*")
			trailing = trailing && !strings.Contains(prefix, "*")
			set := map[string]bool{}
			for _, r := range records {
				for name := range r.Values {
					if ok, _ := path.Match(k, name); ok || (trailing && strings.HasPrefix(name, prefix)) {
						set[name] = true
					}
				}
			}
			matched = matched[:0]
			for name := range set {
				matched = append(matched, name)
			}
			sort.Strings(matched)
		}
		for _, name := range matched {
			if !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	out := make([]series, len(names))
	for i, name := range names {
		out[i].key = name
		out[i].color = seriesColors[i%len(seriesColors)]
		for _, r := range records {
			v, ok := r.Values[name]
			if !ok {
				v = math.NaN()
			}
			out[i].steps = append(out[i].steps, float64(r.Step))
			out[i].ys = append(out[i].ys, v)
		}
	}
	return out
}

// column is one key's value in every record (NaN where it is missing).
func column(records []Record, key string) []float64 {
	out := make([]float64, len(records))
	for i, r := range records {
		v, ok := r.Values[key]
		if !ok {
			v = math.NaN()
		}
		out[i] = v
	}
	return out
}

// over is c laid over what is there, one part to three: a band's tint, in
// which the grid and other bands still show.
func over(c, under color.RGBA) color.RGBA {
	mix := func(a, b uint8) uint8 { return uint8((uint16(a) + 3*uint16(b)) / 4) }
	return color.RGBA{mix(c.R, under.R), mix(c.G, under.G), mix(c.B, under.B), 255}
}

// tint is the colour of c's band over the background.
func tint(c color.RGBA) color.RGBA { return over(c, backgroundColor) }

// drawBand tints, column by column, the range between s.lo and s.hi,
// linearly between consecutive steps where both are finite (across
// missing steps too when sparse).
func drawBand(img *image.RGBA, area image.Rectangle, s series, xAxis, yAxis axisRange, sparse bool) {
	// tintColumn lays the band's colour over rows y0…y1 of column x
	tintColumn := func(x, y0, y1 int) {
		for y := y0; y <= y1; y++ {
			img.SetRGBA(x, y, over(s.color, img.RGBAAt(x, y)))
		}
	}
	prev := -1
	for j := range s.steps {
		if !finite(s.lo[j]) || !finite(s.hi[j]) {
			if !sparse {
				prev = -1
			}
			continue
		}
		if prev < 0 {
			prev = j
			x := xAxis.pixel(s.steps[j])
			tintColumn(x, max(yAxis.pixel(s.hi[j]), area.Min.Y), min(yAxis.pixel(s.lo[j]), area.Max.Y-1))
			continue
		}
		x0, x1 := xAxis.pixel(s.steps[prev]), xAxis.pixel(s.steps[j])
		for x := x0 + 1; x <= x1; x++ { // column x0 is the previous point's
			t := 0.0
			if x1 > x0 {
				t = float64(x-x0) / float64(x1-x0)
			}
			lo := s.lo[prev] + t*(s.lo[j]-s.lo[prev])
			hi := s.hi[prev] + t*(s.hi[j]-s.hi[prev])
			if x >= area.Min.X && x < area.Max.X {
				tintColumn(x, max(yAxis.pixel(hi), area.Min.Y), min(yAxis.pixel(lo), area.Max.Y-1))
			}
		}
		prev = j
	}
}

// axisRange is a data interval mapped onto a pixel interval.
type axisRange struct {
	lo, hi   float64 // data
	p0, p1   int     // pixels: lo maps to p0, hi to p1
	integral bool    // ticks at whole numbers only (steps)
}

func (a axisRange) pixel(v float64) int {
	return a.p0 + int(math.Round((v-a.lo)/(a.hi-a.lo)*float64(a.p1-a.p0)))
}

func drawChart(img *image.RGBA, panel image.Rectangle, c Chart, lines []series) {
	right := panel.Max.X - marginRight
	if w := legendWidth(lines); w > 0 && panel.Dx()-marginLeft-marginRight-w-legendGap >= 100 {
		right -= w + legendGap // the legend gets a column of its own
	}
	area := image.Rect(panel.Min.X+marginLeft, panel.Min.Y+marginTop, right, panel.Max.Y-marginBottom)
	title := c.Title
	if title == "" {
		title = strings.Join(c.Keys, ", ")
	}
	drawText(img, panel.Min.X+marginLeft, panel.Min.Y+15, title, textColor)

	xs, ys := dataBounds(lines)
	if c.YMin < c.YMax {
		ys = [2]float64{c.YMin, c.YMax}
	} else if !math.IsInf(ys[0], 0) {
		pad := 0.05 * (ys[1] - ys[0])
		// Values that differ only by rounding (-0.10000000000000005 and
		// -0.10000000000000002) are drawn as a constant.
		if pad <= 1e-12*math.Max(math.Abs(ys[0]), math.Abs(ys[1])) {
			pad = 0
		}
		if pad == 0 {
			pad = math.Max(0.5*math.Abs(ys[0]), 0.5)
		}
		ys = [2]float64{ys[0] - pad, ys[1] + pad}
	}
	if math.IsInf(xs[0], 0) { // no data at all
		xs, ys = [2]float64{0, 1}, [2]float64{0, 1}
	}
	if xs[0] == xs[1] {
		xs = [2]float64{xs[0] - 1, xs[1] + 1}
	}
	xAxis := axisRange{lo: xs[0], hi: xs[1], p0: area.Min.X, p1: area.Max.X - 1, integral: true}
	yAxis := axisRange{lo: ys[0], hi: ys[1], p0: area.Max.Y - 1, p1: area.Min.Y}

	for _, t := range niceTicks(xAxis.lo, xAxis.hi, 8, true) {
		px := xAxis.pixel(t)
		vline(img, px, area.Min.Y, area.Max.Y-1, gridColor)
		vline(img, px, area.Max.Y, area.Max.Y+3, axisColor)
		label := formatTick(t, 1)
		drawText(img, px-textWidth(label)/2, area.Max.Y+16, label, textColor)
	}
	yTicks := niceTicks(yAxis.lo, yAxis.hi, 6, false)
	yStep := 1.0
	if len(yTicks) > 1 {
		yStep = yTicks[1] - yTicks[0]
	}
	for _, t := range yTicks {
		py := yAxis.pixel(t)
		hline(img, area.Min.X, area.Max.X-1, py, gridColor)
		hline(img, area.Min.X-4, area.Min.X-1, py, axisColor)
		label := formatTick(t, yStep)
		drawText(img, area.Min.X-6-textWidth(label), py+4, label, textColor)
	}
	drawText(img, area.Max.X-textWidth("step"), panel.Max.Y-4, "step", textColor)

	for _, s := range lines { // the bands first, under every line
		if s.lo != nil {
			drawBand(img, area, s, xAxis, yAxis, c.Sparse)
		}
	}
	for _, s := range lines {
		col := s.color
		prevOK := false
		var px0, py0 int
		for j := range s.steps {
			y := s.ys[j]
			if !finite(y) {
				prevOK = prevOK && c.Sparse
				continue
			}
			px, py := xAxis.pixel(s.steps[j]), yAxis.pixel(y)
			if c.Sparse {
				// every point of a sparse series gets a dot, lines or not
				fillRect(img, image.Rect(px-2, py-2, px+3, py+3).Intersect(area), col)
			}
			if prevOK {
				thickLine(img, area, px0, py0, px, py, col)
			} else if j+1 == len(s.ys) || !finite(s.ys[j+1]) {
				// An isolated point: a 3×3 dot, since there is no line.
				fillRect(img, image.Rect(px-1, py-1, px+2, py+2).Intersect(area), col)
			}
			px0, py0, prevOK = px, py, true
		}
	}
	var present []series
	var missing []string
	for _, s := range lines {
		if _, ys := dataBounds([]series{s}); math.IsInf(ys[0], 0) {
			missing = append(missing, s.key)
		} else {
			present = append(present, s)
		}
	}
	if len(missing) > 0 || len(lines) == 0 {
		drawText(img, area.Min.X+8, area.Min.Y+20, "no data: "+strings.Join(missing, ", "), textColor)
	}
	// The frame last, so that lines at the range edges do not hide it.
	hline(img, area.Min.X, area.Max.X-1, area.Max.Y-1, axisColor)
	vline(img, area.Min.X, area.Min.Y, area.Max.Y-1, axisColor)
	hline(img, area.Min.X, area.Max.X-1, area.Min.Y, axisColor)
	vline(img, area.Max.X-1, area.Min.Y, area.Max.Y-1, axisColor)
	drawLegend(img, area, present)
}

// dataBounds returns the step range and the finite value range of the
// series; ±Inf bounds when there is no finite value.
func dataBounds(lines []series) (xs, ys [2]float64) {
	xs = [2]float64{math.Inf(1), math.Inf(-1)}
	ys = xs
	for _, s := range lines {
		for j, y := range s.ys {
			if !finite(y) {
				continue
			}
			xs[0], xs[1] = math.Min(xs[0], s.steps[j]), math.Max(xs[1], s.steps[j])
			ys[0], ys[1] = math.Min(ys[0], y), math.Max(ys[1], y)
			if s.lo != nil && finite(s.lo[j]) && finite(s.hi[j]) {
				ys[0], ys[1] = math.Min(ys[0], s.lo[j]), math.Max(ys[1], s.hi[j])
			}
		}
	}
	return xs, ys
}

const legendRow, legendSwatch, legendPad = 15, 14, 6

// legendWidth is the width of the legend box of lines (0 for none).
func legendWidth(lines []series) int {
	if len(lines) == 0 {
		return 0
	}
	width := 0
	for _, s := range lines {
		width = max(width, textWidth(s.legend()))
	}
	return legendPad + legendSwatch + legendPad + width + legendPad
}

// drawLegend draws a box right of the area (inside its top-right corner
// when the panel is too narrow for a column) with a colour swatch and the
// key of every series.
func drawLegend(img *image.RGBA, area image.Rectangle, lines []series) {
	if len(lines) == 0 {
		return
	}
	w := legendWidth(lines)
	x0 := area.Max.X + legendGap
	if x0+w > img.Bounds().Max.X {
		x0 = area.Max.X - 1 - legendPad - w
	}
	box := image.Rect(x0, area.Min.Y, x0+w, area.Min.Y+legendPad+len(lines)*legendRow+legendPad)
	fillRect(img, box, backgroundColor)
	strokeRect(img, box, gridColor)
	for i, s := range lines {
		y := box.Min.Y + legendPad + i*legendRow
		fillRect(img, image.Rect(box.Min.X+legendPad, y+5, box.Min.X+legendPad+legendSwatch, y+8), s.color)
		drawText(img, box.Min.X+legendPad+legendSwatch+legendPad, y+11, s.legend(), textColor)
	}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// legend is the series' legend text.
func (s series) legend() string {
	if s.label != "" {
		return s.label
	}
	return s.key
}

// raster.go: the drawing primitives under plot.go — axis-aligned lines and
// rectangles, a 2-pixel Bresenham line clipped to the plot area, bitmap
// text, and tick placement.
package metrics

import (
	"image"
	"image/color"
	"math"
	"strconv"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

func fillRect(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.SetRGBA(x, y, c)
		}
	}
}

func strokeRect(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	hline(img, r.Min.X, r.Max.X-1, r.Min.Y, c)
	hline(img, r.Min.X, r.Max.X-1, r.Max.Y-1, c)
	vline(img, r.Min.X, r.Min.Y, r.Max.Y-1, c)
	vline(img, r.Max.X-1, r.Min.Y, r.Max.Y-1, c)
}

// hline draws x0..x1 (inclusive) at row y.
func hline(img *image.RGBA, x0, x1, y int, c color.RGBA) {
	for x := x0; x <= x1; x++ {
		img.SetRGBA(x, y, c) // SetRGBA ignores points outside the image
	}
}

// vline draws y0..y1 (inclusive) at column x.
func vline(img *image.RGBA, x, y0, y1 int, c color.RGBA) {
	for y := y0; y <= y1; y++ {
		img.SetRGBA(x, y, c)
	}
}

// thickLine draws a line from (x0,y0) to (x1,y1) two pixels wide (the
// Bresenham pixel and its neighbour across the line's minor axis), keeping
// only pixels inside clip.
func thickLine(img *image.RGBA, clip image.Rectangle, x0, y0, x1, y1 int, c color.RGBA) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	steep := -dy > dx
	errTerm := dx + dy
	for {
		plot(img, clip, x0, y0, c)
		if steep {
			plot(img, clip, x0+1, y0, c)
		} else {
			plot(img, clip, x0, y0+1, c)
		}
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * errTerm
		if e2 >= dy {
			errTerm += dy
			x0 += sx
		}
		if e2 <= dx {
			errTerm += dx
			y0 += sy
		}
	}
}

func plot(img *image.RGBA, clip image.Rectangle, x, y int, c color.RGBA) {
	if (image.Point{X: x, Y: y}).In(clip) {
		img.SetRGBA(x, y, c)
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// drawText draws s with its baseline at y, starting at x.
func drawText(img *image.RGBA, x, y int, s string, c color.RGBA) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

func textWidth(s string) int {
	return font.MeasureString(basicfont.Face7x13, s).Round()
}

// niceTicks returns tick values inside [lo, hi] spaced by 1, 2 or 5 × 10^k,
// the spacing whose tick count is closest to want. integral ticks are whole
// numbers at least 1 apart.
func niceTicks(lo, hi float64, want int, integral bool) []float64 {
	if !(hi > lo) || want < 2 || !finite(lo) || !finite(hi) {
		return []float64{lo}
	}
	mag := math.Pow(10, math.Floor(math.Log10((hi-lo)/float64(want-1))))
	count := func(step float64) int { return int(math.Floor(hi/step) - math.Ceil(lo/step) + 1) }
	best := 0.0
	for _, m := range []float64{1, 2, 5, 10} {
		if best == 0 || abs(count(m*mag)-want) < abs(count(best*mag)-want) {
			best = m
		}
	}
	// Tick i is i·best·mag; for mag < 1 divide by 1/mag, an exact integer,
	// so that 0.6 prints as 0.6 and not 0.6000000000000001.
	value := func(i float64) float64 {
		if mag < 1 {
			return i * best / math.Round(1/mag)
		}
		return i * best * mag
	}
	step := best * mag
	if integral && step < 1 {
		step, mag, best = 1, 1, 1
	}
	// A range far below the values' own precision (two values that differ
	// only by rounding) would need ticks whose indices float64 cannot count:
	// the index stops changing under i++. Fall back to the two ends.
	first, last := math.Ceil(lo/step), math.Floor((hi+step*1e-9)/step)
	if !(last-first < 4*float64(want)) || first+1 == first || last-1 == last {
		return []float64{lo, hi}
	}
	var out []float64
	for k := 0.0; first+k <= last; k++ {
		v := value(first + k)
		if v == 0 {
			v = 0 // no "-0"
		}
		out = append(out, v)
	}
	return out
}

// formatTick prints v with as many decimals as the tick spacing needs.
func formatTick(v, step float64) string {
	decimals := 0
	if step > 0 && step < 1 {
		decimals = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	if math.Abs(v) >= 1e6 || (v != 0 && math.Abs(v) < 1e-4) {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

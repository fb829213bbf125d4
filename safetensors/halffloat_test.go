package safetensors

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Known bit patterns, from the IEEE 754 binary16 and bfloat16 definitions.
func TestBF16KnownPatterns(t *testing.T) {
	cases := []struct {
		in   float32
		want uint16
	}{
		{1.0, 0x3F80},
		{-1.0, 0xBF80},
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{3.140625, 0x4049},                         // exactly representable
		{float32(math.Pi), 0x4049},                 // 3.14159… rounds down to 3.140625
		{2, 0x4000},                                //
		{0.5, 0x3F00},                              //
		{65280, 0x477F},                            // exactly representable
		{math.MaxFloat32, 0x7F80},                  // rounds past the largest bf16 → +Inf
		{float32(math.Inf(1)), 0x7F80},             //
		{float32(math.Inf(-1)), 0xFF80},            //
		{math.Float32frombits(0x3F808000), 0x3F80}, // 1+2^-8: tie, even stays
		{math.Float32frombits(0x3F818000), 0x3F82}, // 1+3·2^-8: tie, odd rounds up
		{math.Float32frombits(0x3F808001), 0x3F81}, // just above the tie
		{math.Float32frombits(0x3F807FFF), 0x3F80}, // just below the tie
		{math.Float32frombits(0x00000001), 0x0000}, // smallest f32 subnormal → 0
		{math.Float32frombits(0x00010000), 0x0001}, // smallest bf16 subnormal
		{math.Float32frombits(0x7F7F8000), 0x7F80}, // tie at the top: odd 0x7F7F rounds up to Inf
	}
	for _, c := range cases {
		if got := Float32ToBF16(c.in); got != c.want {
			t.Errorf("Float32ToBF16(%g = %#08x) = %#04x, want %#04x", c.in, math.Float32bits(c.in), got, c.want)
		}
	}
	for _, nan := range []float32{float32(math.NaN()), math.Float32frombits(0xFFC00001), math.Float32frombits(0x7F800001)} {
		if got := Float32ToBF16(nan); got != 0x7FC0 {
			t.Errorf("Float32ToBF16(NaN %#08x) = %#04x, want the canonical 0x7FC0", math.Float32bits(nan), got)
		}
	}
}

func TestF16KnownPatterns(t *testing.T) {
	cases := []struct {
		in   float32
		want uint16
	}{
		{1.0, 0x3C00},
		{-2.0, 0xC000},
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{65504, 0x7BFF},                           // largest finite half
		{65519, 0x7BFF},                           // below the midpoint to 65536
		{65520, 0x7C00},                           // the midpoint: ties to even = Inf
		{1e6, 0x7C00},                             //
		{-1e6, 0xFC00},                            //
		{float32(math.Inf(1)), 0x7C00},            //
		{0.333251953125, 0x3555},                  // exactly representable
		{float32(1.0 / 3.0), 0x3555},              // nearest to 1/3
		{float32(math.Ldexp(1, -14)), 0x0400},     // smallest normal
		{float32(math.Ldexp(1, -24)), 0x0001},     // smallest subnormal
		{float32(math.Ldexp(1, -25)), 0x0000},     // half of it: tie, even = 0
		{float32(math.Ldexp(3, -26)), 0x0001},     // 0.75 · 2^-24 → 2^-24
		{float32(math.Ldexp(3, -25)), 0x0002},     // 1.5 · 2^-24: tie, odd 1 → 2
		{float32(math.Ldexp(5, -25)), 0x0002},     // 2.5 · 2^-24: tie, even 2 stays
		{float32(math.Ldexp(1023, -24)), 0x03FF},  // largest subnormal
		{float32(math.Ldexp(2047, -25)), 0x0400},  // rounds up into the smallest normal
		{float32(math.Ldexp(1, -30)), 0x0000},     // far below: ±0
		{float32(-math.Ldexp(1, -30)), 0x8000},    //
		{1 + float32(math.Ldexp(1, -11)), 0x3C00}, // tie, even stays
		{1 + float32(math.Ldexp(3, -11)), 0x3C02}, // tie, odd rounds up
	}
	for _, c := range cases {
		if got := Float32ToF16(c.in); got != c.want {
			t.Errorf("Float32ToF16(%g = %#08x) = %#04x, want %#04x", c.in, math.Float32bits(c.in), got, c.want)
		}
	}
	if got := Float32ToF16(float32(math.NaN())); got&0x7FFF != 0x7E00 {
		t.Errorf("Float32ToF16(NaN) = %#04x, want a quiet NaN 0x7E00", got)
	}
	if got := Float32ToF16(math.Float32frombits(0xFFC00000)); got != 0xFE00 {
		t.Errorf("Float32ToF16(-NaN) = %#04x, want 0xFE00 (sign kept)", got)
	}
}

// Widening is exact and narrowing undoes it for every non-NaN pattern.
func TestHalfRoundTripAllPatterns(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		b := uint16(i)
		if f := BF16ToFloat32(b); f == f {
			if back := Float32ToBF16(f); back != b {
				t.Fatalf("bf16 %#04x → %g → %#04x", b, f, back)
			}
		} else if math.Float32bits(f)>>16 != uint32(b) {
			t.Fatalf("bf16 NaN %#04x widened to %#08x, payload lost", b, math.Float32bits(f))
		}
		if f := F16ToFloat32(b); f == f {
			if back := Float32ToF16(f); back != b {
				t.Fatalf("f16 %#04x → %g → %#04x", b, f, back)
			}
		}
	}
	if got := F16ToFloat32(0x0001); got != float32(math.Ldexp(1, -24)) {
		t.Errorf("F16ToFloat32(0x0001) = %g, want 2^-24", got)
	}
	if got := F16ToFloat32(0xFBFF); got != -65504 {
		t.Errorf("F16ToFloat32(0xFBFF) = %g, want -65504", got)
	}
}

// nearestReference rounds x to a 16-bit format independently of the code
// under test: it scans the two candidate patterns around x (found by
// bisection over the ordered non-negative patterns), compares distances in
// float64 and breaks ties to the even pattern. maxFinite is the largest
// finite pattern; values at or past the midpoint to the next power go to
// Inf, as IEEE rounding does.
func nearestReference(x float32, widen func(uint16) float32, maxFinite, inf uint16) uint16 {
	sign := uint16(0)
	v := float64(x)
	if v < 0 {
		sign, v = 0x8000, -v
	}
	// Patterns 0..maxFinite are ordered by value for non-negative numbers.
	lo, hi := uint16(0), maxFinite
	if v >= float64(widen(maxFinite)) {
		top := float64(widen(maxFinite))
		ulp := top - float64(widen(maxFinite-1))
		if v >= top+ulp/2 {
			return sign | inf
		}
		return sign | maxFinite
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if float64(widen(mid)) <= v {
			lo = mid
		} else {
			hi = mid
		}
	}
	dl, dh := v-float64(widen(lo)), float64(widen(hi))-v
	switch {
	case dl < dh:
		return sign | lo
	case dh < dl:
		return sign | hi
	case lo%2 == 0:
		return sign | lo
	default:
		return sign | hi
	}
}

func TestHalfRoundingAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200_000; i++ {
		x := math.Float32frombits(rng.Uint32())
		if x != x {
			continue
		}
		if want := nearestReference(x, BF16ToFloat32, 0x7F7F, 0x7F80); Float32ToBF16(x) != want {
			t.Fatalf("Float32ToBF16(%g = %#08x) = %#04x, reference %#04x", x, math.Float32bits(x), Float32ToBF16(x), want)
		}
		// Bias toward the f16 range so that most samples are not ±Inf or 0.
		y := float32(math.Ldexp(rng.Float64()*2-1, rng.IntN(44)-28))
		for _, v := range []float32{x, y} {
			if want := nearestReference(v, F16ToFloat32, 0x7BFF, 0x7C00); Float32ToF16(v) != want {
				t.Fatalf("Float32ToF16(%g = %#08x) = %#04x, reference %#04x", v, math.Float32bits(v), Float32ToF16(v), want)
			}
		}
	}
}

func TestEncodeDecodeFloat32s(t *testing.T) {
	values := []float32{1, -2.5, 0.1, 1000}
	for _, d := range []DType{F32, F64, F16, BF16} {
		raw, err := EncodeFloat32s(d, values)
		if err != nil {
			t.Fatal(err)
		}
		if len(raw) != len(values)*d.Size() {
			t.Fatalf("%v: %d bytes, want %d", d, len(raw), len(values)*d.Size())
		}
		back, err := DecodeFloat32s(d, raw)
		if err != nil {
			t.Fatal(err)
		}
		for i := range values {
			tol := map[DType]float64{F32: 0, F64: 0, F16: 1.0 / 1024, BF16: 1.0 / 128}[d]
			if math.Abs(float64(back[i]-values[i])) > tol*math.Abs(float64(values[i])) {
				t.Errorf("%v: value %d: %g → %g, beyond relative tolerance %g", d, i, values[i], back[i], tol)
			}
		}
	}
	// Little-endian layout: bf16 1.0 is 0x3F80 → bytes 80 3F.
	raw, _ := EncodeFloat32s(BF16, []float32{1})
	if raw[0] != 0x80 || raw[1] != 0x3F {
		t.Errorf("bf16 1.0 encoded as % x, want 80 3f", raw)
	}
	if _, err := EncodeFloat32s(I32, values); err == nil {
		t.Error("EncodeFloat32s(I32) succeeded, want an error")
	}
	if _, err := DecodeFloat32s(F32, []byte{1, 2, 3}); err == nil {
		t.Error("DecodeFloat32s of 3 bytes as F32 succeeded, want an error")
	}
}

func BenchmarkFloat32ToBF16(b *testing.B) {
	xs := make([]float32, 4096)
	for i := range xs {
		xs[i] = float32(i) * 0.001
	}
	b.SetBytes(int64(len(xs) * 4))
	var sink uint16
	for b.Loop() {
		for _, x := range xs {
			sink ^= Float32ToBF16(x)
		}
	}
	_ = sink
}

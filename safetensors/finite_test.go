package safetensors

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

// encode writes vals in dtype d: F32 and F64 exactly, BF16 as the top half
// of the F32 bits, F16 by the package's own converter.
func encode(t *testing.T, d DType, vals []float64) []byte {
	t.Helper()
	var out []byte
	for _, v := range vals {
		switch d {
		case F32:
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(float32(v)))
		case F64:
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(v))
		case BF16:
			out = binary.LittleEndian.AppendUint16(out, uint16(math.Float32bits(float32(v))>>16))
		case F16:
			out = binary.LittleEndian.AppendUint16(out, f16bits(v))
		}
	}
	return out
}

// f16bits is binary16 for the values the test uses (normal, 0, ±Inf, NaN).
func f16bits(v float64) uint16 {
	switch {
	case math.IsNaN(v):
		return 0x7e00
	case math.IsInf(v, 1):
		return 0x7c00
	case math.IsInf(v, -1):
		return 0xfc00
	case v == 0:
		return 0
	}
	sign := uint16(0)
	if v < 0 {
		sign, v = 0x8000, -v
	}
	frac, exp := math.Frexp(v) // v = frac·2^exp, frac in [0.5, 1)
	return sign | uint16(exp+14)<<10 | uint16((frac*2-1)*1024)
}

func TestFirstNonFiniteEveryPositionAndDType(t *testing.T) {
	for _, d := range []DType{BF16, F16, F32, F64} {
		for _, n := range []int{1, 3, 4, 5, 8, 13} {
			clean := make([]float64, n)
			for i := range clean {
				clean[i] = float64(i%7) - 3.25 // finite, with large and negative values among them
				if i%5 == 4 {
					clean[i] = 65000 // F16's largest range: every exponent bit but one
				}
			}
			if i, _ := FirstNonFinite(d, encode(t, d, clean)); i != -1 {
				t.Fatalf("%v n=%d: finite data reported non-finite at %d", d, n, i)
			}
			for pos := 0; pos < n; pos++ {
				for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
					vals := append([]float64(nil), clean...)
					vals[pos] = bad
					i, what := FirstNonFinite(d, encode(t, d, vals))
					want := map[bool]string{true: "NaN"}[math.IsNaN(bad)]
					if want == "" {
						want = map[bool]string{true: "+Inf", false: "-Inf"}[bad > 0]
					}
					if i != int64(pos) || what != want {
						t.Fatalf("%v n=%d: %v at %d reported as %s at %d", d, n, bad, pos, what, i)
					}
				}
			}
		}
	}
}

func TestCheckWeightNamesTheTensor(t *testing.T) {
	ints := make([]byte, 16)
	for _, d := range []DType{I32, I64, U8, Bool, I8, F8E4M3} {
		err := CheckWeight("model.embed_tokens.weight", d, ints)
		if err == nil || !strings.Contains(err.Error(), "model.embed_tokens.weight is stored as "+d.String()) || !strings.Contains(err.Error(), "floating point") {
			t.Errorf("%v: %v", d, err)
		}
	}
	bad := encode(t, BF16, []float64{1, 2, math.NaN(), 4})
	err := CheckWeight("model.norm.weight", BF16, bad)
	if err == nil || !strings.Contains(err.Error(), "model.norm.weight holds NaN at element 2 of 4") {
		t.Errorf("NaN: %v", err)
	}
	if err := CheckWeight("w", F32, encode(t, F32, []float64{1, -1e38, 3e38})); err != nil {
		t.Errorf("finite F32 refused: %v", err)
	}
}

func BenchmarkFirstNonFinite(b *testing.B) {
	data := make([]byte, 64<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for i := 0; i < len(data); i += 2 {
		data[i+1] &= 0x3f // keep every BF16 exponent below all-ones
	}
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		if j, _ := FirstNonFinite(BF16, data); j != -1 {
			b.Fatal(j)
		}
	}
}

package safetensors

import (
	"strings"
	"testing"
)

func TestDTypeNamesAndSizes(t *testing.T) {
	want := map[string]int{ // header name → bits, from the format's dtype table
		"BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8,
		"F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "I16": 16, "U16": 16,
		"F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32, "C64": 64,
		"F64": 64, "I64": 64, "U64": 64,
	}
	seen := 0
	for d := Bool; d < numDTypes; d++ {
		bits, ok := want[d.String()]
		if !ok {
			t.Errorf("dtype %v is not in the format's table", d)
			continue
		}
		seen++
		if d.Bits() != bits {
			t.Errorf("%v.Bits() = %d, want %d", d, d.Bits(), bits)
		}
		if wantSize := bits / 8; bits%8 == 0 && d.Size() != wantSize {
			t.Errorf("%v.Size() = %d, want %d", d, d.Size(), wantSize)
		}
		back, err := ParseDType(d.String())
		if err != nil || back != d {
			t.Errorf("ParseDType(%q) = %v, %v", d.String(), back, err)
		}
	}
	if seen != len(want) {
		t.Errorf("%d dtypes known, the table has %d", seen, len(want))
	}
	if F4.Size() != 0 {
		t.Errorf("F4.Size() = %d, want 0 (sub-byte)", F4.Size())
	}
	for _, bad := range []string{"f32", "FLOAT32", "", "F8"} {
		if _, err := ParseDType(bad); err == nil || !strings.Contains(err.Error(), "BF16") {
			t.Errorf("ParseDType(%q) error = %v, want an error listing the known dtypes", bad, err)
		}
	}
}

func TestByteSize(t *testing.T) {
	cases := []struct {
		d     DType
		shape []int64
		want  int64
		err   string
	}{
		{F32, []int64{2, 3}, 24, ""},
		{BF16, nil, 2, ""},          // 0-d
		{I64, []int64{0, 5}, 0, ""}, // empty
		{F4, []int64{4}, 2, ""},     // 4 × 4 bits
		{F6E2M3, []int64{4}, 3, ""}, // 4 × 6 bits
		{F4, []int64{3}, 0, "whole bytes"},
		{F32, []int64{-1}, 0, "negative"},
		{U8, []int64{1 << 40, 1 << 40}, 0, "overflows"},
		{F64, []int64{1 << 61}, 0, "overflows"},
		{invalidDType, []int64{1}, 0, "invalid dtype"},
	}
	for _, c := range cases {
		got, err := ByteSize(c.d, c.shape)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ByteSize(%v, %v) error = %v, want one containing %q", c.d, c.shape, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ByteSize(%v, %v) = %d, %v; want %d", c.d, c.shape, got, err, c.want)
		}
	}
}

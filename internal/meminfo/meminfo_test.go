package meminfo

import (
	"strings"
	"testing"
)

// MemTotal in kB becomes bytes; a listing without it, or with a value that
// is not a count, is 0 (unknown); this machine's is positive.
func TestTotal(t *testing.T) {
	for _, c := range []struct {
		text string
		want int64
	}{
		{"MemTotal:       24576000 kB\nMemFree:         1000 kB\n", 24576000 << 10},
		{"MemFree:         1000 kB\nMemTotal: 8 kB\n", 8 << 10},
		{"MemFree:         1000 kB\n", 0},
		{"MemTotal: lots kB\n", 0},
		{"", 0},
	} {
		if got := parseTotal(strings.NewReader(c.text)); got != c.want {
			t.Errorf("%q: %d, want %d", c.text, got, c.want)
		}
	}
	if n := Total(); n <= 0 {
		t.Fatalf("this machine's MemTotal: %d", n)
	}
}

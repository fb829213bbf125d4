package bench

import (
	"strings"
	"testing"
)

// Sizes the device cannot hold, or the model cannot take, are refused
// before anything is allocated; sizes that fit pass.
func TestCheckSizes(t *testing.T) {
	cfg, err := ParseShape("tiny")
	if err != nil {
		t.Fatal(err)
	}
	ok := Options{Batches: []int{1, 8}, PromptLen: 64, NewTokens: 32, UpdateRows: 8, UpdateLen: 256, Reps: 3}
	const gib = 1 << 30
	if err := CheckSizes(cfg, 4, ok, gib, "cpu"); err != nil {
		t.Fatalf("a small bench on 1 GiB: %v", err)
	}
	for _, c := range []struct {
		edit func(*Options)
		want string
	}{
		{func(o *Options) { o.Reps = 0 }, "--reps must be ≥ 1"},
		{func(o *Options) { o.Batches = []int{1, 100_000_000} }, "--batch 100000000: the weights and the KV cache of 100000000 rows × 96 tokens need at least"},
		{func(o *Options) { o.UpdateRows = 100_000_000 }, "--update-rows 100000000 × --update-len 256: the update needs at least"},
		{func(o *Options) { o.PromptLen = 1 << 20 }, "tokens per row, but the model has"},
		{func(o *Options) { o.Batches = []int{0} }, "every size must be ≥ 1"},
	} {
		o := ok
		o.Batches = append([]int(nil), ok.Batches...)
		c.edit(&o)
		if err := CheckSizes(cfg, 4, o, gib, "cpu"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", o, err, c.want)
		}
	}
}

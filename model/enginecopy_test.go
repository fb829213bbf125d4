package model

import (
	"math"
	"slices"
	"strings"
	"testing"

	"troupe/torch"
)

func sameBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// TestEngineCopyFollowsItsRefreshes: the copy computes the model's logits
// bit for bit; when the model's weights change the copy keeps the old
// ones until RefreshFrom, after which it computes the new logits, with its
// version bumped. Qwen3 (untied head) and Llama (tied head, MLP biases).
func TestEngineCopyFollowsItsRefreshes(t *testing.T) {
	noLeaks(t)
	seq := []int{1, 5, 9, 20, 13, 40, 7}
	for _, f := range []Family{Qwen3, Llama} {
		m, err := New(tinyConfig(f), 3, cpu32)
		if err != nil {
			t.Fatal(err)
		}
		c, err := m.EngineCopy()
		if err != nil {
			t.Fatal(err)
		}
		before := rowLogits(t, m, seq)
		if !sameBits(rowLogits(t, c, seq), before) {
			t.Fatalf("%v: the engine copy's logits differ from the model's", f)
		}
		torch.NoGrad(func() {
			for _, p := range m.Params() {
				scoped(func() { p.T.CopyFrom(p.T.MulScalar(1.01).AddScalar(0.01)) })
			}
		})
		after := rowLogits(t, m, seq)
		if sameBits(after, before) {
			t.Fatalf("%v: changing the weights did not change the logits", f)
		}
		if !sameBits(rowLogits(t, c, seq), before) {
			t.Fatalf("%v: the engine copy followed the model before any refresh", f)
		}
		v := c.Version()
		if err := c.RefreshFrom(m); err != nil {
			t.Fatal(err)
		}
		if !sameBits(rowLogits(t, c, seq), after) {
			t.Fatalf("%v: after the refresh the engine copy's logits differ from the model's", f)
		}
		if c.Version() <= v {
			t.Errorf("%v: the refresh did not bump the copy's version (%d → %d)", f, v, c.Version())
		}
		c.Free()
		m.Free()
	}
}

// TestEngineCopyRefusals: a refresh from a model of another layout, and a
// copy of an adapter's view, are refused naming what differs.
func TestEngineCopyRefusals(t *testing.T) {
	noLeaks(t)
	q := newTiny(t, Qwen3, 1, cpu32)
	l := newTiny(t, Llama, 1, cpu32)
	if err := q.RefreshFrom(l); err == nil || !strings.Contains(err.Error(), "refresh of an engine copy") {
		t.Errorf("a refresh from another layout: %v", err)
	}
	a, err := q.NewAdapter(LoRAConfig{Rank: 2, Alpha: 4, Targets: []string{"q_proj"}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Free()
	if _, err := a.Model().EngineCopy(); err == nil || !strings.Contains(err.Error(), "adapter's view") {
		t.Errorf("a copy of an adapter's view: %v", err)
	}
}

package policy

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"troupe/torch"
)

func TestPackMasksResponsePredecessors(t *testing.T) {
	checkLeaks(t)
	seqs := []Sequence{
		{Agent: "a", Prompt: []int{5, 6, 7}, Response: []int{8, 9}, Advantage: 1},    // P=3, R=2: mask at 2, 3
		{Agent: "b", Prompt: []int{4}, Response: []int{1, 2, 3, 4}, Advantage: -0.5}, // P=1, R=4: mask at 0..3
	}
	for _, layout := range layouts {
		b, err := layout.build(seqs, torch.CPU)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Free()
		wantMask := []bool{
			false, false, true, true, false,
			true, true, true, true, false,
		}
		if got := b.Mask.Bools(); !reflect.DeepEqual(got, wantMask) {
			t.Fatalf("%s: mask %v, want %v", layout.name, got, wantMask)
		}
		// at every masked position the target is the response token
		if got := maskedTargets(b); !reflect.DeepEqual(got, [][]int64{{8, 9}, {1, 2, 3, 4}}) {
			t.Fatalf("%s: targets under the mask %v", layout.name, got)
		}
		if adv := b.Advantages.Float64s(); !reflect.DeepEqual(adv, []float64{1, -0.5}) || !slices.Equal(b.Advantages.Shape(), []int64{2, 1}) {
			t.Fatalf("%s: advantages %v %v", layout.name, adv, b.Advantages.Shape())
		}
		if !reflect.DeepEqual(b.Tokens, []int{2, 4}) {
			t.Fatalf("%s: tokens %v", layout.name, b.Tokens)
		}
	}
}

var layouts = []struct {
	name  string
	build func([]Sequence, torch.Device) (Batch, error)
}{{"packed", Pack}, {"padded", Pad}}

// maskedTargets lists each row's targets at its masked positions.
func maskedTargets(b Batch) [][]int64 {
	shape := b.Mask.Shape()
	B, T := int(shape[0]), int(shape[1])
	out := make([][]int64, B)
	targets := b.Targets.Int64s()
	if b.packed == nil {
		mask := b.Mask.Bools()
		for i := range B * T {
			if mask[i] {
				out[i/T] = append(out[i/T], targets[i])
			}
		}
		return out
	}
	pm, idx := b.packedMask.Bools(), b.index.Int64s()
	for k := range pm {
		if pm[k] {
			out[int(idx[k])/T] = append(out[int(idx[k])/T], targets[k])
		}
	}
	return out
}

// A row's loss mask removes its excluded response tokens from the batch mask
// (and from the token count) and leaves the targets where they were.
func TestPackHonoursLossMask(t *testing.T) {
	checkLeaks(t)
	seqs := []Sequence{
		{Agent: "a", Prompt: []int{5, 6}, Response: []int{7, 8, 9, 1}, Mask: []bool{true, false, false, true}},
		{Agent: "a", Prompt: []int{2}, Response: []int{3}},
	}
	for _, layout := range layouts {
		b, err := layout.build(seqs, torch.CPU)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Free()
		want := []bool{
			false, true, false, false, true, false,
			true, false, false, false, false, false,
		}
		if got := b.Mask.Bools(); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: mask %v, want %v", layout.name, got, want)
		}
		if !reflect.DeepEqual(b.Tokens, []int{2, 1}) {
			t.Fatalf("%s: trained tokens %v, want [2 1]", layout.name, b.Tokens)
		}
		if got := maskedTargets(b); !reflect.DeepEqual(got, [][]int64{{7, 1}, {3}}) {
			t.Fatalf("%s: targets under the mask %v: the masked-in positions must predict 7 and 1, then 3", layout.name, got)
		}
	}
}

func TestCheckSequences(t *testing.T) {
	good := Sequence{Agent: "a", Prompt: []int{1}, Response: []int{2}, Advantage: 0.5}
	if err := CheckSequences([]Sequence{good}, []string{"a"}, 10); err != nil {
		t.Fatal(err)
	}
	nan := good
	nan.Advantage = math.NaN()
	cases := []struct {
		s    Sequence
		want string
	}{
		{Sequence{Agent: "x", Prompt: []int{1}, Response: []int{2}}, `agent "x" is not trained by this model`},
		{Sequence{Agent: "a", Response: []int{2}}, "empty prompt"},
		{Sequence{Agent: "a", Prompt: []int{1}}, "empty response"},
		{Sequence{Agent: "a", Prompt: []int{1}, Response: []int{2, 10}}, "response token 1 is id 10, outside the model's vocabulary [0, 10)"},
		{Sequence{Agent: "a", Prompt: []int{-1}, Response: []int{2}}, "prompt token 0 is id -1"},
		{nan, "advantage is NaN"},
		{Sequence{Agent: "a", Prompt: []int{1}, Response: []int{2, 3}, Mask: []bool{true}}, "loss mask has 1 entries for 2 response tokens"},
		{Sequence{Agent: "a", Prompt: []int{1}, Response: []int{2, 3}, Mask: []bool{false, false}}, "excludes every response token"},
	}
	for _, c := range cases {
		err := CheckSequences([]Sequence{good, c.s}, []string{"a"}, 10)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "sequence 1") {
			t.Errorf("%+v: got %v, want an error about sequence 1 containing %q", c.s, err, c.want)
		}
	}
}

func TestSplitPartitionsDeterministically(t *testing.T) {
	for _, c := range []struct{ n, updates, micro int }{{10, 3, 2}, {7, 1, 3}, {2, 5, 1}, {16, 4, 4}} {
		a := Split(c.n, c.updates, c.micro, 42, 3)
		if !reflect.DeepEqual(a, Split(c.n, c.updates, c.micro, 42, 3)) {
			t.Fatalf("%+v: split is not deterministic", c)
		}
		if want := min(c.updates, c.n); len(a) != want {
			t.Fatalf("%+v: %d mini-batches, want %d", c, len(a), want)
		}
		var all []int
		sizes := map[int]bool{}
		for _, mini := range a {
			size := 0
			for _, micro := range mini {
				if len(micro) == 0 || len(micro) > c.micro {
					t.Fatalf("%+v: micro-batch of %d rows", c, len(micro))
				}
				size += len(micro)
				all = append(all, micro...)
			}
			sizes[size] = true
		}
		if len(sizes) > 2 {
			t.Fatalf("%+v: mini-batch sizes %v differ by more than one", c, sizes)
		}
		slices.Sort(all)
		for i, r := range all {
			if r != i {
				t.Fatalf("%+v: rows %v are not a permutation of 0..%d", c, all, c.n-1)
			}
		}
	}
	if reflect.DeepEqual(Split(16, 1, 16, 42, 3), Split(16, 1, 16, 42, 4)) {
		t.Fatal("the order does not depend on the step")
	}
}

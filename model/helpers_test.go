package model

import (
	"math"
	"strings"
	"testing"

	"troupe/torch"
)

var cpu32 = Options{DType: torch.Float32, Device: torch.CPU}

// tinyConfig is a small model with the features of the family: GQA, and for
// Qwen3 a head_dim that is not hidden/heads. A larger init range than
// transformers' default makes the logits far from uniform, so a wrong
// computation shows.
func tinyConfig(f Family) Config {
	c := Config{Family: f, VocabSize: 64, HiddenSize: 32, IntermediateSize: 48, NumLayers: 2,
		NumHeads: 4, NumKVHeads: 2, HeadDim: 8, RopeTheta: 10000, RMSNormEps: 1e-6,
		MaxPositions: 128, InitializerRange: 0.2}
	switch f {
	case Qwen2:
		c.AttentionBias = true
	case Qwen3:
		c.HeadDim = 16
		c.RopeTheta = 1e6
	case Llama:
		// llama3 scaling whose three bands all hold some of the 8
		// frequencies (wavelengths 2π … 2π·θ^(7/8) against 32/4 and 32/1),
		// and MLP biases so that every path carries them
		c.HeadDim = 16
		c.RopeTheta = 5e5
		c.RopeScaling = &RopeScaling{Type: "llama3", Factor: 8, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMaxPositions: 32}
		c.MLPBias = true
		c.TieEmbeddings = true
	case Mistral:
		c.RopeTheta = 1e6
	}
	return c
}

func newTiny(t *testing.T, f Family, seed uint64, opt Options) *Model {
	t.Helper()
	m, err := New(tinyConfig(f), seed, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Free)
	return m
}

func noLeaks(t *testing.T) {
	t.Helper()
	before := torch.LiveTensors()
	t.Cleanup(func() {
		if after := torch.LiveTensors(); after != before {
			t.Errorf("live tensors: %d before, %d after", before, after)
		}
	})
}

func scoped(fn func()) {
	s := torch.NewScope()
	defer s.Close()
	fn()
}

func relErr(got, want []float32) float64 {
	num, den := 0.0, 0.0
	for i := range got {
		d := float64(got[i] - want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	return math.Sqrt(num / math.Max(den, 1e-30))
}

func maxAbs(got, want []float32) float64 {
	m := 0.0
	for i := range got {
		m = math.Max(m, math.Abs(float64(got[i]-want[i])))
	}
	return m
}

// rowLogits returns the (T, V) logits of one unpadded sequence.
func rowLogits(t *testing.T, m *Model, seq []int) []float32 {
	t.Helper()
	var out []float32
	scoped(func() {
		in, err := Pack([][]int{seq}, PadRight, m.Device())
		if err != nil {
			t.Fatal(err)
		}
		lg, err := m.Logits(in)
		if err != nil {
			t.Fatal(err)
		}
		out = lg.Float32s()
	})
	return out
}

// redraw overwrites in place, as an optimizer step or a resume does, every
// weight of m whose checkpoint key match accepts with shift + scale·N(0, 1)
// (seeded), and returns how many it wrote.
func redraw(m *Model, seed uint64, match func(key string) bool, scale, shift float64) int {
	gen := torch.NewGenerator(torch.CPU, seed)
	defer gen.Free()
	n := 0
	for _, p := range m.Params() {
		if !match(p.Name) {
			continue
		}
		torch.NoGrad(func() {
			scoped(func() {
				p.T.CopyFrom(torch.Randn(p.T.Shape(), torch.Float32, torch.CPU, gen).MulScalar(scale).AddScalar(shift).ToDType(p.T.DType()))
			})
		})
		n++
	}
	return n
}

// distinctNorms draws every RMSNorm weight of m from 1 + 0.3·N(0, 1): a
// fresh model's are all one, under which mixing up two norms (Qwen3's
// q_norm and k_norm) would go unseen.
func distinctNorms(t *testing.T, m *Model, seed uint64) {
	t.Helper()
	if redraw(m, seed, func(key string) bool { return strings.HasSuffix(key, "norm.weight") }, 0.3, 1) == 0 {
		t.Fatal("distinctNorms: no norm weights found")
	}
	m.MarkUpdated()
}

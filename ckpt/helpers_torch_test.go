package ckpt

import (
	"bytes"
	"fmt"
	"sort"
	"testing"

	"troupe/model"
	"troupe/torch"
)

// tinyConfig is a two-layer Qwen3 small enough to train on CPU in
// milliseconds; its vocabulary covers a byte-level tokenizer without merges
// (256 bytes + 5 added tokens).
func tinyConfig() model.Config {
	eos := 258
	return model.Config{Family: model.Qwen3, VocabSize: 272, HiddenSize: 32, IntermediateSize: 48,
		NumLayers: 2, NumHeads: 4, NumKVHeads: 2, HeadDim: 8, RopeTheta: 10000, RMSNormEps: 1e-6,
		MaxPositions: 128, InitializerRange: 0.02, EOSTokenIDs: []int{eos}}
}

func newModel(t *testing.T, cfg model.Config, seed uint64, dt torch.DType) *model.Model {
	t.Helper()
	m, err := model.New(cfg, seed, model.Options{DType: dt, Device: torch.CPU})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Free)
	return m
}

// weightBytes is every weight's raw bytes by name.
func weightBytes(m *model.Model) map[string][]byte {
	out := map[string][]byte{}
	for _, p := range m.Params() {
		out[p.Name] = p.T.Bytes()
	}
	return out
}

// optimizerDump is every parameter's state as comparable bytes.
func optimizerDump(opt *torch.AdamW) []string {
	s := torch.NewScope()
	defer s.Close()
	var out []string
	for i := range opt.Params() {
		st := opt.State(i)
		line := fmt.Sprintf("%d step=%d", i, st.Step)
		for _, t := range []*torch.Tensor{st.ExpAvg, st.ExpAvgSq, st.Master} {
			if t == nil {
				line += " -"
				continue
			}
			line += fmt.Sprintf(" %x", t.Bytes())
		}
		out = append(out, line)
	}
	return out
}

// diffBytes returns the names whose bytes differ between a and b.
func diffBytes(a, b map[string][]byte) []string {
	var out []string
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	if len(a) != len(b) {
		out = append(out, fmt.Sprintf("(%d vs %d tensors)", len(a), len(b)))
	}
	return out
}

// checkNoLeak fails the test if fn leaves torch tensors alive.
func checkNoLeak(t *testing.T, what string, fn func()) {
	t.Helper()
	before := torch.LiveTensors()
	fn()
	if after := torch.LiveTensors(); after != before {
		t.Errorf("%s: %d live tensors before, %d after", what, before, after)
	}
}

package model

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"testing"

	"troupe/torch"
)

// Static batches (the layout CUDA graphs replay; eager on CPU) give the
// plain path's outputs: rows join and leave buckets of fixed sizes, idle
// rows fill the rest, and mixed adapter routes and sampling modes key their
// own buckets.
func TestEngineStaticBatchesMatchPlain(t *testing.T) {
	noLeaks(t)
	for _, f := range families {
		m := newTiny(t, f, 65, cpu32)
		name := string(f) + " static"
		reqs := engineRequests()
		e := newEngine(t, m, EngineConfig{SlotLen: 32, MaxSlots: 5, SyncEvery: 3, StaticBatches: true})
		runAgainstPlain(t, m, e, name, reqs)
		// one by one, then a next turn through the prefix cache
		for i, r := range reqs[:3] {
			runAgainstPlain(t, m, e, fmt.Sprintf("%s alone %d", name, i), []EngineRequest{r})
		}
		if got := len(e.static); got < 3 {
			t.Fatalf("%s: %d buckets used, want several (batches of 5, 4, 3, 2, 1 rows)", name, got)
		}
		// graphs asked for on CPU: the same static batches, run eagerly
		g := newEngine(t, m, EngineConfig{SlotLen: 32, MaxSlots: 8, SyncEvery: 4, CUDAGraphs: true})
		a1, a2 := newAdapter(t, m, loraCfg(21)), newAdapter(t, m, loraCfg(22, "v_proj", "down_proj"))
		mixed := engineRequests()
		for i := range mixed {
			mixed[i].Adapter = []*Adapter{a1, a2, nil, a2, a1, a1, a2, nil}[i]
		}
		runAgainstPlain(t, m, g, name+" mixed adapters", mixed)
		if st := g.Stats(); st.Graphs != 0 || st.GraphReplays != 0 || g.GraphError() != nil {
			t.Fatalf("%s: on CPU: %d graphs, %d replays, error %v; want none", name, st.Graphs, st.GraphReplays, g.GraphError())
		}
	}
}

// Sampled rows draw the same tokens in static batches as in exact ones: a
// row's draws depend on its seed, not on the idle rows padding its batch.
func TestEngineStaticBatchesSampleTheSame(t *testing.T) {
	noLeaks(t)
	m := newTiny(t, Qwen3, 66, cpu32)
	var reqs []EngineRequest
	for i, p := range [][]int{{1, 2, 3}, {4, 5}, {6, 7, 8, 9}, {1, 2, 3}, {10}} {
		s := Sampling{Temperature: 0.9}
		if i%2 == 1 {
			s.TopK, s.TopP = 7, 0.85
		}
		reqs = append(reqs, EngineRequest{GenRequest: GenRequest{Prompt: p, MaxNewTokens: 4 + 2*i, Sampling: s}, Seed: uint64(40 + i)})
	}
	exact := newEngine(t, m, EngineConfig{SlotLen: 32, MaxSlots: 3, SyncEvery: 2})
	static := newEngine(t, m, EngineConfig{SlotLen: 32, MaxSlots: 3, SyncEvery: 2, StaticBatches: true})
	want, err := exact.Generate(reqs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := static.Generate(reqs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range reqs {
		if !slices.Equal(got[i].Tokens, want[i].Tokens) || maxAbs(got[i].LogProbs, want[i].LogProbs) > 1e-5 {
			t.Fatalf("request %d: static %v %v, exact %v %v", i, got[i].Tokens, got[i].LogProbs, want[i].Tokens, want[i].LogProbs)
		}
	}
}

// On a GPU (TROUPE_CUDA=1): decode steps replayed from CUDA graphs give
// what the same static batches give eagerly (the same kernels on the same
// shapes: the same tokens, log-probs within 1e-3), in bf16, for greedy and sampled rows, a prefix-cached
// next turn, and batches that shrink through several buckets.
func TestCUDAGraphsEqualEagerStaticBatches(t *testing.T) {
	if os.Getenv("TROUPE_CUDA") != "1" || !torch.CUDAAvailable() {
		t.Skip("set TROUPE_CUDA=1 on a GPU machine")
	}
	if !torch.GraphsSupported() {
		t.Fatal("this shim was built without CUDA graphs (see scripts/gpu/build-shim.sh's output)")
	}
	dev := torch.CUDA(0)
	runtime.LockOSThread() // captures need one OS thread from enter to exit
	defer runtime.UnlockOSThread()
	for _, f := range families {
		m := newTiny(t, f, 67, Options{DType: torch.BFloat16, Device: dev})
		reqs := engineRequests()
		for i := range reqs {
			if i%2 == 1 {
				reqs[i].Sampling = Sampling{Temperature: 0.8, TopP: 0.9}
			}
		}
		eager := newEngine(t, m, EngineConfig{SlotLen: 48, MaxSlots: 5, SyncEvery: 4, StaticBatches: true})
		graphs := newEngine(t, m, EngineConfig{SlotLen: 48, MaxSlots: 5, SyncEvery: 4, CUDAGraphs: true})
		for turn := range 2 {
			want, err := eager.Generate(reqs)
			if err != nil {
				t.Fatal(err)
			}
			got, err := graphs.Generate(reqs)
			if err != nil {
				t.Fatal(err)
			}
			if err := graphs.GraphError(); err != nil {
				t.Fatal(err)
			}
			for i := range reqs {
				if !slices.Equal(got[i].Tokens, want[i].Tokens) || maxAbs(got[i].LogProbs, want[i].LogProbs) > 1e-3 || got[i].Finish != want[i].Finish {
					t.Fatalf("%s turn %d request %d: graphs %v %v, eager %v %v", f, turn, i, got[i].Tokens, got[i].LogProbs, want[i].Tokens, want[i].LogProbs)
				}
			}
			for i := range reqs { // the next turn extends this one's prompt and response
				reqs[i].Prompt = slices.Concat(reqs[i].Prompt, want[i].Tokens, []int{5})
			}
		}
		if st := graphs.Stats(); st.Graphs < 2 || st.GraphReplays < st.Graphs {
			t.Fatalf("%s: %d graphs captured, %d replays: want several buckets captured and replayed", f, st.Graphs, st.GraphReplays)
		}
		t.Logf("%s: %d graphs, %d of %d decode steps replayed", f, graphs.Stats().Graphs, graphs.Stats().GraphReplays, graphs.Stats().DecodeSteps)
	}
}

// Dropping a generation of graphs (Release between rollout and update, or a
// weight change) retires their memory pool: libtorch refuses to capture into
// a pool whose graphs were all freed, so the next capture must take a new
// one. The CPU half of TestCUDAGraphsCaptureAgain.
func TestDroppedGraphsRetireTheirPool(t *testing.T) {
	m := newTiny(t, families[0], 68, cpu32)
	e := newEngine(t, m, EngineConfig{SlotLen: 32, MaxSlots: 2, SyncEvery: 2, StaticBatches: true})
	if _, err := e.Generate(engineRequests()[:2]); err != nil {
		t.Fatal(err)
	}
	e.poolMade = true // as a capture on CUDA leaves it
	e.Release()
	if e.poolMade {
		t.Fatal("Release kept the graph pool of the graphs it freed")
	}
	if _, err := e.Generate(engineRequests()[:2]); err != nil {
		t.Fatal(err)
	}
	e.poolMade = true
	m.MarkUpdated()
	e.syncWeights()
	if e.poolMade {
		t.Fatal("a weight change dropped the graphs but kept their pool")
	}
}

// On a GPU (TROUPE_CUDA=1): graphs are captured again, not switched off,
// after the engine's memory is released (as between every rollout and
// update) and after the weights change (every optimizer step), and the
// re-captured graphs give what the eager static batches give with the new
// weights.
func TestCUDAGraphsCaptureAgain(t *testing.T) {
	if os.Getenv("TROUPE_CUDA") != "1" || !torch.CUDAAvailable() {
		t.Skip("set TROUPE_CUDA=1 on a GPU machine")
	}
	if !torch.GraphsSupported() {
		t.Fatal("this shim was built without CUDA graphs (see scripts/gpu/build-shim.sh's output)")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, f := range families {
		m := newTiny(t, f, 69, Options{DType: torch.BFloat16, Device: torch.CUDA(0)})
		reqs := engineRequests()
		for i := range reqs {
			if i%2 == 1 {
				reqs[i].Sampling = Sampling{Temperature: 0.8, TopP: 0.9}
			}
		}
		eager := newEngine(t, m, EngineConfig{SlotLen: 48, MaxSlots: 5, SyncEvery: 4, StaticBatches: true})
		graphs := newEngine(t, m, EngineConfig{SlotLen: 48, MaxSlots: 5, SyncEvery: 4, CUDAGraphs: true})
		round := func(what string) {
			t.Helper()
			before := graphs.Stats()
			want, err := eager.Generate(reqs)
			if err != nil {
				t.Fatal(err)
			}
			got, err := graphs.Generate(reqs)
			if err != nil {
				t.Fatal(err)
			}
			if err := graphs.GraphError(); err != nil {
				t.Fatalf("%s %s: %v", f, what, err)
			}
			after := graphs.Stats()
			if after.Graphs <= before.Graphs || after.GraphReplays <= before.GraphReplays {
				t.Fatalf("%s %s: graphs %d → %d, replays %d → %d: want new graphs captured and replayed", f, what,
					before.Graphs, after.Graphs, before.GraphReplays, after.GraphReplays)
			}
			for i := range reqs {
				if !slices.Equal(got[i].Tokens, want[i].Tokens) || maxAbs(got[i].LogProbs, want[i].LogProbs) > 1e-3 || got[i].Finish != want[i].Finish {
					t.Fatalf("%s %s request %d: graphs %v %v, eager %v %v", f, what, i, got[i].Tokens, got[i].LogProbs, want[i].Tokens, want[i].LogProbs)
				}
			}
			t.Logf("%s %s: %d graphs, %d replays so far", f, what, after.Graphs, after.GraphReplays)
		}
		round("first rollout")
		graphs.Release()
		eager.Release()
		round("after Release")
		torch.NoGrad(func() { // an optimizer step: new values in the same tensors
			for _, blk := range m.Layers {
				scoped(func() { blk.Attn.K.W.CopyFrom(blk.Attn.K.W.MulScalar(1.5)) })
			}
		})
		m.MarkUpdated()
		round("after a weight update")
	}
}

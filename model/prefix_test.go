package model

import (
	"fmt"
	"slices"
	"testing"

	"troupe/torch"
)

// plainGreedy is the plain path's output for each request.
func plainGreedy(t *testing.T, m *Model, reqs []EngineRequest) []GenResult {
	t.Helper()
	out := make([]GenResult, len(reqs))
	for i, r := range reqs {
		v := m
		if r.Adapter != nil {
			v = r.Adapter.Model()
		}
		res, err := v.Generate([]GenRequest{r.GenRequest}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = res[0]
	}
	return out
}

// run generates reqs on e and checks every output against the plain path;
// it returns the outputs and how many prompt tokens the engine reused.
func runAgainstPlain(t *testing.T, m *Model, e *Engine, what string, reqs []EngineRequest) ([]GenResult, int) {
	t.Helper()
	before := e.Stats().ReusedTokens
	got, err := e.Generate(reqs)
	if err != nil {
		t.Fatal(err)
	}
	want := plainGreedy(t, m, reqs)
	for i, r := range reqs {
		v := m
		if r.Adapter != nil {
			v = r.Adapter.Model()
		}
		sameOrNearTie(t, v, fmt.Sprintf("%s request %d", what, i), r.Prompt, got[i], want[i])
	}
	return got, e.Stats().ReusedTokens - before
}

func cat(parts ...[]int) []int { return slices.Concat(parts...) }

// The prefix cache: a conversation's next turn reuses the keys and values
// of the turn before it (in place), a prompt sharing part of another slot's
// content copies that part, a system prompt shared by requests admitted
// together is computed once, and a running row's prompt is copied from its
// slot — and every output equals the plain path's. The counts of reused
// tokens are worked out by hand from the placement rules in prefix.go.
func TestEnginePrefixCacheReusesAndMatchesPlain(t *testing.T) {
	noLeaks(t)
	for _, f := range families {
		m := newTiny(t, f, 61, cpu32)
		name := string(f)
		e := newEngine(t, m, EngineConfig{SlotLen: 48, MaxSlots: 2, SyncEvery: 3})
		p1, p2 := []int{3, 14, 15, 9, 26, 5}, []int{2, 7, 18, 28, 18}
		turn1, reused := runAgainstPlain(t, m, e, name+" turn 1", []EngineRequest{
			{GenRequest: greedy(p1, 5)}, {GenRequest: greedy(p2, 5)},
		})
		if reused != 0 {
			t.Fatalf("%s turn 1: %d tokens reused from an empty cache", name, reused)
		}
		a, b := turn1[0].Tokens, turn1[1].Tokens
		if len(a) != 5 || len(b) != 5 {
			t.Fatalf("%s: turn 1 made %d and %d tokens, want 5 each (no stop ids)", name, len(a), len(b))
		}
		z := (b[3] + 1) % m.Config.VocabSize // differs from the response's 4th token
		// slot 0 holds p1+a[:4], slot 1 p2+b[:4]
		//  r1 extends slot 0's whole content: in place, 6+4 = 10 reused
		//  r2 shares p2+b[:3] with slot 1, the only free slot: 8 kept there
		//  r3 waits; then shares p1[:4] with slot 0 (least recently used): 4
		_, reused = runAgainstPlain(t, m, e, name+" turn 2", []EngineRequest{
			{GenRequest: greedy(cat(p1, a, []int{40, 41}), 4)},
			{GenRequest: greedy(cat(p2, b[:3], []int{z}), 4)},
			{GenRequest: greedy(cat(p1[:4], []int{33, 34}), 4)},
		})
		if reused != 10+8+4 {
			t.Fatalf("%s turn 2: %d prompt tokens reused, want 22 (10 in place, 8 kept, 4 kept)", name, reused)
		}

		// a system prompt shared by requests admitted together: the second
		// copies it from the first within the same prefill (7 reused), the
		// third waits and finds it in a retired slot (7)
		sys := []int{50, 51, 52, 53, 54, 55, 56}
		_, reused = runAgainstPlain(t, m, e, name+" system prompt", []EngineRequest{
			{GenRequest: greedy(cat(sys, []int{60}), 3)},
			{GenRequest: greedy(cat(sys, []int{61, 62}), 3)},
			{GenRequest: greedy(cat(sys, []int{63}), 3)},
		})
		if reused != 7+7 {
			t.Fatalf("%s system prompt: %d reused, want 14", name, reused)
		}

		// a chain within one prefill: the third copies 9 tokens from the
		// second, whose first 7 are themselves copied from the first
		e3 := newEngine(t, m, EngineConfig{SlotLen: 48, MaxSlots: 3, SyncEvery: 3})
		_, reused = runAgainstPlain(t, m, e3, name+" chain", []EngineRequest{
			{GenRequest: greedy(cat(sys, []int{60}), 3)},
			{GenRequest: greedy(cat(sys, []int{61, 62, 63}), 3)},
			{GenRequest: greedy(cat(sys, []int{61, 62, 40}), 3)},
		})
		if reused != 7+9 {
			t.Fatalf("%s chain: %d reused, want 16", name, reused)
		}

		// copied from a running row's slot
		e2 := newEngine(t, m, EngineConfig{SlotLen: 48, MaxSlots: 2, SyncEvery: 2})
		long := []int{9, 8, 7, 6, 5, 4, 3, 2, 1}
		first := EngineRequest{GenRequest: greedy(long, 12)}
		id, err := e2.Submit(first)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e2.Step(); err != nil {
			t.Fatal(err)
		}
		second := EngineRequest{GenRequest: greedy(cat(long[:7], []int{60, 61}), 4)}
		if _, err := e2.Submit(second); err != nil {
			t.Fatal(err)
		}
		got := map[int]GenResult{}
		for e2.Pending() > 0 {
			done, err := e2.Step()
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range done {
				got[c.ID] = c.GenResult
			}
		}
		want := plainGreedy(t, m, []EngineRequest{first, second})
		sameOrNearTie(t, m, name+" running row", first.Prompt, got[id], want[0])
		sameOrNearTie(t, m, name+" copied from a running row", second.Prompt, got[id+1], want[1])
		if st := e2.Stats(); st.ReusedTokens != 7 {
			t.Fatalf("%s: %d tokens reused from the running row, want 7", name, st.ReusedTokens)
		}
	}
}

// With the cache off, nothing is reused but identical prompts admitted
// together, and the outputs are the same.
func TestEnginePrefixCacheOff(t *testing.T) {
	noLeaks(t)
	m := newTiny(t, Qwen2, 62, cpu32)
	e := newEngine(t, m, EngineConfig{SlotLen: 32, MaxSlots: 3, SyncEvery: 2, NoPrefixCache: true})
	p := []int{4, 8, 15, 16, 23, 42}
	out, _ := runAgainstPlain(t, m, e, "off turn 1", []EngineRequest{{GenRequest: greedy(p, 4)}, {GenRequest: greedy(p, 4)}})
	if st := e.Stats(); st.ReusedTokens != len(p) || st.SharedPrompts != 1 {
		t.Fatalf("stats %+v: want the second request to share the first's prompt (6 tokens), nothing else", st)
	}
	_, reused := runAgainstPlain(t, m, e, "off turn 2", []EngineRequest{{GenRequest: greedy(cat(p, out[0].Tokens, []int{1}), 3)}})
	if reused != 0 {
		t.Fatalf("%d tokens reused with the cache off", reused)
	}
}

// Keys and values reused from a slot equal those of a fresh prefill.
func TestEnginePrefixReuseEqualsFreshPrefill(t *testing.T) {
	noLeaks(t)
	m := newTiny(t, Qwen3, 63, cpu32)
	base := []int{11, 12, 13, 14, 15, 16, 17, 18}
	next := cat(base[:6], []int{30, 31, 32})
	e := newEngine(t, m, EngineConfig{SlotLen: 16, MaxSlots: 2, SyncEvery: 1})
	if _, err := e.Generate([]EngineRequest{{GenRequest: greedy(base, 2)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Submit(EngineRequest{GenRequest: greedy(next, 4)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Step(); err != nil {
		t.Fatal(err)
	}
	if st := e.Stats(); st.ReusedTokens != 6 {
		t.Fatalf("stats %+v: want 6 reused tokens", st)
	}
	slot := int64(e.active[0].slot)
	fresh := newEngine(t, m, EngineConfig{SlotLen: 16, MaxSlots: 1, SyncEvery: 1})
	if _, err := fresh.Submit(EngineRequest{GenRequest: greedy(next, 2)}); err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Step(); err != nil {
		t.Fatal(err)
	}
	P := int64(len(next))
	for layer := range m.Layers {
		for _, arena := range [][2]*torch.Tensor{{e.k[layer], fresh.k[layer]}, {e.v[layer], fresh.v[layer]}} {
			var got, ref []float32
			scoped(func() {
				got = arena[0].Narrow(0, slot*16, P).Contiguous().Float32s()
				ref = arena[1].Narrow(0, 0, P).Contiguous().Float32s()
			})
			if d := maxAbs(got, ref); d > 1e-5 {
				t.Fatalf("layer %d: reused keys/values differ from a fresh prefill by %g", layer, d)
			}
		}
	}
}

// Cached keys and values are dropped when the weights change, and are
// never reused across adapters.
func TestEnginePrefixCacheInvalidation(t *testing.T) {
	noLeaks(t)
	for _, f := range families {
		m := newTiny(t, f, 64, cpu32)
		name := string(f)
		e := newEngine(t, m, EngineConfig{SlotLen: 32, MaxSlots: 2, SyncEvery: 2})
		p := []int{5, 6, 7, 8, 9, 10}
		out, _ := runAgainstPlain(t, m, e, name+" before", []EngineRequest{{GenRequest: greedy(p, 4)}})
		// new weights: every stored key is stale
		torch.NoGrad(func() {
			for _, blk := range m.Layers {
				scoped(func() { blk.Attn.K.W.CopyFrom(blk.Attn.K.W.MulScalar(1.5)) })
			}
		})
		m.MarkUpdated()
		_, reused := runAgainstPlain(t, m, e, name+" after an update", []EngineRequest{{GenRequest: greedy(cat(p, out[0].Tokens, []int{3}), 3)}})
		if reused != 0 {
			t.Fatalf("%s: %d tokens reused after the weights changed", name, reused)
		}

		// adapters: a's content is not b's
		a, b := newAdapter(t, m, loraCfg(12)), newAdapter(t, m, loraCfg(13))
		ea := newEngine(t, m, EngineConfig{SlotLen: 32, MaxSlots: 2, SyncEvery: 2})
		outA, _ := runAgainstPlain(t, m, ea, name+" adapter a", []EngineRequest{{GenRequest: greedy(p, 4), Adapter: a}})
		ext := cat(p, outA[0].Tokens, []int{3})
		_, reused = runAgainstPlain(t, m, ea, name+" adapter b", []EngineRequest{{GenRequest: greedy(ext, 3), Adapter: b}})
		if reused != 0 {
			t.Fatalf("%s: %d tokens computed through adapter a reused for adapter b", name, reused)
		}
		_, reused = runAgainstPlain(t, m, ea, name+" adapter a again", []EngineRequest{{GenRequest: greedy(cat(p, []int{1}), 3), Adapter: a}})
		if reused != len(p) {
			t.Fatalf("%s: %d tokens reused for adapter a's own prefix, want %d", name, reused, len(p))
		}
	}
}

// A Step that fails (here: an adapter freed while its requests wait) drops
// every pending request and frees their slots; the engine then serves new
// requests as before, without reusing what the failed prefill half wrote.
func TestEngineFailedStepFreesEverything(t *testing.T) {
	noLeaks(t)
	m := newTiny(t, Qwen2, 68, cpu32)
	a, err := m.NewAdapter(loraCfg(23))
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, m, EngineConfig{SlotLen: 32, MaxSlots: 2, SyncEvery: 2})
	p := []int{3, 4, 5, 6, 7, 8}
	for range 3 {
		if _, err := e.Submit(EngineRequest{GenRequest: greedy(p, 4), Adapter: a}); err != nil {
			t.Fatal(err)
		}
	}
	a.Free()
	if _, err := e.Step(); err == nil {
		t.Fatal("a Step over freed adapter weights did not fail")
	}
	if e.Pending() != 0 || slices.ContainsFunc(e.bySlot, func(r *engineRow) bool { return r != nil }) {
		t.Fatalf("after the failed Step: %d pending, slots %v", e.Pending(), e.bySlot)
	}
	_, reused := runAgainstPlain(t, m, e, "after a failed step", []EngineRequest{{GenRequest: greedy(p, 4)}, {GenRequest: greedy(cat(p, []int{9}), 3)}})
	if reused != len(p) { // the second copies the first's prompt, nothing from before the failure
		t.Fatalf("%d tokens reused, want %d", reused, len(p))
	}
}

// Prefill in forwards of a few tokens (a long prompt in pieces, copies from
// rows finished in earlier forwards, a shared prompt whose leader ends in a
// later forward) gives the plain path's outputs, and the same keys and
// values as one forward.
func TestEngineChunkedPrefill(t *testing.T) {
	noLeaks(t)
	for _, f := range families {
		m := newTiny(t, f, 69, cpu32)
		name := string(f) + " chunked"
		sys := []int{50, 51, 52, 53, 54, 55, 56}
		reqs := []EngineRequest{
			{GenRequest: greedy(cat(sys, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}), 4)}, // 18 tokens: 4 forwards of 5
			{GenRequest: greedy(cat(sys, []int{20, 21}), 4)},                            // copies sys from the first
			{GenRequest: greedy(cat(sys, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}), 4)}, // shares the first's prompt
			{GenRequest: greedy([]int{30, 31, 32}, 5)},
		}
		for i := range reqs {
			reqs[i].Seed = uint64(i)
		}
		one := newEngine(t, m, EngineConfig{SlotLen: 40, MaxSlots: 4, SyncEvery: 2})
		runAgainstPlain(t, m, one, name+" one forward", reqs)
		e := newEngine(t, m, EngineConfig{SlotLen: 40, MaxSlots: 4, SyncEvery: 2, PrefillTokens: 5})
		_, reused := runAgainstPlain(t, m, e, name, reqs)
		st := e.Stats()
		// computed: 18 + 2 + 0 + 3 = 23 tokens in forwards of ≤ 5
		if st.PrefillTokens != 23 || st.Prefills != 5 || reused != 7+18 {
			t.Fatalf("%s: %d tokens in %d forwards, %d reused; want 23 in 5, 25 reused", name, st.PrefillTokens, st.Prefills, reused)
		}
		if st1 := one.Stats(); st1.Prefills != 1 || st1.PrefillTokens != 23 {
			t.Fatalf("%s: one forward: %+v", name, st1)
		}
		// pieces of rows through different adapters in one forward
		a1, a2 := newAdapter(t, m, loraCfg(24)), newAdapter(t, m, loraCfg(25, "q_proj", "up_proj"))
		for i := range reqs {
			reqs[i].Adapter = []*Adapter{a1, a2, a1, nil}[i]
		}
		mixed := newEngine(t, m, EngineConfig{SlotLen: 40, MaxSlots: 4, SyncEvery: 2, PrefillTokens: 5})
		runAgainstPlain(t, m, mixed, name+" mixed adapters", reqs)
	}
}

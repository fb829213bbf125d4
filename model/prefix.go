package model

// prefix.go — reusing keys and values already in the arena (the prefix
// cache) when requests are admitted.
//
// Every slot remembers which tokens its arena rows hold keys and values for,
// and through which adapter they were computed: a running row's prompt, or,
// once the row is retired, its prompt and all but the last generated token
// (the last one was never fed back). A slot keeps that content after it is
// freed, until a new request overwrites it.
//
// Admission places each waiting request, in submission order:
//
//   - into a free slot whose whole content is a prefix of the new prompt (the
//     next turn of a conversation: prompt = earlier prompt + response + more),
//     longest first, keeping those rows in place; otherwise into an empty slot,
//     otherwise into the least recently used free slot, keeping whatever
//     prefix that slot shares;
//   - then, when another slot holds a longer shared prefix (the same system
//     prompt, the n samples of a group, a conversation on another slot), its
//     rows are copied on the device instead of being computed again;
//   - a request whose prompt equals that of one admitted earlier in the same
//     Step copies the whole prompt and shares that request's last-position
//     logits, so the n samples of a group are prefilled once.
//
// Every other prompt token goes through packed forwards (prefill.go) that
// write its keys and values into the slot and attend over the slot's rows
// (varlen attention with per-slot key counts), so a reused prefix costs a
// copy, not a forward. At least the last prompt token is always computed (its logits
// give the first new token), except for requests sharing a prompt.
//
// Copies are ordered per layer: rows copied from content that predates this
// Step are read before the layer's new keys are written ("pre"), rows copied
// from requests admitted in this Step after ("post"); prefill.go says in
// which forward each row's copies run. Chains of post copies
// are resolved to the rows actually computed, so each set is one gather and
// one scatter per layer.
//
// Cached keys and values are only valid for the weights that computed them:
// the engine drops every slot's content when the model's weights change
// (Model.MarkUpdated) and when its memory is released.

import (
	"slices"
	"strconv"
)

// slotContent is what a slot's arena rows hold.
type slotContent struct {
	tokens  []int  // keys and values at positions 0..len-1
	adapter int    // adapter slot + 1 they were computed through; 0: none
	used    uint64 // admission clock when last claimed or retired (LRU)
}

// admission is the plan for one admitted request.
type admission struct {
	r      *engineRow
	start  int // prompt tokens whose keys and values are reused; the rest are computed
	leader int // index of the admitted row whose prompt and logits it shares; −1: none
	copies kvCopies
}

// kvCopies are arena-row copies that run in every layer of a prefill.
type kvCopies struct {
	preSrc, preDst   []int64 // before the layer writes its new keys
	postSrc, postDst []int64 // after
}

func (c *kvCopies) join(o kvCopies) {
	c.preSrc, c.preDst = append(c.preSrc, o.preSrc...), append(c.preDst, o.preDst...)
	c.postSrc, c.postDst = append(c.postSrc, o.postSrc...), append(c.postDst, o.postDst...)
}

// adapterKey identifies the adapter a row's keys and values go through.
func (e *Engine) adapterKey(r *engineRow) int {
	if a := e.adapterOf(r); a != nil {
		return a.slot + 1
	}
	return 0
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b []int) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// ForgetPrefixes drops the prefix cache: the next requests compute every
// prompt row again, as a fresh engine's would. Its CUDA graphs stay.
func (e *Engine) ForgetPrefixes() { e.dropCache() }

// dropCache forgets every slot's content (new weights, or memory released).
func (e *Engine) dropCache() {
	for s := range e.content {
		e.content[s] = slotContent{}
	}
}

// syncWeights drops the cache when the model's weights changed since it was
// filled.
func (e *Engine) syncWeights() {
	if v := e.m.root().version; v != e.version {
		e.dropCache()
		e.dropGraphs() // they may read tensors the change replaced
		e.version = v
	}
}

// place takes waiting requests into free slots (see the file comment) and
// plans their prefill: which prompt rows are reused and from where.
func (e *Engine) place() []admission {
	var adm []admission
	claimed := map[int]int{} // slot → index in adm
	leaders := map[string]int{}
	// origin resolves an arena row written in this Step to the row holding
	// its final value after the layer's own writes and pre copies.
	origin := map[int64]int64{}
	cache := !e.cfg.NoPrefixCache
	for len(e.queue) > 0 {
		r := e.queue[0]
		p, ak := r.req.Prompt, e.adapterKey(r)
		reusable := len(p) - 1 // the last prompt token is always computed
		lcp := func(s int) int {
			c := e.content[s]
			if !cache || c.adapter != ak {
				return 0
			}
			return min(commonPrefix(c.tokens, p), reusable)
		}

		// the slot: the longest content that is a prefix of the prompt, else
		// an empty slot (lowest first), else the least recently used
		slot, keep, victim := -1, 0, -1
		for s, row := range e.bySlot {
			if row != nil {
				continue
			}
			c := e.content[s]
			if n := lcp(s); n > 0 && n == len(c.tokens) {
				if n > keep {
					slot, keep = s, n
				}
				continue
			}
			if victim < 0 {
				victim = s
				continue
			}
			v := e.content[victim]
			if len(v.tokens) > 0 && (len(c.tokens) == 0 || c.used < v.used) {
				victim = s
			}
		}
		if slot < 0 {
			if victim < 0 {
				break // no free slot: the rest wait
			}
			slot, keep = victim, lcp(victim) // a victim still keeps what it shares
		}
		e.queue = e.queue[1:]
		r.slot, r.n = slot, 1
		e.bySlot[slot] = r
		e.clock++
		a := admission{r: r, start: keep, leader: -1}

		key := promptKey(p) + "@" + strconv.Itoa(ak)
		if l, ok := leaders[key]; ok { // the same prompt as a request of this Step
			a.leader, a.start = l, len(p)
			e.stats.SharedPrompts++
			src := adm[l].r.slot
			for t := keep; t < len(p); t++ {
				e.addPost(&a.copies, origin, int64(src)*e.slotLen+int64(t), int64(slot)*e.slotLen+int64(t))
			}
		} else {
			leaders[key] = len(adm)
			// a longer shared prefix elsewhere: copy it
			best, from := keep, -1
			for s := range e.bySlot {
				if s == slot {
					continue
				}
				var n int
				if j, ok := claimed[s]; ok { // admitted in this Step: its prompt, after the layer's writes
					if cache && e.adapterKey(adm[j].r) == ak {
						n = min(commonPrefix(adm[j].r.req.Prompt, p), reusable)
					}
				} else {
					n = lcp(s)
				}
				if n > best {
					best, from = n, s
				}
			}
			if from >= 0 {
				_, post := claimed[from]
				for t := keep; t < best; t++ {
					src, dst := int64(from)*e.slotLen+int64(t), int64(slot)*e.slotLen+int64(t)
					if post {
						e.addPost(&a.copies, origin, src, dst)
					} else {
						a.copies.preSrc, a.copies.preDst = append(a.copies.preSrc, src), append(a.copies.preDst, dst)
					}
				}
				a.start = best
			}
		}
		e.stats.ReusedTokens += a.start
		e.content[slot] = slotContent{tokens: slices.Clone(p), adapter: ak, used: e.clock}
		claimed[slot] = len(adm)
		adm = append(adm, a)
	}
	return adm
}

// addPost plans a copy from arena row src, as it stands after this Step's
// writes, to dst; a src itself filled by a post copy is read at its origin.
func (e *Engine) addPost(cp *kvCopies, origin map[int64]int64, src, dst int64) {
	if o, ok := origin[src]; ok {
		src = o
	}
	origin[dst] = src
	cp.postSrc, cp.postDst = append(cp.postSrc, src), append(cp.postDst, dst)
}

// remember records a retired row's content: its prompt and all but its last
// token, whose keys and values were never computed.
func (e *Engine) remember(r *engineRow, tokens []int) {
	if e.cfg.NoPrefixCache {
		return
	}
	if e.m.root().version != e.version {
		return // computed by weights that have since changed
	}
	e.clock++
	e.content[r.slot] = slotContent{
		tokens:  append(slices.Clone(r.req.Prompt), tokens[:len(tokens)-1]...),
		adapter: e.adapterKey(r),
		used:    e.clock,
	}
}

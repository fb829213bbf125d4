package model

// cache.go — the preallocated key/value cache that generation passes into
// the forward pass. It is per-call state, not part of the Model: any number
// of caches (agents, rollouts) can use one set of weights.
//
// Layout: per layer, K and V of shape (B, KVH, L, Dh) in the model dtype,
// plus a (B, L) bool mask of the slots that hold real tokens. Rows are
// left-padded so that every row writes its next token into the same slot.

import (
	"fmt"

	"troupe/torch"
)

// KVCache holds past keys and values for a batch of sequences.
type KVCache struct {
	layers   []cacheLayer
	valid    *torch.Tensor // (B, L) bool
	batch    int64
	capacity int64
	length   int64 // slots filled so far
}

type cacheLayer struct {
	k, v  *torch.Tensor // (B, KVH, L, Dh)
	cache *KVCache
}

// NewCache allocates a cache for batch rows of up to capacity tokens each
// (prompt plus generated) on the model's device. Free it when done.
func (m *Model) NewCache(batch, capacity int) (c *KVCache, err error) {
	defer torch.Recover(&err)
	if batch <= 0 || capacity <= 0 {
		return nil, fmt.Errorf("model: cache of %d rows × %d tokens", batch, capacity)
	}
	c = &KVCache{batch: int64(batch), capacity: int64(capacity)}
	shape := []int64{int64(batch), int64(m.Config.NumKVHeads), int64(capacity), int64(m.Config.HeadDim)}
	for range m.Layers {
		c.layers = append(c.layers, cacheLayer{
			k:     torch.Zeros(shape, m.dtype, m.device).Untrack(),
			v:     torch.Zeros(shape, m.dtype, m.device).Untrack(),
			cache: c,
		})
	}
	c.valid = torch.Zeros([]int64{int64(batch), int64(capacity)}, torch.Bool, m.device).Untrack()
	return c, nil
}

// Fits reports whether the cache can hold batch rows of length tokens.
func (c *KVCache) Fits(batch, length int) bool {
	return c != nil && int64(batch) <= c.batch && int64(length) <= c.capacity
}

// Len is the number of slots filled.
func (c *KVCache) Len() int64 { return c.length }

// Bytes is the cache's memory footprint.
func (c *KVCache) Bytes() int64 {
	var n int64
	for _, l := range c.layers {
		n += l.k.Numel()*int64(l.k.DType().Size()) + l.v.Numel()*int64(l.v.DType().Size())
	}
	return n
}

// reset empties the cache for a new batch of rows ≤ its capacity.
func (c *KVCache) reset() {
	c.length = 0
	c.valid.Fill(0)
}

// append writes k, v (B, KVH, T, Dh) at slots [length, length+T) and
// returns views of all filled slots including the new ones. The cache's
// length advances once per forward (advance), after every layer appended.
func (l *cacheLayer) append(k, v *torch.Tensor) (*torch.Tensor, *torch.Tensor) {
	c := l.cache
	B, T := k.Size(0), k.Size(2)
	if c.length+T > c.capacity {
		panic(&torch.Error{Op: "kv cache", Msg: fmt.Sprintf("%d slots filled + %d new > capacity %d", c.length, T, c.capacity)})
	}
	l.k.Narrow(0, 0, B).Narrow(2, c.length, T).CopyFrom(k)
	l.v.Narrow(0, 0, B).Narrow(2, c.length, T).CopyFrom(v)
	n := c.length + T
	return l.k.Narrow(0, 0, B).Narrow(2, 0, n), l.v.Narrow(0, 0, B).Narrow(2, 0, n)
}

func (c *KVCache) advance(T int64) { c.length += T }

// keepRows compacts the cache to the given rows (int64 indices into the
// current batch), in that order: finished rows stop costing attention work.
func (c *KVCache) keepRows(rows *torch.Tensor, current int64) {
	n := rows.Size(0)
	for i := range c.layers {
		l := &c.layers[i]
		for _, t := range []*torch.Tensor{l.k, l.v} {
			kept := t.Narrow(0, 0, current).IndexSelect(0, rows)
			t.Narrow(0, 0, n).CopyFrom(kept)
		}
	}
	kept := c.valid.Narrow(0, 0, current).IndexSelect(0, rows)
	c.valid.Narrow(0, 0, n).CopyFrom(kept)
}

// Free releases the cache's memory. Idempotent.
func (c *KVCache) Free() {
	if c == nil {
		return
	}
	for _, l := range c.layers {
		torch.FreeAll(l.k, l.v)
	}
	c.valid.Free()
}

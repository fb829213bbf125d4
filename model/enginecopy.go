package model

// enginecopy.go — a second copy of a model's weights for an engine to decode
// from while the model itself trains (docs/overlap.md, "Where the weights
// live"), and its refresh in place.
//
// EngineCopy builds the copy through newModel, the constructor every
// source goes through, with the model's own weights as the source: the same
// layout, fused QKV and gate/up storage of its own, a tied head tied again,
// and nothing that needs a gradient. RefreshFrom copies the model's current
// weights into the copy's existing storage (copy_ under no-grad), so the
// copy's tensors keep their addresses — what CUDA graphs captured on them
// need — and bumps the copy's version, so an engine's prefix cache drops
// keys and values computed under the old weights.
//
// What it is not: a copy of an adapter's view (a LoRA adapter trains
// without touching its base; its own copy is the adapter's tensors), or of
// a model whose weights are sharded away during an update (refresh between
// updates, when they are whole).

import (
	"fmt"
	"slices"

	"troupe/torch"
)

// paramSource serves a model's current weights by checkpoint key, cloned.
type paramSource map[string]*torch.Tensor

func (s paramSource) tensor(key string, shape []int64) (*torch.Tensor, error) {
	t, ok := s[key]
	if !ok {
		return nil, fmt.Errorf("model: engine copy: no weight %s", key)
	}
	if got := t.Shape(); !slices.Equal(got, shape) {
		return nil, fmt.Errorf("model: engine copy: %s has shape %v, want %v", key, got, shape)
	}
	var c *torch.Tensor
	torch.NoGrad(func() {
		d := t.Detach()
		c = d.Clone().Untrack()
		d.Free()
	})
	return c, nil
}

// EngineCopy returns a new model holding a copy of m's weights, in m's
// dtype and on its device; the caller frees it.
func (m *Model) EngineCopy() (c *Model, err error) {
	defer torch.Recover(&err)
	if m.adapter != nil {
		return nil, fmt.Errorf("model: engine copy of an adapter's view: copy the adapter's tensors instead")
	}
	src := paramSource{}
	for _, p := range m.Params() {
		src[p.Name] = p.T
	}
	return newModel(m.Config, src, Options{DType: m.dtype, Device: m.device})
}

// RefreshFrom copies src's weights into c's storage in place. c must be
// src's EngineCopy (or another model of the same layout).
func (c *Model) RefreshFrom(src *Model) (err error) {
	defer torch.Recover(&err)
	to, from := c.Params(), src.Params()
	if len(to) != len(from) {
		return fmt.Errorf("model: refresh of an engine copy: %d weights against %d", len(to), len(from))
	}
	for i := range to {
		if to[i].Name != from[i].Name {
			return fmt.Errorf("model: refresh of an engine copy: weight %d is %s here, %s in the model", i, to[i].Name, from[i].Name)
		}
	}
	torch.NoGrad(func() {
		for i := range to {
			to[i].T.CopyFrom(from[i].T)
		}
	})
	c.MarkUpdated()
	return nil
}

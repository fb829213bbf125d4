package model

// checkpoint.go — activation checkpointing for the packed training forward:
// keep each block's input, not its activations, and recompute one block at
// a time during the backward pass.
//
// The forward runs the blocks without autograd and saves the input of every
// block (N × D each); the final norm and the vocabulary projection run with
// autograd from a leaf copy of the last block's output. After the caller's
// loss.Backward() has filled that leaf's grad, Backward walks the blocks from
// the last to the first: it reruns block i from its saved input (a fresh
// leaf) with autograd, back-propagates the grad of its output, and hands the
// grad of its input to block i−1; the embedding comes last. Every weight
// receives exactly the grads of the plain forward (the same ops on the same
// inputs), at the cost of one more forward of the blocks; the activations
// held at once are one block's instead of all of them.
//
// libtorch's C++ API has no torch.utils.checkpoint, and a block's forward is
// Go code, so the recompute is driven from here with Tensor.BackwardWith.

import (
	"fmt"

	"troupe/torch"
)

// Checkpointed is a checkpointed packed forward whose backward is pending.
type Checkpointed struct {
	m        *Model
	p        Packed
	rt       route
	cos, sin *torch.Tensor
	inputs   []*torch.Tensor // block i's input, no grad
	last     *torch.Tensor   // leaf: the last block's output
}

// CheckpointedPackedLogProbs is PackedTokenLogProbs with activation
// checkpointing: the log-probs are differentiable with respect to the final
// norm and the head only until Backward is called after the loss's
// backward, which then fills every other weight's grad. The tensors belong
// to the current scope; call Backward before closing it.
func (m *Model) CheckpointedPackedLogProbs(p Packed, targets, mask *torch.Tensor, opt LogProbOptions) (logp, entropy *torch.Tensor, c *Checkpointed, err error) {
	defer torch.Recover(&err)
	if !torch.GradEnabled() {
		return nil, nil, nil, fmt.Errorf("model: a checkpointed forward is for training; without grad use PackedTokenLogProbs")
	}
	c = &Checkpointed{m: m, p: p, rt: m.packedRoute(p)}
	torch.NoGrad(func() {
		x := torch.Embedding(m.Embed, p.IDs) // (N,D)
		cos, sin := m.rope.table(p.Positions, m.dtype)
		c.cos, c.sin = cos.Unsqueeze(1), sin.Unsqueeze(1) // (N,1,Dh)
		for i, blk := range m.Layers {
			c.inputs = append(c.inputs, x)
			m.layer(i, LayerEnter)
			// the block's intermediates go with its scope: only its output stays
			s := torch.NewScope()
			x = s.Keep(blk.forwardPacked(x, c.cos, c.sin, p, nil, i, c.rt))
			s.Close()
			m.layer(i, LayerLeave)
		}
		c.last = x.Detach().SetRequiresGrad(true)
	})
	logp, entropy = m.selectedLogProbs(m.Norm.Forward(c.last), targets, mask, opt)
	return logp, entropy, c, nil
}

// Backward back-propagates through the blocks and the embedding, block by
// block, after the loss's backward reached the last block's output.
func (c *Checkpointed) Backward() (err error) {
	defer torch.Recover(&err)
	g := c.last.Grad()
	if g == nil {
		return fmt.Errorf("model: checkpointed backward: the loss's backward has not run, or does not depend on the log-probs")
	}
	for i := len(c.m.Layers) - 1; i >= 0; i-- {
		c.m.layer(i, LayerEnter)
		s := torch.NewScope()
		in := c.inputs[i].Detach().SetRequiresGrad(true)
		c.m.Layers[i].forwardPacked(in, c.cos, c.sin, c.p, nil, i, c.rt).BackwardWith(g)
		next := s.Keep(in.Grad())
		s.Close()
		c.m.layer(i, LayerLeaveBackward)
		g.Free() // the grad of block i's output, and its input, are done with
		c.inputs[i].Free()
		g = next
	}
	if c.m.Embed.RequiresGrad() { // frozen under an adapter
		torch.Embedding(c.m.Embed, c.p.IDs).BackwardWith(g)
	}
	g.Free()
	return nil
}

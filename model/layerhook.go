package model

// layerhook.go — a call around every use of a decoder layer's weights by
// the training passes, for weights that are not always present: sharded
// parameters (policy's shard level 3) gather a layer's weights from the
// ranks when it is entered and give the memory back when it is left, and
// reduce-scatter its grads once the backward pass is through it.
//
// Where it is called: the packed forward (the update's no-grad log-prob
// pass), the checkpointed forward and the checkpointed backward (Enter
// before the block's recompute, LeaveBackward after its grads are added).
// Not in generation (the engine runs on a whole model) and not in the
// padded forward, nor around the embedding, final norm and head, which the
// hook's owner keeps present for the whole update.

// LayerPhase says where a pass is with a layer.
type LayerPhase int

const (
	LayerEnter         LayerPhase = iota // its weights are about to be read
	LayerLeave                           // a forward is done with them
	LayerLeaveBackward                   // the backward is through the layer: its weights' grads are complete for this pass
)

// LayerHook is called with the layer index and phase; it reports a failure
// by panicking with a *torch.Error, which the pass returns as its error.
type LayerHook func(layer int, phase LayerPhase)

// SetLayerHook installs h (nil removes it). The hook belongs to the model
// the caller trains; an adapter's view has none.
func (m *Model) SetLayerHook(h LayerHook) { m.layerHook = h }

// layer calls the hook, if any.
func (m *Model) layer(i int, phase LayerPhase) {
	if m.layerHook != nil {
		m.layerHook(i, phase)
	}
}

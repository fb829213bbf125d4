package model

// penalty.go — the engine's record of the tokens each slot's row holds, for
// the repetition penalty (sample.go): a (slots, V) bool arena, allocated at
// the first penalised admission and freed with the engine's memory. A row's
// record is written at admission (its prompt and first token) and marked
// with every token decoded after; rows without a penalty carry a record
// too (penalty 1 leaves their logits as they are), so a batch mixes both.
//
// What this file is not: the penalty's arithmetic (sample.go) or the
// decision of which rows run (engine.go). Static batches (CUDA graphs) do
// not carry the record: Submit refuses a penalised request there.

import "troupe/torch"

// seenForAdmitted writes the admitted rows' records (prompt ids) and points
// params at them; call markAdmitted once their first tokens are drawn.
func (e *Engine) seenForAdmitted(rows []*engineRow, params *rowParams) *torch.Tensor {
	if !params.anyPenalty {
		return nil
	}
	V := int64(e.m.Config.VocabSize)
	if e.seen == nil {
		e.seen = torch.Zeros([]int64{int64(e.slots), V}, torch.Bool, e.m.device).Untrack()
	}
	ids := make([][]int, len(rows))
	slots := make([]int64, len(rows))
	for i, r := range rows {
		ids[i], slots[i] = r.req.Prompt, int64(r.slot)
	}
	params.seen = seenTokens(ids, V, e.m.device)
	return torch.FromInt64(slots).ToDevice(e.m.device)
}

// markAdmitted stores the admitted rows' records with their first tokens.
func (e *Engine) markAdmitted(slots *torch.Tensor, params *rowParams, tok *torch.Tensor) {
	if slots == nil {
		return
	}
	e.seen.IndexCopyInPlace(0, slots, markSeen(params.seen, tok))
	params.seen = nil
}

// seenForStep points params at the decode batch's records; the batch's
// slots are its arena bases over the slot length.
func (e *Engine) seenForStep(st *decodeState) *torch.Tensor {
	if !st.params.anyPenalty {
		return nil
	}
	slots := st.base.ToDType(torch.Float64).DivScalar(float64(e.slotLen)).ToDType(torch.Int64) // (B) exact below 2^53
	st.params.seen = e.seen.IndexSelect(0, slots)
	return slots
}

// markStep marks each row's drawn token in its record.
func (e *Engine) markStep(slots *torch.Tensor, st *decodeState, next *torch.Tensor) {
	if slots == nil {
		return
	}
	e.seen.IndexCopyInPlace(0, slots, markSeen(st.params.seen, next))
	st.params.seen = nil
}

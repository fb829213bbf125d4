package policy

// abandon.go — what a rank does with its update when the update fails: it
// issues no further collective. The other ranks are somewhere else in
// their own sequence of reduce-scatters and gathers; a collective they are
// not issuing would, under NCCL (which matches operations by position, not
// by kind), pair with one of theirs and complete with garbage or hang. So
// the failing rank undoes the update locally — the layer hook removed, the
// grad sums freed, at shard level 3 the weights it had given back refilled
// with zeros rather than gathered — and returns its error; the run then
// leaves the group, which ends the others' waits (dist/watch.go). The
// weights are not used again: the run stops on the error.
//
// What it is not: the end of an update that succeeded (shardparams.go's
// endUpdate gathers the whole model then).

import "troupe/model"

// abandonUpdate ends a failed update without a collective.
func (s *sharded) abandonUpdate(m *model.Model) {
	if s.level < 2 {
		return
	}
	defer func() { recover() }() // best effort on the way out of an error; the error is the caller's to report
	m.SetLayerHook(nil)
	s.dropInFlight() // shardcomm.go: released unwaited, nothing new issued
	s.freeSums()
	if s.level < 3 || s.storages == nil {
		return
	}
	for u := range s.units {
		if s.present[u] {
			continue
		}
		for _, st := range s.storages[u] {
			st.t.ResizeStorage(st.bytes) // nothing reads freed memory
			st.t.Detach().Fill(0)
		}
		s.present[u] = true
	}
}

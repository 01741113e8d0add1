package store

// coalesce drops from batch every queued-only task write (PutTaskNoWait)
// that a later write of the same task in the same batch supersedes, and
// answers it: the later write stores the newer row, and takes the dropped
// write's events (inserted before its own, so the log keeps its order).
// The batch commits as one transaction, so no reader could have seen the
// dropped row; a write of another kind in between (which might read the
// task inside the transaction), unless it says it touches no task, stops
// the coalescing. A streamed turn's
// SUBMITTED row and its final state then cost one row write instead of an
// insert and an update that moves every index entry (issue 17).
func (w *writer) coalesce(batch []*writeReq) []*writeReq {
	if len(batch) < 2 {
		return batch
	}
	if w.pending == nil {
		w.pending = map[string]int{}
	}
	m := w.pending
	defer clear(m)
	dropped := false
	for k, r := range batch {
		switch r.kind {
		case opPutContext:
			continue
		case opFunc:
			if r.noTasks {
				continue // e.g. a sent message record (RPC-18)
			}
			clear(m)
			continue
		case opPutTask:
		default:
			clear(m)
			continue
		}
		if i, ok := m[r.id]; ok && batch[i].owner == r.owner {
			old := batch[i]
			if len(old.events) > 0 {
				r.events = append(old.events, r.events...)
				if r.keep == 0 {
					r.keep = old.keep
				}
			}
			batch[i] = nil
			dropped = true
			old.done <- writeResult{n: 1}
			w.nCoalesced.Add(1)
		}
		if r.noWait && r.payload == nil && r.after == nil {
			m[r.id] = k
		} else {
			delete(m, r.id)
		}
	}
	if !dropped {
		return batch
	}
	out := batch[:0]
	for _, r := range batch {
		if r != nil {
			out = append(out, r)
		}
	}
	return out
}

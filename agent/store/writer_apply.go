package store

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// apply runs one request inside the open transaction. ErrNotFound is a
// result, not a failure: it changed nothing.
func (w *writer) apply(r *writeReq, nowMS int64) (int, error) {
	switch r.kind {
	case opPutTask:
		res, err := w.putTask.Exec(r.id, r.owner, r.contextID, r.state, r.statusTS, r.body, r.artifacts, nowMS, nowMS)
		if err != nil {
			return 0, fmt.Errorf("writing task: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("writing task: %w", err)
		}
		if n == 0 {
			return 0, ErrNotFound // the id belongs to another owner
		}
		if len(r.events) > 0 {
			if err := w.insertEvents(r.id, r.events, r.keep); err != nil {
				return 0, err
			}
		}
		if r.payload != nil {
			jobs, err := w.insertJobs(r.id, r.payload, r.traceparent, nowMS)
			if err != nil {
				return 0, err
			}
			return 1 + jobs, nil // PutTaskWithJobs reports n-1 jobs
		}
		return 1, nil
	case opPutContext:
		var state any
		if r.rec.State != nil {
			state = r.rec.State
		}
		_, err := w.putContext.Exec(r.rec.Owner, r.rec.ID, r.rec.Cwd, state,
			r.rec.CreatedAt.UnixMilli(), r.rec.UpdatedAt.UnixMilli())
		if err != nil {
			return 0, fmt.Errorf("writing context: %w", err)
		}
		return 1, nil
	case opFailInterrupted:
		return w.failInterrupted(r.msg, r.now, nowMS)
	case opFunc:
		return r.fn(w, nowMS)
	}
	return 0, fmt.Errorf("unknown write kind %d", r.kind)
}

// failInterrupted rewrites the status of every SUBMITTED or WORKING task.
func (w *writer) failInterrupted(msg string, now time.Time, nowMS int64) (int, error) {
	type row struct {
		id, contextID string
		body          []byte
	}
	rows, err := w.selInterrupted.Query(string(a2a.TaskStateSubmitted), string(a2a.TaskStateWorking))
	if err != nil {
		return 0, fmt.Errorf("finding interrupted tasks: %w", err)
	}
	var found []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.contextID, &r.body); err != nil {
			_ = rows.Close()
			return 0, fmt.Errorf("finding interrupted tasks: %w", err)
		}
		found = append(found, r)
	}
	if err := rows.Close(); err != nil {
		return 0, fmt.Errorf("finding interrupted tasks: %w", err)
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("finding interrupted tasks: %w", err)
	}
	ts := a2a.Timestamp(now)
	statusMS := now.UnixMilli()
	for _, r := range found {
		// Replace only the status member, so the rest of the stored body
		// (history, metadata) is kept byte for byte.
		var m map[string]json.RawMessage
		if err := json.Unmarshal(r.body, &m); err != nil {
			return 0, fmt.Errorf("decoding stored task %q: %w", r.id, err)
		}
		st, err := json.Marshal(a2a.TaskStatus{
			State: a2a.TaskStateFailed,
			Message: &a2a.Message{
				MessageID: newMessageID(),
				ContextID: r.contextID,
				TaskID:    r.id,
				Role:      a2a.RoleAgent,
				Parts:     []a2a.Part{a2a.TextPart(msg)},
			},
			Timestamp: ts,
		})
		if err != nil {
			return 0, fmt.Errorf("encoding status of task %q: %w", r.id, err)
		}
		m["status"] = st
		body, err := json.Marshal(m)
		if err != nil {
			return 0, fmt.Errorf("encoding task %q: %w", r.id, err)
		}
		if _, err := w.updFailed.Exec(string(a2a.TaskStateFailed), statusMS, string(body), nowMS, r.id); err != nil {
			return 0, fmt.Errorf("failing task %q: %w", r.id, err)
		}
		if err := w.notifyFailed(r.id, r.contextID, st, nowMS); err != nil {
			return 0, err
		}
		if err := w.logFailed(r.id, r.contextID, st); err != nil {
			return 0, err
		}
	}
	return len(found), nil
}

// newMessageID returns a random (version 4) UUID.
func newMessageID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand aborts the program instead)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// logFailed appends the FAILED status update of a task failed by
// FailInterrupted to its event log (RPC-17), after its last stored event,
// so a stream resumed after the crash learns how the task ended.
func (w *writer) logFailed(taskID, contextID string, status json.RawMessage) error {
	body, err := json.Marshal(map[string]any{"statusUpdate": map[string]any{"taskId": taskID, "contextId": contextID, "status": status}})
	if err != nil {
		return fmt.Errorf("encoding event of task %q: %w", taskID, err)
	}
	if _, err := w.exec(`INSERT INTO task_events (task_id, seq, body)
SELECT ?, COALESCE(MAX(seq), 0) + 1, ? FROM task_events WHERE task_id = ?`, taskID, string(body), taskID); err != nil {
		return fmt.Errorf("logging the failure of task %q: %w", taskID, err)
	}
	return nil
}

package agent

import (
	"context"
	"strconv"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
	"go.uber.org/zap"
)

// StreamResumeExtension is the extension URI of resumable streams (RPC-17):
// every task event carries a per-task sequence number as its SSE id, and a
// SubscribeToTask that activates it and sends Last-Event-ID (or
// metadata.lastEventId) replays what the client missed.
const StreamResumeExtension = "urn:caddy-a2a:stream-resume:v1"

// LastEventIDKey is the SubscribeToTask metadata key that carries the
// Last-Event-ID on transports without headers (RPC-17).
const LastEventIDKey = "lastEventId"

// resumeAfter returns the sequence number a SubscribeToTask resumes after:
// the call's Last-Event-ID, else metadata.lastEventId; nil when neither is
// set (a fresh subscription). Both are read only when the call activates
// StreamResumeExtension: a plain A2A 1.0 subscription always starts with
// the Task, and its metadata is its own (see beyond.go).
func (s *Service) resumeAfter(call Call, md map[string]any) (*uint64, error) {
	if !s.activated(call, StreamResumeExtension) {
		return nil, nil
	}
	raw := strings.TrimSpace(call.LastEventID)
	if raw == "" {
		switch v := md[LastEventIDKey].(type) {
		case nil:
			return nil, nil
		case string:
			raw = strings.TrimSpace(v)
		case float64:
			raw = strconv.FormatFloat(v, 'f', -1, 64)
		default:
			return nil, a2a.ErrInvalidParams("metadata."+LastEventIDKey, "must be an event id (a non-negative integer)")
		}
	}
	n, err := strconv.ParseUint(raw, 10, 64)
	if err != nil {
		return nil, a2a.ErrInvalidParams("metadata."+LastEventIDKey, "must be an event id (a non-negative integer), as sent in the SSE id")
	}
	return &n, nil
}

// lastSeq returns the sequence number of the task's last logged event (0
// without an event log, or when it cannot be read).
func (s *Service) lastSeq(ctx context.Context, taskID string) uint64 {
	es := s.st.caps().Events
	if es == nil {
		return 0
	}
	n, err := es.LastEventSeq(ctx, taskID)
	if err != nil {
		s.cfg.Logger.Warn("reading task event log", errField(err), zap.String("task_id", taskID))
		return 0
	}
	return n
}

// storedReplay returns the task's logged events in (after, upTo]; false
// when the log no longer holds them all (the caller sends a snapshot).
func (s *Service) storedReplay(ctx context.Context, taskID string, after, upTo uint64) ([]store.Event, bool) {
	if after == upTo {
		return nil, true
	}
	es := s.st.caps().Events
	if after > upTo || es == nil {
		return nil, false
	}
	evs, err := es.Events(ctx, taskID, after)
	if err != nil {
		return nil, false
	}
	out := evs[:0]
	for _, ev := range evs {
		if ev.Seq <= upTo {
			out = append(out, ev)
		}
	}
	if len(out) == 0 || out[len(out)-1].Seq != upTo {
		return nil, false
	}
	return out, true
}

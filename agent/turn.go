package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// Client-facing status messages (TURN-8, RPC-6, INPUT-1, INPUT-3).
const (
	msgAlreadyWorking   = "Task is already working."
	msgTextOnly         = "A2A server currently accepts text input only."
	msgInvalidWorkspace = "Invalid workspace: the cwd must be an absolute, existing directory inside an allowed root."
	msgOtherWorkspace   = "Invalid workspace: this context is bound to a different workspace."
	msgTransient        = "A temporary error occurred. Please retry."
	msgAuthRequired     = "Authentication required. Configure credentials and retry."
	msgBusy             = "The server is running its maximum number of concurrent turns. Please retry later."
	msgCanceled         = "Task canceled."
	msgRejected         = "The agent rejected the task."
)

// maxTraceField bounds tool input/result and thinking text in metadata (TURN-6).
const maxTraceField = 4000

// turnState accumulates what a running turn has produced.
type turnState struct {
	text      strings.Builder
	end       *backend.Event
	usage     *backend.Event
	artifacts int
	// baseURL is the gateway URL artifact links are built on.
	baseURL string
	// content is set once a content event (text, message, tool, artifact…)
	// was mapped; direct holds the reply of a message event (Appendix A).
	content bool
	direct  *a2a.Message
	// stored maps an artifact id to its stored payload, for append.
	stored map[string]storedArtifact
	// invalid is the correlation id of a turn that failed on backend
	// output breaking the turn-event protocol (a backend.ProtocolError).
	invalid string
}

// execute runs one turn of r to its final state.
func (s *Service) execute(ctx context.Context, r *run, msg *a2a.Message, in *turnInput) {
	started := time.Now()
	corr := newID()[:8]
	ts := &turnState{baseURL: in.baseURL}
	state, text := a2a.TaskStateFailed, ""
	defer func() {
		if v := recover(); v != nil {
			s.cfg.Logger.Error("turn panicked", zap.Any("panic", v), zap.String("correlation_id", corr))
			state, text = a2a.TaskStateFailed, internalMessage(corr)
		}
		final := s.finalize(r, state, text, ts)
		s.logTurn(r, final, started, corr, ts)
	}()

	ns := s.cfg.Namespace
	cwd := in.cwd
	if text = refusal(in); text != "" {
		return
	}
	// The context lease first, then a concurrency slot: a message waiting
	// for its busy context must not hold a slot other contexts could use.
	c, bound := s.contextFor(ctx, r.owner, msg.ContextID, cwd)
	if bound != cwd {
		// The context was bound meanwhile (a concurrent first message).
		// A message that named no cwd and read no file against the one
		// it assumed follows the binding (INPUT-1); otherwise it is
		// another workspace (RPC-6).
		if in.cwdGiven || in.readFiles {
			text = msgOtherWorkspace
			return
		}
		if res, err := s.cfg.Workspace.Resolve(bound); err != nil || res != bound {
			text = msgInvalidWorkspace
			return
		}
		cwd = bound
	}
	if !c.acquire(ctx, s.cfg.ContextWait) {
		if errors.Is(context.Cause(ctx), errCanceledByClient) {
			state, text = a2a.TaskStateCanceled, msgCanceled
			return
		}
		text = msgAlreadyWorking
		return
	}
	defer c.release()
	if !acquireSlot(ctx, s.slots, s.cfg.ContextWait) {
		text = msgBusy
		return
	}
	defer func() { <-s.slots }()

	s.publishStatus(r, a2a.TaskStatus{State: a2a.TaskStateWorking}, nil)
	taskID, ctxID := r.ids()
	if ctx.Err() != nil {
		return // canceled meanwhile; the deferred finalize says so
	}
	if r.durable {
		// The caller already knows the task: let listings see it working
		// at once (a queued write; the final one is durable).
		s.lazyWrite(r)
	}

	if err := storeInputs(s.cfg.InputDir, taskID, in.attachments); err != nil {
		s.cfg.Logger.Error("storing input attachments", errField(err), zap.String("correlation_id", corr))
		text = internalMessage(corr)
		return
	}
	treq := &backend.TurnRequest{V: backend.EventVersion, Type: "turn", ContextID: ctxID, TaskID: taskID, MessageID: msg.MessageID,
		Cwd: cwd, Prompt: in.prompt(), Text: in.text, Attachments: in.attachments, Credentials: in.credentials,
		Message: msg, Metadata: nsMetadata(msg.Metadata, ns), Session: &c.session}
	before := c.session.State
	runErr := s.cfg.Backend.RunTurn(ctx, treq, func(ev backend.Event) error { return s.onEvent(ctx, r, ts, ev) })
	state, text = s.outcome(ctx, ts, runErr, corr)
	if !bytes.Equal(before, c.session.State) {
		s.saveSessionState(ctx, r.owner, ctxID, c)
	}
}

// refusal is the status message of a turn refused before it leases its
// context (INPUT-1, INPUT-3), "" when it may run.
func refusal(in *turnInput) string {
	switch {
	case in.badCwd:
		return msgInvalidWorkspace
	case in.otherCwd:
		return msgOtherWorkspace
	case !in.hasInput():
		return msgTextOnly
	}
	return ""
}

// contextFor returns the live context, reviving it from the store (or
// creating it, bound to cwd) when it is not in memory, and the workspace
// it is bound to. Concurrent first messages of a context agree on one
// binding: the creator reads or writes the store while the others wait
// for it.
func (s *Service) contextFor(ctx context.Context, owner, id, cwd string) (*convContext, string) {
	key := ctxKey{owner: owner, id: id}
	c, created := s.hub.contexts.get(key, func() *convContext {
		return &convContext{backend: s.cfg.Backend, ready: make(chan struct{})}
	})
	if !created {
		<-c.ready
		return c, c.cwd
	}
	bound := cwd
	rec, err := s.st.GetContext(ctx, owner, id)
	switch {
	case err == nil:
		bound = rec.Cwd
		c.session.State = rec.State
	case errors.Is(err, store.ErrNotFound):
		now := time.Now()
		if err := s.putContextSoon(ctx, store.ContextRecord{Owner: owner, ID: id, Cwd: cwd, CreatedAt: now, UpdatedAt: now}); err != nil {
			s.cfg.Logger.Error("storing context", errField(err))
		}
	default:
		s.cfg.Logger.Error("reading context", errField(err))
	}
	c.cwd = bound
	close(c.ready)
	return c, c.cwd
}

// boundCwd returns the workspace the context id of owner is bound to: the
// live context's, else the stored record's (so the binding survives
// eviction and restarts). ok is false for a context with no binding yet
// (or when the store cannot say: the turn's contextFor decides then).
func (s *Service) boundCwd(ctx context.Context, owner, id string) (string, bool) {
	if id == "" {
		return "", false
	}
	if c, ok := s.hub.contexts.peek(ctxKey{owner: owner, id: id}); ok {
		select {
		case <-c.ready:
			return c.cwd, c.cwd != ""
		case <-ctx.Done():
			return "", false
		}
	}
	rec, err := s.st.GetContext(ctx, owner, id)
	if err != nil || rec.Cwd == "" {
		return "", false
	}
	return rec.Cwd, true
}

func acquireSlot(ctx context.Context, slots chan struct{}, wait time.Duration) bool {
	select {
	case slots <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case slots <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// saveSessionState stores the backend state of a context with its record.
func (s *Service) saveSessionState(ctx context.Context, owner, id string, c *convContext) {
	now := time.Now()
	rec := store.ContextRecord{Owner: owner, ID: id, Cwd: c.cwd, CreatedAt: now, UpdatedAt: now, State: c.session.State}
	if old, err := s.st.GetContext(context.WithoutCancel(ctx), owner, id); err == nil {
		rec.CreatedAt = old.CreatedAt
	}
	if err := s.st.PutContext(context.WithoutCancel(ctx), rec); err != nil {
		s.cfg.Logger.Error("storing context state", errField(err))
	}
}

// nsMetadata returns metadata.<ns> as an object, or nil.
func nsMetadata(md map[string]any, ns string) map[string]any {
	inner, _ := md[ns].(map[string]any)
	return inner
}

func setIf(m map[string]any, k string, v any) {
	switch x := v.(type) {
	case string:
		if x == "" {
			return
		}
	case nil:
		return
	}
	m[k] = v
}

// truncate cuts s to maxTraceField characters (runes).
func truncate(s string) string {
	if utf8.RuneCountInString(s) <= maxTraceField {
		return s
	}
	return string([]rune(s)[:maxTraceField])
}

// truncJSON renders a JSON value for metadata: strings and small values as
// they are, anything longer than the limit as truncated text.
func truncJSON(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return truncate(string(raw))
	}
	if str, ok := v.(string); ok {
		return truncate(str)
	}
	if utf8.RuneCount(raw) > maxTraceField {
		return truncate(string(raw))
	}
	return v
}

func errField(err error) zap.Field { return zap.Error(err) }

// putContextSoon stores a new context record without waiting for the
// commit when the store allows it: losing it in a crash only unbinds the
// workspace, and the turn's final write commits it anyway.
func (s *Service) putContextSoon(ctx context.Context, rec store.ContextRecord) error {
	if nw, ok := s.hub.store.(store.NoWaitWriter); ok {
		return nw.PutContextNoWait(rec)
	}
	return s.st.PutContext(context.WithoutCancel(ctx), rec)
}

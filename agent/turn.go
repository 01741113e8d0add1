package agent

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"
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

// turnState accumulates what a running turn has produced.
type turnState struct {
	text      strings.Builder
	end       *backend.Event
	usage     *backend.Event
	artifacts int
	// baseURL is the gateway URL artifact links are built on.
	baseURL string
	// span is the turn's span context: the final write carries it, so
	// the push jobs it queues link their delivery spans to the turn.
	span trace.SpanContext
	// content is set once a content event (text, message, tool, artifact…)
	// was mapped; direct holds the reply of a message event (TURN-1).
	content bool
	direct  *a2a.Message
	// stored maps an artifact id to its stored payload, for append.
	stored map[string]storedArtifact
	// invalid is the correlation id of a turn that failed on backend
	// output breaking the turn-event protocol (a backend.ProtocolError).
	invalid string
}

// turnRun is what a running turn's deferred end needs: its outcome so far,
// its span and the shared context lease to give up.
type turnRun struct {
	ctx     context.Context // the turn's context, with its span
	span    trace.Span
	started time.Time
	corr    string
	state   a2a.TaskState
	text    string
	ts      turnState
	// releaseShared gives the shared context lease up after the final
	// write, so that another instance's next turn sees this one's result.
	releaseShared func()
	// lease is the shared context lease (nil: none), which a store with
	// Capabilities.FinalRelease gives up within the final write.
	lease store.ContextLease
}

// execute runs one turn of r to its final state. A turn waiting in its
// backend holds this frame and runTurn's on its goroutine's stack: both
// stay small (their work is in helpers that have returned), so the
// collector can shrink a parked turn's stack to 4 KiB (issue 17).
func (s *Service) execute(ctx context.Context, r *run, msg *a2a.Message, in *turnInput) {
	t := s.beginTurn(ctx, r, in)
	defer s.endTurn(r, t)
	c, cwd := s.leaseTurn(t, r, msg, in)
	if c == nil {
		return
	}
	defer s.unleaseTurn(c)
	t.state, t.text = s.runTurn(t.ctx, r, msg, in, c, cwd, &t.ts, t.corr)
}

// beginTurn starts the turn's span and its outcome: failed until told
// otherwise.
//
//go:noinline
func (s *Service) beginTurn(ctx context.Context, r *run, in *turnInput) *turnRun {
	t := &turnRun{started: time.Now(), corr: newCorrelationID(), state: a2a.TaskStateFailed, ts: turnState{baseURL: in.baseURL}}
	taskID, ctxID := r.ids()
	t.ctx, t.span = r.trace.start(ctx, s, r.owner, taskID, ctxID)
	t.ts.span = t.span.SpanContext()
	return t
}

// endTurn stores the turn's final state (a panic of the turn fails it),
// gives the shared context lease up and ends the span and the turn's log
// line. It is deferred by execute (and recovers there).
func (s *Service) endTurn(r *run, t *turnRun) {
	if v := recover(); v != nil {
		s.cfg.Logger.Error("turn panicked", zap.Any("panic", v), zap.String("correlation_id", t.corr))
		t.state, t.text = a2a.TaskStateFailed, internalMessage(t.corr)
	}
	if fr := s.st.caps().FinalRelease; fr != nil && t.lease != nil {
		taskID, _ := r.ids()
		fr.ReleaseWithFinalWrite(t.lease, taskID) // one round trip fewer (issue 32)
	}
	final := s.finalize(r, t.state, t.text, &t.ts)
	if t.releaseShared != nil {
		t.releaseShared()
	}
	endTurnSpan(t.span, final.Status.State)
	s.logTurn(r, final, t.started, t.corr, &t.ts)
}

// leaseTurn takes what a turn runs under: its context's lease, the shared
// lease (SCALE-3) and a concurrency slot, and returns the context and its
// workspace; nil, with t's outcome set, when the turn is refused (nothing
// is then held but the shared lease, which endTurn gives up). On success
// the caller gives the slot and the context back with unleaseTurn.
//
//go:noinline
func (s *Service) leaseTurn(t *turnRun, r *run, msg *a2a.Message, in *turnInput) (*convContext, string) {
	ctx := t.ctx
	if t.text = refusal(in); t.text != "" {
		return nil, ""
	}
	// The context lease first, then a concurrency slot: a message waiting
	// for its busy context must not hold a slot other contexts could use.
	waitUntil := time.Now().Add(s.cfg.ContextWait)
	c, cwd, refused := s.turnContext(ctx, r.owner, msg.ContextID, in)
	if refused != "" {
		t.text = refused
		return nil, ""
	}
	if !c.acquire(ctx, s.cfg.ContextWait) {
		if errors.Is(context.Cause(ctx), errCanceledByClient) {
			t.state, t.text = a2a.TaskStateCanceled, msgCanceled
			return nil, ""
		}
		t.text = msgAlreadyWorking
		return nil, ""
	}
	// Until the turn has all it runs under, c is given back on the way
	// out, a panic included (endTurn recovers it).
	held := false
	defer func() {
		if !held {
			c.release()
		}
	}()
	// The same context on other instances (SCALE-3; no-op on SQLite).
	lease, release, leased, failed := s.leaseShared(ctx, c, waitUntil)
	if !leased {
		switch {
		case errors.Is(context.Cause(ctx), errCanceledByClient):
			t.state, t.text = a2a.TaskStateCanceled, msgCanceled
		case failed:
			t.text = msgTransient
			r.mu.Lock()
			r.storeRefused = true
			r.mu.Unlock()
		default:
			t.text = msgAlreadyWorking
		}
		return nil, ""
	}
	t.releaseShared, t.lease = release, lease
	if !acquireSlot(ctx, s.slots, s.cfg.ContextWait) {
		t.text = msgBusy
		return nil, ""
	}
	held = true
	return c, cwd
}

// unleaseTurn gives up the slot and the context lease leaseTurn took.
func (s *Service) unleaseTurn(c *convContext) {
	<-s.slots
	c.release()
}

// turnContext returns the context of a turn and the workspace it runs in,
// or the status message refusing it. The context may have been bound
// meanwhile (a concurrent first message): a message that named no cwd and
// read no file against the one it assumed follows the binding (INPUT-1);
// otherwise it is another workspace (RPC-6).
func (s *Service) turnContext(ctx context.Context, owner, id string, in *turnInput) (*convContext, string, string) {
	cwd := in.cwd
	c, bound := s.contextFor(ctx, owner, id, cwd, in.newContext)
	if bound != cwd {
		if in.cwdGiven || in.readFiles {
			return nil, "", msgOtherWorkspace
		}
		if res, err := s.cfg.Workspace.Resolve(bound); err != nil || res != bound {
			return nil, "", msgInvalidWorkspace
		}
		cwd = bound
	}
	return c, cwd, ""
}

// runTurn runs the leased turn on the backend in workspace cwd and returns
// its final state and status message: WORKING first, the attachments
// stored, then the backend's events mapped as they come (TURN-6) and the
// context's changed session state saved.
func (s *Service) runTurn(ctx context.Context, r *run, msg *a2a.Message, in *turnInput, c *convContext, cwd string, ts *turnState, corr string) (a2a.TaskState, string) {
	treq, state, text := s.turnRequest(ctx, r, msg, in, c, cwd, corr)
	if treq == nil {
		return state, text
	}
	before := c.session.State
	runErr := s.cfg.Backend.RunTurn(ctx, treq, func(ev backend.Event) error { return s.onEvent(ctx, r, ts, ev) })
	return s.afterTurn(ctx, r, c, ts, runErr, corr, before)
}

// turnRequest publishes WORKING, stores the attachments and returns the
// backend's request; nil and the outcome when the turn ends before it.
//
//go:noinline
func (s *Service) turnRequest(ctx context.Context, r *run, msg *a2a.Message, in *turnInput, c *convContext, cwd string, corr string) (*backend.TurnRequest, a2a.TaskState, string) {
	s.publishStatus(r, a2a.TaskStatus{State: a2a.TaskStateWorking}, nil)
	taskID, ctxID := r.ids()
	if ctx.Err() != nil {
		return nil, a2a.TaskStateFailed, "" // canceled meanwhile; the deferred finalize says so
	}
	if r.durable {
		// The caller already knows the task: listings (and other
		// instances) see it working at once (a queued write; the final
		// one is durable). Deferring it to the lazy-write timer would
		// save a write per quick stream but let ListTasks say SUBMITTED
		// while GetTask says WORKING (issue 17: tried, reverted).
		s.lazyWrite(r)
	}

	if err := storeInputs(s.cfg.InputDir, taskID, in.attachments); err != nil {
		s.cfg.Logger.Error("storing input attachments", errField(err), zap.String("correlation_id", corr))
		return nil, a2a.TaskStateFailed, internalMessage(corr)
	}
	return &backend.TurnRequest{V: backend.EventVersion, Type: "turn", ContextID: ctxID, TaskID: taskID, MessageID: msg.MessageID,
		Cwd: cwd, Prompt: in.prompt(), Text: in.text, Attachments: in.attachments, Credentials: in.credentials,
		Message: msg, Metadata: nsMetadata(msg.Metadata, s.cfg.Namespace), Session: &c.session,
		TraceParent: backend.TraceParent(ctx)}, "", ""
}

// afterTurn maps the backend's return to the turn's final state and status
// message and saves the context's session state if the turn changed it.
//
//go:noinline
func (s *Service) afterTurn(ctx context.Context, r *run, c *convContext, ts *turnState, runErr error, corr string, before []byte) (a2a.TaskState, string) {
	state, text := s.outcome(ctx, ts, runErr, corr)
	if !bytes.Equal(before, c.session.State) {
		_, ctxID := r.ids()
		s.saveSessionState(ctx, r.owner, ctxID, c)
	}
	return state, text
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

// acquireSlot takes a concurrency slot of the turn pool, waiting at most
// wait for one; false when none came free or ctx ended (RPC-6).
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

package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// Idempotent sends (RPC-18), opt-in: a SendMessage or SendStreamingMessage
// that activates IdempotentSendExtension (or any, with Config.DedupeAlways;
// see Service.idempotent) and whose messageId the same principal already
// sent, so deduplicated, to the same task or context within
// Config.DedupeWindow starts no second turn; it answers with the task the
// first send created (blocking: as it is once that turn is over;
// streaming: its events from the first send's turn on). The same id with
// another body is InvalidParams. A send that does not deduplicate is
// neither checked nor recorded: A2A 1.0 lets clients reuse a messageId.
//
// The target is part of the key: a resend that adds the contextId the
// server assigned to the first send (a new target) is a second turn.

// dedupeTarget is what a message is sent to, as SentMessage.Target.
func dedupeTarget(m *a2a.Message) string {
	if m.TaskID != "" {
		return "task:" + m.TaskID
	}
	return "context:" + m.ContextID
}

// messageHash is a canonical hash of what a message says (role, parts,
// metadata, extensions, references), as SentMessage.BodyHash: the JSON of
// the decoded message, which encoding/json writes deterministically
// (fields in order, map keys sorted).
func messageHash(m *a2a.Message) (string, error) {
	// The message without id, context and task encodes as
	// {"messageId":"","role":…}: with '{' for its head, the bytes of the
	// struct below, without encoding/json's reflection (issue 17).
	const head = `{"messageId":"",`
	body := a2a.Message{Role: m.Role, Parts: m.Parts, Metadata: m.Metadata, Extensions: m.Extensions, ReferenceTaskIDs: m.ReferenceTaskIDs}
	if b, err := body.AppendJSON(make([]byte, 0, 256)); err == nil && len(b) > len(head) && string(b[:len(head)]) == head {
		b = b[len(head)-1:]
		b[0] = '{'
		sum := sha256.Sum256(b)
		return hex.EncodeToString(sum[:]), nil
	}
	return messageHashMarshal(m)
}

// messageHashMarshal is messageHash by encoding/json: its bytes and errors.
func messageHashMarshal(m *a2a.Message) (string, error) {
	b, err := json.Marshal(struct {
		Role       a2a.Role       `json:"role"`
		Parts      []a2a.Part     `json:"parts"`
		Metadata   map[string]any `json:"metadata,omitempty"`
		Extensions []string       `json:"extensions,omitempty"`
		Refs       []string       `json:"referenceTaskIds,omitempty"`
	}{m.Role, m.Parts, m.Metadata, m.Extensions, m.ReferenceTaskIDs})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// claimSend records msg (to be sent as task taskID) for RPC-18 when the
// call deduplicates (on). It returns the earlier send of the same message,
// if any, and a release function that forgets the claim (to call when the
// send fails before its turn starts). Without a SentMessageStore, or when
// off, it records nothing.
func (s *Service) claimSend(ctx context.Context, on bool, owner string, msg *a2a.Message, taskID string) (*store.SentMessage, func(), error) {
	noop := func() {}
	sent := s.st.caps().Sent
	if !on || sent == nil || s.cfg.DedupeWindow < 0 {
		return nil, noop, nil
	}
	hash, err := messageHash(msg)
	if err != nil {
		return nil, noop, a2a.ErrInvalidParams("message", "cannot be encoded")
	}
	now := time.Now()
	rec := store.SentMessage{Owner: owner, MessageID: msg.MessageID, Target: dedupeTarget(msg), TaskID: taskID, BodyHash: hash, At: now}
	if msg.TaskID != "" {
		rec.StartSeq = s.lastSeq(ctx, msg.TaskID)
	}
	prior, err := sent.ClaimMessage(ctx, rec, now.Add(-s.cfg.DedupeWindow))
	if err != nil {
		s.cfg.Logger.Error("recording sent message", errField(err))
		return nil, noop, a2a.ErrInternal()
	}
	if prior != nil {
		if prior.BodyHash != hash {
			return nil, noop, a2a.ErrInvalidParams("message.messageId", "was already used for a different message; send a new messageId for new content")
		}
		return prior, noop, nil
	}
	return nil, func() {
		if err := sent.ForgetMessage(context.WithoutCancel(ctx), owner, rec.MessageID, rec.Target); err != nil {
			s.cfg.Logger.Warn("forgetting sent message", errField(err))
		}
	}, nil
}

// dedupeWaitStep is how often a resend polls for the first send's task
// while that send is still being set up.
const dedupeWaitStep = 10 * time.Millisecond

// priorRun finds the task of an earlier send: its live run (nil when no
// turn runs), else the stored task. The first send may still be setting
// its task up: it is looked for again for up to ContextWait.
func (s *Service) priorRun(ctx context.Context, owner string, prior *store.SentMessage) (*run, *a2a.Task, error) {
	deadline := time.Now().Add(s.cfg.ContextWait)
	for {
		if v, ok := s.hub.runs.Load(prior.TaskID); ok && v.(*run).owner == owner {
			return v.(*run), nil, nil
		}
		t, err := s.st.GetTask(ctx, owner, prior.TaskID)
		if err == nil {
			return nil, t, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			s.cfg.Logger.Error("reading task", errField(err))
			return nil, nil, a2a.ErrInternal()
		}
		if time.Now().After(deadline) {
			return nil, nil, a2a.ErrTaskNotFound(prior.TaskID)
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(dedupeWaitStep):
		}
	}
}

// resendResult answers a blocking resend: the first send's task once its
// turn is over (at once with returnImmediately), as SendMessage would.
func (s *Service) resendResult(ctx context.Context, owner string, prior *store.SentMessage, hl *int32, immediate bool) (*a2a.SendMessageResponse, error) {
	r, t, err := s.priorRun(ctx, owner, prior)
	if err != nil {
		return nil, err
	}
	switch {
	case r != nil:
		if !immediate {
			select {
			case <-r.done:
			case <-ctx.Done():
			}
		}
		if t, err = s.loadTask(ctx, owner, prior.TaskID); err != nil {
			return nil, err
		}
	case !immediate && runningState(t.Status.State) && s.hub.shared() != nil:
		// The first send's turn runs on another instance (SCALE-1).
		s.awaitElsewhere(ctx, owner, t.ID)
		if t, err = s.storedAfterTurn(ctx, owner, prior.TaskID); err != nil {
			return nil, err
		}
	}
	out := s.trimTask(*t, hl, true)
	if m := DirectReply(&out, s.cfg.Namespace); m != nil && !immediate {
		return &a2a.SendMessageResponse{Message: m}, nil
	}
	return &a2a.SendMessageResponse{Task: &out}, nil
}

// resendStream answers a streaming resend: the first send's task's events
// from the start of its turn (RPC-17 replay), then the live ones while a
// turn runs; a Task snapshot first when the log no longer holds them.
func (s *Service) resendStream(ctx context.Context, owner string, prior *store.SentMessage, hl *int32) (Stream, error) {
	for {
		r, t, err := s.priorRun(ctx, owner, prior)
		if err != nil {
			return nil, err
		}
		if se := s.hub.shared(); r == nil && se != nil && runningState(t.Status.State) {
			// The first send's turn runs on another instance (SCALE-1):
			// its events from the start of that turn, then live.
			after := prior.StartSeq
			return s.followElsewhere(ctx, se, owner, t.ID, &after)
		}
		if r == nil {
			last := s.lastSeq(ctx, t.ID)
			if replay, ok := s.storedReplay(ctx, t.ID, prior.StartSeq, last); ok {
				return &runStream{replay: replay}, nil
			}
			snap := s.trimTask(*t, hl, true)
			return &runStream{first: &snap, firstSeq: last}, nil
		}
		snap, seq, sub, ok := r.resumeLive(prior.StartSeq)
		if !ok {
			select {
			case <-r.done: // the turn is storing its final state
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			continue
		}
		rs := &runStream{sub: sub, run: r, firstSeq: seq}
		if snap != nil {
			t := s.trimTask(*snap, hl, true)
			rs.first = &t
		}
		return rs, nil
	}
}

// storedAfterTurn reads the task once the turn that ran elsewhere has
// stored its end: its last event is in the shared log a moment before its
// final write, so a task still read as running is read again (every
// dedupeWaitStep, up to followCheck).
func (s *Service) storedAfterTurn(ctx context.Context, owner, id string) (*a2a.Task, error) {
	deadline := time.Now().Add(followCheck)
	for {
		t, err := s.loadTask(ctx, owner, id)
		if err != nil || !runningState(t.Status.State) || time.Now().After(deadline) {
			return t, err
		}
		select {
		case <-ctx.Done():
			return t, nil
		case <-time.After(dedupeWaitStep):
		}
	}
}

// awaitElsewhere waits until the turn of task id, running on another
// instance, ends (or ctx ends): it follows the shared event log.
func (s *Service) awaitElsewhere(ctx context.Context, owner, id string) {
	fs, err := s.followElsewhere(ctx, s.hub.shared(), owner, id, nil)
	if err != nil {
		return
	}
	defer fs.Close()
	for {
		if _, ok := fs.Next(ctx); !ok {
			return
		}
	}
}

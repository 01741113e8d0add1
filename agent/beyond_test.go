package agent

import (
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// resendOf is m again under its messageId, with the given text.
func resendOf(m *a2a.Message, text string) *a2a.Message {
	return &a2a.Message{MessageID: m.MessageID, Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart(text)}}
}

// RPC-18 opt-in: a plain A2A 1.0 send (no extension activated) is never
// deduplicated: the same messageId with the same body, or with another,
// is a new task and a new turn each time, and it is not recorded, so a
// later send that activates the extension is not answered from it.
func TestPlainSendsReuseMessageID(t *testing.T) {
	var turns atomic.Int64
	e := newTestEnv(t, Config{Backend: countingBackend{&turns}})
	ctx := t.Context()
	m := msg("same")
	seen := map[string]bool{}
	for i, body := range []string{"same", "same", "other"} {
		r, err := e.svc.SendMessage(ctx, Call{Principal: "p"}, sendReq(resendOf(m, body)))
		if err != nil || r.Task == nil {
			t.Fatalf("plain send %d (%q): %v %v, want a task", i, body, r, err)
		}
		if seen[r.Task.ID] {
			t.Fatalf("plain send %d answered the earlier task %s", i, r.Task.ID)
		}
		seen[r.Task.ID] = true
	}
	if turns.Load() != 3 {
		t.Fatalf("%d turns, want 3 (one per plain send)", turns.Load())
	}
	// Streaming too: a new task.
	st, err := e.svc.SendStreamingMessage(ctx, Call{Principal: "p"}, sendReq(resendOf(m, "same")))
	if err != nil {
		t.Fatal(err)
	}
	evs := readEvents(t, st, -1)
	if evs[0].ev.Task == nil || seen[evs[0].ev.Task.ID] {
		t.Fatalf("plain streaming resend: first event %s, want a new task", mustJSON(evs[0].ev))
	}
	// The plain sends recorded nothing: an activated one starts a turn.
	act := Call{Principal: "p", Extensions: idemExt}
	a, err := e.svc.SendMessage(ctx, act, sendReq(resendOf(m, "same")))
	if err != nil || seen[a.Task.ID] || turns.Load() != 5 {
		t.Fatalf("activated send after plain ones: %v %v, %d turns; want a new task, 5 turns", a, err, turns.Load())
	}
	// …and a plain send after the activated one is still a new task.
	b, err := e.svc.SendMessage(ctx, Call{Principal: "p"}, sendReq(resendOf(m, "same")))
	if err != nil || b.Task.ID == a.Task.ID || turns.Load() != 6 {
		t.Fatalf("plain send after an activated one: %v %v, %d turns; want a new task, 6 turns", b, err, turns.Load())
	}
}

// RPC-18: `dedupe always` (DedupeAlways) deduplicates sends that activate
// nothing; `dedupe_window off` (negative) deduplicates none, even those
// that activate the extension, and the extension is then not offered.
func TestDedupeAlwaysAndOff(t *testing.T) {
	var turns atomic.Int64
	e := newTestEnv(t, Config{Backend: countingBackend{&turns}, DedupeAlways: true})
	ctx := t.Context()
	m := msg("x")
	a, err := e.svc.SendMessage(ctx, Call{}, sendReq(m))
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.svc.SendMessage(ctx, Call{}, sendReq(resendOf(m, "x")))
	if err != nil || b.Task.ID != a.Task.ID || turns.Load() != 1 {
		t.Fatalf("always: resend %v %v, %d turns; want task %s, one turn", b, err, turns.Load(), a.Task.ID)
	}
	var ae *a2a.Error
	if _, err := e.svc.SendMessage(ctx, Call{}, sendReq(resendOf(m, "y"))); !errors.As(err, &ae) || ae.Code != a2a.CodeInvalidParams {
		t.Fatalf("always: other body: %v, want -32602", err)
	}

	var offTurns atomic.Int64
	off := newTestEnv(t, Config{Backend: countingBackend{&offTurns}, DedupeWindow: -1})
	for range 2 {
		if _, err := off.svc.SendMessage(ctx, Call{Extensions: idemExt}, sendReq(resendOf(m, "x"))); err != nil {
			t.Fatal(err)
		}
	}
	if offTurns.Load() != 2 {
		t.Errorf("off: %d turns for two activated sends, want 2", offTurns.Load())
	}
	if active, _ := off.svc.negotiate(Call{Version: "1.0", Extensions: idemExt}); len(active) != 0 {
		t.Errorf("off: Negotiate activated %v, want none", active)
	}
}

// RPC-3, RPC-18, RPC-17: the built-in extensions are offered without a
// card, so Negotiate echoes exactly the ones a call activates and nothing
// for a plain call.
func TestNegotiateBuiltinExtensions(t *testing.T) {
	e := newTestEnv(t, Config{})
	for _, c := range []struct {
		exts, want []string
	}{
		{nil, nil},
		{[]string{"urn:unknown"}, nil},
		{idemExt, idemExt},
		{[]string{IdempotentSendExtension, StreamResumeExtension}, []string{StreamResumeExtension, IdempotentSendExtension}},
	} {
		active, err := e.svc.negotiate(Call{Version: "1.0", Extensions: c.exts})
		if err != nil || !slices.Equal(active, c.want) {
			t.Errorf("Negotiate(%v) = %v, %v; want %v", c.exts, active, err, c.want)
		}
	}
}

// RPC-18: the target is part of the key: resending a messageId with the
// contextId the server assigned to the first send is a second turn (the
// documented behaviour), not the first task.
func TestDedupeKeyIncludesContext(t *testing.T) {
	var turns atomic.Int64
	e := newTestEnv(t, Config{Backend: countingBackend{&turns}})
	ctx := t.Context()
	act := Call{Extensions: idemExt}
	m := msg("ctx")
	a, err := e.svc.SendMessage(ctx, act, sendReq(m))
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.svc.SendMessage(ctx, act, sendReq(inContext(resendOf(m, "ctx"), a.Task.ContextID)))
	if err != nil || b.Task.ID == a.Task.ID || turns.Load() != 2 {
		t.Fatalf("resend with the assigned contextId: %v %v, %d turns; want a second task and turn", b, err, turns.Load())
	}
}

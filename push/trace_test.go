package push

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// TestDeliverySpans (issue 28): a receiver that fails once then accepts
// gives two client spans, attempts 1 and 2, each linked (not parented) to
// the turn that stored the job, with the host of the callback and no part
// of its path, query or the token. A job stored without a
// trace parent (before the change) is still delivered, with no link.
func TestDeliverySpans(t *testing.T) {
	ctx := t.Context()
	st := openStore(t)
	kr, _ := NewKeyRing()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	q := NewLocalQueue(st, 0)
	e := NewEngine(q, kr, 1, Settings{Policy: &Policy{Allow: mustPrefixes("127.0.0.0/8")}, Tracer: tp}, nil)

	// The producing turn: a span in the ctx of the store write.
	turnCtx, turn := tp.Tracer("test").Start(ctx, "a2a.turn")
	hook := srv.URL + "/hook/secretpath?sig=secretquery" // the policy refuses user info
	putTracedJob(turnCtx, t, st, kr, hook, "t1")
	turn.End()

	for i := range 2 {
		js, err := q.Claim(ctx, 10)
		if err != nil || len(js) != 1 {
			t.Fatalf("claim %d: %v %v", i, js, err)
		}
		if js[0].TraceParent == "" {
			t.Fatal("the job lost its traceparent")
		}
		e.deliver(ctx, js[0])
		if i == 0 {
			if err := st.RetryPushJob(ctx, js[0].ID, 1, time.Now().Add(-time.Second), "retry now"); err != nil {
				t.Fatal(err)
			}
		}
	}
	spans := deliverSpans(rec)
	if len(spans) != 2 {
		t.Fatalf("%d delivery spans, want 2", len(spans))
	}
	for i, s := range spans {
		want := map[attribute.Key]string{AttrTaskID: "t1", AttrConfigID: "cfg", AttrHost: "127.0.0.1"}
		want[AttrOutcome], want[AttrStatus], want[AttrAttempt] = OutcomeRetry, "503", "1"
		if i == 1 {
			want[AttrOutcome], want[AttrStatus], want[AttrAttempt] = OutcomeDelivered, "200", "2"
		}
		checkSpan(t, s, want, turn.SpanContext())
	}

	// A job stored before the change: no traceparent, delivered, no link.
	putTracedJob(ctx, t, st, kr, srv.URL+"/hook", "t2")
	js, _ := q.Claim(ctx, 10)
	if len(js) != 1 || js[0].TraceParent != "" {
		t.Fatalf("claim: %+v", js)
	}
	e.deliver(ctx, js[0])
	spans = deliverSpans(rec)
	if last := spans[len(spans)-1]; len(spans) != 3 || len(last.Links()) != 0 || outcomeOf(last) != OutcomeDelivered {
		t.Fatalf("untraced job: %d spans, last %+v", len(spans), last.Attributes())
	}
}

func putTracedJob(ctx context.Context, t *testing.T, st *store.SQLite, kr *KeyRing, url, taskID string) {
	t.Helper()
	tok, err := kr.Seal("secrettoken", SecretAAD(taskID, "cfg", "token"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutPushConfig(ctx, store.PushConfig{Owner: "alice", TaskID: taskID, ID: "cfg", URL: url, Token: tok}); err != nil {
		t.Fatal(err)
	}
	task := &a2a.Task{ID: taskID, ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}
	if n, err := st.PutTaskWithJobs(ctx, "alice", task, []byte(`{"statusUpdate":{}}`)); err != nil || n != 1 {
		t.Fatalf("PutTaskWithJobs: %d %v", n, err)
	}
}

func deliverSpans(rec *tracetest.SpanRecorder) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == SpanName {
			out = append(out, s)
		}
	}
	return out
}

func outcomeOf(s sdktrace.ReadOnlySpan) string {
	for _, kv := range s.Attributes() {
		if kv.Key == AttrOutcome {
			return kv.Value.AsString()
		}
	}
	return ""
}

// checkSpan checks a delivery span's kind, attributes, link and parent,
// and that no attribute holds a secret of the callback.
func checkSpan(t *testing.T, s sdktrace.ReadOnlySpan, want map[attribute.Key]string, turn trace.SpanContext) {
	t.Helper()
	if s.SpanKind() != trace.SpanKindClient {
		t.Errorf("kind %v", s.SpanKind())
	}
	got := map[attribute.Key]string{}
	for _, kv := range s.Attributes() {
		got[kv.Key] = kv.Value.Emit()
		for _, secret := range []string{"secretpath", "secretquery", "secrettoken"} {
			if strings.Contains(kv.Value.Emit(), secret) {
				t.Errorf("attribute %s = %q holds %q", kv.Key, kv.Value.Emit(), secret)
			}
		}
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if ls := s.Links(); len(ls) != 1 || ls[0].SpanContext.TraceID() != turn.TraceID() || ls[0].SpanContext.SpanID() != turn.SpanID() {
		t.Errorf("links %+v, want the turn %v", ls, turn)
	}
	if s.Parent().IsValid() || s.SpanContext().TraceID() == turn.TraceID() {
		t.Errorf("the delivery span is in the turn's trace (parent %v): a link is wanted", s.Parent())
	}
}

// TestFollowTracer: a tracer taken before any provider is followed starts
// no-op spans, then spans of the provider followed last.
func TestFollowTracer(t *testing.T) {
	var f FollowTracer
	tr := f.Tracer("x")
	if _, s := tr.Start(t.Context(), "a"); s.SpanContext().IsValid() {
		t.Fatal("a span before any provider")
	}
	rec := tracetest.NewSpanRecorder()
	f.Follow(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	_, s := tr.Start(t.Context(), "b")
	s.End()
	if len(rec.Ended()) != 1 || rec.Ended()[0].Name() != "b" {
		t.Fatalf("spans %v", rec.Ended())
	}
}

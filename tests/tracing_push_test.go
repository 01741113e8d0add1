package tests

// Issue 28: push delivery attempts in traces, end to end through Caddy's
// tracing directive and a real OTLP/HTTP receiver.

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// TestTracingPushOTLP: a webhook that fails once then accepts gives two
// "a2a.push.deliver" spans (attempts 1 and 2, outcomes retry and
// delivered), each in a trace of its own with a link to the turn's span,
// and with no part of the callback's path or query nor the token.
func TestTracingPushOTLP(t *testing.T) {
	t.Parallel()
	recv := newOTLPReceiver(t)
	var hits atomic.Int64
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(hook.Close)
	gw := harness.StartGatewayWith(t, `
	tracing {
		span gateway
	}
	a2a {
		card {
			name traced-push
		}
		backend echo
		push {
			queue local-file
			allow_private_networks 127.0.0.0/8
			retry_initial 100ms
			retry_max 200ms
		}
	}`, harness.Options{Env: []string{
		"OTEL_TRACES_EXPORTER=otlp",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + recv.srv.URL + "/v1/traces",
		"OTEL_BSP_SCHEDULE_DELAY=100",
	}})
	_, rerr := harness.At(gw.URL+"/").RPC(t, "SendMessage", map[string]any{
		"message": bkMessage("push me", "", nil),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{
			"url": hook.URL + "/cb/secretpath?sig=secretquery", "token": "secrettoken"}},
	})
	if rerr != nil {
		t.Fatalf("SendMessage: %v", rerr)
	}
	turn := recv.span(t, "a2a.turn", 15*time.Second)
	spans := recv.deliverSpans(t, 2, 20*time.Second)
	for i, s := range spans {
		want := map[string]string{"a2a.push.outcome": "retry", "server.address": "127.0.0.1"}
		if i == 1 {
			want["a2a.push.outcome"] = "delivered"
		}
		for k, v := range want {
			if got := spanAttr(s, k); got != v {
				t.Errorf("attempt %d: %s = %q, want %q", i+1, k, got, v)
			}
		}
		if n := intAttr(s, "a2a.push.attempt"); n != int64(i+1) {
			t.Errorf("span %d: attempt %d", i, n)
		}
		if len(s.Links) != 1 || string(s.Links[0].TraceId) != string(turn.TraceId) || string(s.Links[0].SpanId) != string(turn.SpanId) {
			t.Errorf("attempt %d: links %v, want the turn", i+1, s.Links)
		}
		if string(s.TraceId) == string(turn.TraceId) {
			t.Errorf("attempt %d is in the turn's trace", i+1)
		}
		for _, kv := range s.Attributes {
			if v := kv.Value.String(); strings.Contains(v, "secret") {
				t.Errorf("attempt %d: %s = %s", i+1, kv.Key, v)
			}
		}
	}
}

// deliverSpans waits for n "a2a.push.deliver" spans, in attempt order.
func (o *otlpReceiver) deliverSpans(t *testing.T, n int, within time.Duration) []*tracepb.Span {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var out []*tracepb.Span
		o.mu.Lock()
		for _, s := range o.spans {
			if s.Name == "a2a.push.deliver" {
				out = append(out, s)
			}
		}
		o.mu.Unlock()
		if len(out) >= n {
			if len(out) == 2 && intAttr(out[0], "a2a.push.attempt") > intAttr(out[1], "a2a.push.attempt") {
				out[0], out[1] = out[1], out[0]
			}
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d delivery spans within %v, want %d", len(out), within, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func intAttr(s *tracepb.Span, key string) int64 {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.GetIntValue()
		}
	}
	return -1
}

package tests

// OPS-4 end to end: with Caddy's tracing directive on the site, the
// gateway's spans reach a real OTLP/HTTP receiver (protobuf decoded here),
// carry the A2A attributes, and the turn's trace context reaches the http
// backend's upstream.

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// otlpReceiver is an OTLP/HTTP trace receiver: it decodes every export
// request and keeps the spans.
type otlpReceiver struct {
	srv   *httptest.Server
	mu    sync.Mutex
	spans []*tracepb.Span
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	o := &otlpReceiver{}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "want protobuf on /v1/traces", http.StatusUnsupportedMediaType)
			return
		}
		b, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		var req collectortrace.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(b, &req)
		}
		if err != nil {
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		o.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				o.spans = append(o.spans, ss.Spans...)
			}
		}
		o.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		_, _ = w.Write(out)
	}))
	t.Cleanup(o.srv.Close)
	return o
}

// span returns the first span named name, waiting for the exporter.
func (o *otlpReceiver) span(t *testing.T, name string, within time.Duration) *tracepb.Span {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		o.mu.Lock()
		for _, s := range o.spans {
			if s.Name == name {
				o.mu.Unlock()
				return s
			}
		}
		o.mu.Unlock()
		time.Sleep(50 * time.Millisecond)
	}
	o.mu.Lock()
	var names []string
	for _, s := range o.spans {
		names = append(names, s.Name)
	}
	o.mu.Unlock()
	t.Fatalf("no span %q within %v (got %v)", name, within, names)
	return nil
}

func spanAttr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}

// TestTracingOTLP (OPS-4): a SendMessage through a traced site gives a
// server span "a2a.SendMessage" with the A2A attributes and a child span
// "a2a.turn" (backend, task, context, final state); the http backend's
// upstream receives a traceparent of the same trace.
func TestTracingOTLP(t *testing.T) {
	t.Parallel()
	recv := newOTLPReceiver(t)
	upstream, up := bkTurnUpstream(t)
	gw := harness.StartGatewayWith(t, `
	tracing {
		span gateway
	}
	a2a {
		card {
			name traced
		}
		auth {
			principal ops bearer ops-token
		}
		backend http `+upstream.URL+`/turn
	}`, harness.Options{Env: []string{
		"OTEL_TRACES_EXPORTER=otlp",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + recv.srv.URL + "/v1/traces",
		"OTEL_BSP_SCHEDULE_DELAY=100",
	}})

	res, rerr := harness.At(gw.URL+"/", harness.Bearer("ops-token")).RPC(t, "SendMessage", map[string]any{"message": bkMessage("ndjson please", "", nil)})
	if rerr != nil {
		t.Fatalf("SendMessage: %v", rerr)
	}
	taskID, ctxID := bkStr(res, "task", "id"), bkStr(res, "task", "contextId")

	server := recv.span(t, "a2a.SendMessage", 15*time.Second)
	for k, want := range map[string]string{"a2a.method": "SendMessage", "a2a.principal": "ops", "a2a.task.id": taskID, "a2a.context.id": ctxID, "a2a.task.state": "TASK_STATE_INPUT_REQUIRED"} {
		if got := spanAttr(server, k); got != want {
			t.Errorf("server span %s = %q, want %q", k, got, want)
		}
	}
	turn := recv.span(t, "a2a.turn", 15*time.Second)
	if string(turn.TraceId) != string(server.TraceId) || string(turn.ParentSpanId) != string(server.SpanId) {
		t.Errorf("turn span is not a child of the request span")
	}
	for k, want := range map[string]string{"a2a.backend": "http", "a2a.task.id": taskID, "a2a.context.id": ctxID, "a2a.task.state": "TASK_STATE_INPUT_REQUIRED", "a2a.principal": "ops"} {
		if got := spanAttr(turn, k); got != want {
			t.Errorf("turn span %s = %q, want %q", k, got, want)
		}
	}
	// The upstream got the turn's trace context, header and body.
	req, hdr := up.last()
	tp := hdr.Get("Traceparent")
	parts := strings.Split(tp, "-")
	if len(parts) != 4 || parts[1] != hex.EncodeToString(turn.TraceId) || parts[2] != hex.EncodeToString(turn.SpanId) {
		t.Errorf("upstream traceparent %q, want trace %x span %x", tp, turn.TraceId, turn.SpanId)
	}
	if req["traceparent"] != tp {
		t.Errorf("turn request traceparent %v, want %q", req["traceparent"], tp)
	}
}

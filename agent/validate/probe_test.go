package validate

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// probeServer is a JSON-RPC agent whose SendStreamingMessage answers with
// stream (the raw event-stream bytes); every other call answers
// TaskNotFound. It records the requests' envelopes.
func probeServer(t *testing.T, stream string) (*httptest.Server, *[]map[string]any) {
	var seen []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req)
		seen = append(seen, req)
		if req["method"] == "SendStreamingMessage" {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, stream)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found"}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func probeCardFor(u string) []byte {
	return []byte(`{"supportedInterfaces":[{"url":"` + u + `/","protocolBinding":"JSONRPC"}],"capabilities":{"streaming":true}}`)
}

func streamingFindings(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		if f.Pointer != "/supportedInterfaces/0" || f.Severity != Info {
			out = append(out, f.String())
		}
	}
	return out
}

// TestProbeReadsEventStreams: CARD-9's streaming probe reads the first
// event by the HTML standard's rules (internal/sse). Its own reader split
// lines only at LF, kept a byte-order mark and cut an over-long stream
// short without saying so: the CR, byte-order mark and over-limit cases
// gave a false or a misleading finding before.
func TestProbeReadsEventStreams(t *testing.T) {
	const ok = `{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t","status":{"state":"TASK_STATE_SUBMITTED"}}}}`
	const failed = `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}`
	cases := []struct {
		name, stream string
		want         string // a finding's text, "" for none
	}{
		{"LF", "data: " + ok + "\n\n", ""},
		{"CR line ends", ": hi\rdata: " + ok + "\r\r", ""},
		{"byte-order mark", "\uFEFFdata: " + ok + "\n\n", ""},
		{"an empty event first", "data:\n\ndata: " + ok + "\n\n", ""},
		{"data split over lines", "data: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":1,\"result\":{}}\r\n\r\n", ""},
		{"an error in CR framing", "data: " + failed + "\r\r", "the stream answered error -32603: boom"},
		{"no event", ": keep-alive\n\n", "the stream carried no JSON event"},
		{"an event over the limit", "data: " + strings.Repeat("x", 2048) + "\n\n", "more than 1024 bytes before the first event"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, seen := probeServer(t, c.stream)
			fs := streamingFindings(Probe(context.Background(), probeCardFor(srv.URL), ProbeOptions{FetchOptions: FetchOptions{MaxBytes: 1024}}))
			switch {
			case c.want == "" && len(fs) > 0:
				t.Fatalf("findings %q, want none", fs)
			case c.want != "" && (len(fs) != 1 || !strings.Contains(fs[0], "/capabilities/streaming") || !strings.Contains(fs[0], c.want)):
				t.Fatalf("findings %q, want one /capabilities/streaming finding with %q", fs, c.want)
			}
			for _, req := range *seen {
				if req["jsonrpc"] != "2.0" || req["id"] != float64(1) || req["method"] == "" || req["params"] == nil {
					t.Errorf("request envelope %v", req)
				}
			}
		})
	}
}

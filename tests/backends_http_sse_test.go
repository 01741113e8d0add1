package tests

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// TestBackendsHTTPSSEFraming: the http backend (TURN-4) reads an upstream
// event stream by the HTML standard's rules (internal/sse): a byte-order
// mark, CR and CRLF line ends, comments, id and event fields, data lines
// joined with "\n"; and its limits hold: an event beyond max_line_size
// and a stream beyond max_output_size fail the turn as an invalid agent
// response, without the upstream's bytes.
func TestBackendsHTTPSSEFraming(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		req, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		prompt := string(req) // the turn request as JSON; the prompt is in it
		switch {
		case strings.Contains(prompt, "cr-lines"):
			fmt.Fprint(w, "\uFEFF: hello\r")
			fmt.Fprint(w, "id: 1\revent: turn\rdata: {\"v\":1,\"type\":\"text\",\rdata:\"text\":\"cr \"}\r\r")
			fmt.Fprint(w, "data: {\"v\":1,\"type\":\"text\",\"text\":\"lines\"}\r\n\r\n")
			fmt.Fprint(w, "data: {\"v\":1,\"type\":\"end\",\"outcome\":\"completed\"}\r\r")
		case strings.Contains(prompt, "big-event"):
			fmt.Fprintf(w, "data: {\"v\":1,\"type\":\"text\",\"text\":\"%s\"}\n\n", strings.Repeat("secret-upstream-detail ", 100))
		case strings.Contains(prompt, "long-stream"):
			for i := 0; i < 200; i++ {
				fmt.Fprint(w, "data: {\"v\":1,\"type\":\"text\",\"text\":\"secret-upstream-detail\"}\n\n")
			}
		}
	}))
	t.Cleanup(srv.Close)
	gw := harness.StartGatewayWith(t, `a2a {
	card {
		name http-sse-agent
	}
	backend http `+srv.URL+`/turn {
		max_line_size 1KiB
		max_output_size 4KiB
	}
}`, harness.Options{})

	res, rpcErr := harness.At(gw.URL).RPC(t, "SendMessage", map[string]any{"message": bkMessage("cr-lines", "", nil)})
	if rpcErr != nil {
		t.Fatalf("cr-lines: %v", rpcErr)
	}
	if state, text := bkStr(res, "task", "status", "state"), bkStr(res, "task", "status", "message", "parts", 0, "text"); state != "TASK_STATE_COMPLETED" || text != "cr lines" {
		t.Errorf("cr-lines turn: %s %q, want TASK_STATE_COMPLETED \"cr lines\"", state, text)
	}
	for _, prompt := range []string{"big-event", "long-stream"} {
		_, rpcErr := harness.At(gw.URL).RPC(t, "SendMessage", map[string]any{"message": bkMessage(prompt, "", nil)})
		if rpcErr == nil || rpcErr["code"] != float64(-32006) || strings.Contains(bkStr(rpcErr, "message"), "secret-upstream-detail") {
			t.Errorf("%s answered %v, want -32006 without the upstream's bytes", prompt, rpcErr)
		}
	}
}

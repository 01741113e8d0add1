package tests

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// wsSlowSite is a WebSocket site whose turns take ~3 s, with the given
// extra agent options.
func wsSlowSite(extra string) string {
	return `a2a {
	card {
		name ws-ops
	}
	auth {
		bearer ws-token
	}
	backend echo {
		chunks 30
		delay 100ms
	}
	websocket
	` + extra + `
}`
}

// taskState reads a task's state over JSON-RPC (HTTP).
func wsTaskState(t *testing.T, gw *harness.Gateway, id string) string {
	t.Helper()
	res, rerr := harness.At(gw.URL+"/", harness.Bearer("ws-token")).RPC(t, "GetTask", map[string]any{"id": id})
	if rerr != nil {
		t.Fatalf("GetTask: %v", rerr)
	}
	st, _ := res["status"].(map[string]any)
	s, _ := st["state"].(string)
	return s
}

// streamTaskID opens a stream over w and returns its task id from the
// first event.
func streamTaskID(t *testing.T, w *wsTestConn, id string) string {
	t.Helper()
	w.request(id, "SendStreamingMessage", wsMessage("a prompt long enough to stream for a while over the socket"), nil)
	waitFrames(t, w, `"`+id+`"`, 1)
	for _, f := range w.all() {
		if string(f.ID) == `"`+id+`"` && f.Payload != nil {
			var v struct {
				Task struct{ ID string } `json:"task"`
			}
			if err := json.Unmarshal(f.Payload.Result, &v); err == nil && v.Task.ID != "" {
				return v.Task.ID
			}
		}
	}
	t.Fatalf("no task in the first frame of %s", id)
	return ""
}

// TestWebSocketDisconnectRules: closing the connection closes its streams
// with the rules of an SSE client going away (XPORT-3): the turn goes on
// by default and is canceled with cancel_on_disconnect.
func TestWebSocketDisconnectRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, extra, want string
	}{
		{"turn goes on", "", "TASK_STATE_INPUT_REQUIRED"},
		{"cancel_on_disconnect", "cancel_on_disconnect", "TASK_STATE_CANCELED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gw := harness.StartGateway(t, wsSlowSite(tc.extra))
			w := dialWS(t, wsURL(gw.URL, "/ws"), wsAuth(), nil)
			id := streamTaskID(t, w, "s")
			_ = w.c.CloseNow()
			deadline := time.Now().Add(15 * time.Second)
			for {
				st := wsTaskState(t, gw, id)
				if st == tc.want {
					return
				}
				if st != "TASK_STATE_WORKING" && st != "TASK_STATE_SUBMITTED" || time.Now().After(deadline) {
					t.Fatalf("task %s after the disconnect: %s, want %s", id, st, tc.want)
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}

// TestWebSocketReloadClosesConnections: a config reload closes the old
// handler's connections with 1001 (OPS-3, XPORT-3); the turn goes on and
// a new connection works on the new config.
func TestWebSocketReloadClosesConnections(t *testing.T) {
	t.Parallel()
	gw := harness.StartGatewayWith(t, wsSlowSite(""), harness.Options{Admin: true})
	w := dialWS(t, wsURL(gw.URL, "/ws"), wsAuth(), nil)
	id := streamTaskID(t, w, "s")
	gw.Reload(wsSlowSite("history_limit 50"))
	err := w.closed(15 * time.Second)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusGoingAway {
		t.Fatalf("after the reload: %v, want close status 1001", err)
	}
	w2 := dialWS(t, wsURL(gw.URL, "/ws"), wsAuth(), nil)
	w2.request("sub", "SubscribeToTask", map[string]any{"id": id}, nil)
	fs := w2.waitFinal(`"sub"`, 20*time.Second)
	if len(fs) < 2 || !strings.Contains(fs[len(fs)-2].raw, "TASK_STATE_INPUT_REQUIRED") {
		t.Fatalf("resubscribed after the reload: %v", fs)
	}
}

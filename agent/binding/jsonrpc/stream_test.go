package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/agenttest"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
)

// pumpEnv is a dispatcher over a real SQLite store and a slow echo
// backend (20 chunks, 20ms apart, then INPUT_REQUIRED: the end of a turn
// that was not canceled), canceling a streaming turn whose client goes
// away.
type pumpEnv struct {
	d       *Dispatcher
	svc     *agent.Service
	metrics *agent.Metrics
}

func newPumpEnv(t *testing.T) pumpEnv {
	t.Helper()
	svc, m := agenttest.Service(t, agent.Config{Backend: backend.EchoBackend{Chunks: 20, Delay: 20 * time.Millisecond}, CancelOnDisconnect: true})
	return pumpEnv{d: NewDispatcher(agent.NewHandler(svc)), svc: svc, metrics: m}
}

// taskIDOf reads the task id of a stream's first event frame.
func taskIDOf(t *testing.T, frame []byte) string {
	t.Helper()
	var f struct {
		Result struct {
			Task struct {
				ID string `json:"id"`
			} `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal(frame, &f); err != nil || f.Result.Task.ID == "" {
		t.Fatalf("first frame %s: no task id (%v)", frame, err)
	}
	return f.Result.Task.ID
}

var errPeerGone = errors.New("peer gone")

// XPORT-3, XPORT-4, XPORT-5, RPC-17: Pump's one order for the frame
// carriers. When the peer goes away mid-stream (a failed write, or the
// carrier ending ctx), or the stream ends, the stream is released (closed:
// the turn is canceled, as its client left; detached with DetachOnStop:
// the turn goes on) and no longer counted open before Released runs, and
// Released runs before the final frame; after a failed write there is no
// final frame.
func TestPumpReleaseOrder(t *testing.T) {
	cases := []struct {
		name      string
		detach    bool
		failWrite bool // the second event's write fails
		cancelCtx bool // the carrier ends ctx at the second event
		wantFinal bool
		stopped   bool
		wantErr   error
		wantState a2a.TaskState
	}{
		{name: "write fails, closed", failWrite: true, wantErr: errPeerGone, wantState: a2a.TaskStateCanceled},
		{name: "write fails, detached", detach: true, failWrite: true, wantErr: errPeerGone, wantState: a2a.TaskStateInputRequired},
		{name: "ctx ends, closed", cancelCtx: true, wantFinal: true, stopped: true, wantState: a2a.TaskStateCanceled},
		{name: "ctx ends, detached", detach: true, cancelCtx: true, wantFinal: true, stopped: true, wantState: a2a.TaskStateInputRequired},
		{name: "stream ends", wantFinal: true, wantState: a2a.TaskStateInputRequired},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newPumpEnv(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			msg := `{"jsonrpc":"2.0","id":7,"method":"SendStreamingMessage","params":{"message":{"role":"ROLE_USER","messageId":"m-1","parts":[{"text":"a b c d e f g h i j k l m n o p q r s t"}]}}}`
			out := e.d.Handle(ctx, agent.Call{Version: "1.0"}, []byte(msg))
			if out.Stream == nil {
				t.Fatalf("no stream: %s", out.Response)
			}
			var steps []string
			var frames [][]byte
			var taskID string
			err := e.d.Pump(ctx, out, Carrier{
				Send: func(frame []byte) error {
					if len(frames) == 0 {
						taskID = taskIDOf(t, frame)
						if n := agenttest.OpenStreams(t, e.metrics); n != 1 {
							t.Errorf("%v open streams while streaming, want 1", n)
						}
					}
					frames = append(frames, frame)
					if len(frames) == 2 && tc.failWrite {
						return errPeerGone
					}
					if len(frames) == 2 && tc.cancelCtx {
						cancel()
					}
					return nil
				},
				Released: func() {
					steps = append(steps, "released")
					if n := agenttest.OpenStreams(t, e.metrics); n != 0 {
						t.Errorf("%v open streams at Released, want 0", n)
					}
				},
				Final: func(id json.RawMessage, stopped bool) error {
					steps = append(steps, "final")
					if string(id) != "7" || stopped != tc.stopped {
						t.Errorf("Final(%s, %v), want (7, %v)", id, stopped, tc.stopped)
					}
					return nil
				},
				DetachOnStop: tc.detach,
			})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Pump = %v, want %v", err, tc.wantErr)
			}
			want := []string{"released"}
			if tc.wantFinal {
				want = append(want, "final")
			}
			if len(steps) != len(want) || steps[0] != want[0] || len(steps) == 2 && steps[1] != want[1] {
				t.Fatalf("steps %v, want %v", steps, want)
			}
			if n := agenttest.OpenStreams(t, e.metrics); n != 0 {
				t.Fatalf("%v open streams after Pump, want 0", n)
			}
			if !tc.failWrite && !tc.cancelCtx && len(frames) < 3 {
				t.Fatalf("a full stream sent %d frames", len(frames))
			}
			agenttest.WaitState(t, e.svc, taskID, tc.wantState)
		})
	}
}

// XPORT-4, XPORT-5: the end frame of the JSON-RPC frame carriers, byte
// for byte.
func TestEndFrame(t *testing.T) {
	for id, want := range map[string]string{
		`7`:     `{"jsonrpc":"2.0","id":7,"final":true}`,
		`"a-1"`: `{"jsonrpc":"2.0","id":"a-1","final":true}`,
		`null`:  `{"jsonrpc":"2.0","id":null,"final":true}`,
	} {
		if got := string(EndFrame(json.RawMessage(id))); got != want {
			t.Errorf("EndFrame(%s) = %s, want %s", id, got, want)
		}
	}
}

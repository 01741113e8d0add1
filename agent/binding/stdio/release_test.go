package stdio

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/agenttest"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc"
)

// XPORT-4: when the output fails mid-stream (its reader went away) the
// stream is released (closed: with cancel_on_disconnect its turn is
// canceled), the open-stream gauge is back at 0, no final line is written
// and Serve returns the write error.
func TestOutputGoneReleasesStream(t *testing.T) {
	svc, m := agenttest.Service(t, agent.Config{Backend: backend.EchoBackend{Chunks: 40, Delay: 50 * time.Millisecond}, CancelOnDisconnect: true})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), jsonrpc.NewDispatcher(agent.NewHandler(svc)), inR, outW, Options{})
	}()
	t.Cleanup(func() { _ = inW.Close() })

	go func() {
		_, _ = io.WriteString(inW, sendLine("s1", a2a.MethodSendStreamingMessage, "a b c d e f g h")+"\n")
	}()
	first, err := bufio.NewReader(outR).ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Result a2a.StreamResponse `json:"result"`
	}
	if err := json.Unmarshal(first, &r); err != nil || r.Result.Task == nil {
		t.Fatalf("first line %s: %v", first, err)
	}
	if n := agenttest.OpenStreams(t, m); n != 1 {
		t.Fatalf("%v open streams while streaming, want 1", n)
	}
	_ = outR.Close() // the next write fails
	select {
	case err := <-done:
		if !errors.Is(err, io.ErrClosedPipe) {
			t.Fatalf("Serve = %v, want the write error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its output failed")
	}
	if n := agenttest.OpenStreams(t, m); n != 0 {
		t.Fatalf("%v open streams after the output failed, want 0", n)
	}
	agenttest.WaitState(t, svc, r.Result.Task.ID, a2a.TaskStateCanceled)
}

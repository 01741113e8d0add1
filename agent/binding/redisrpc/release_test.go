package redisrpc

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/agenttest"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
)

// XPORT-5: a consumer stopped mid-stream detaches the stream (the turn
// goes on, even with cancel_on_disconnect: the request stays pending and
// is served again), the open-stream gauge is back at 0 and no final entry
// is written.
func TestRedisRPCStopDetachesStream(t *testing.T) {
	rdb := startRedis(t)
	svc, m := agenttest.Service(t, agent.Config{Backend: backend.EchoBackend{Chunks: 30, Delay: 100 * time.Millisecond}, CancelOnDisconnect: true})
	a := New(rdb, jsonrpcDispatcher(svc), Options{ClaimAfter: time.Minute, Consumer: "a"}, nil, nil)
	if err := a.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	send(t, rdb, "cut", replyStream, rpcPayload(1, a2a.MethodSendStreamingMessage, sendParams("a b c d e f g h")), nil)
	waitFor(t, func() bool { return rdb.XLen(t.Context(), replyStream).Val() >= 1 })
	first := rdb.XRange(t.Context(), replyStream, "-", "+").Val()[0]
	var r struct {
		Result a2a.StreamResponse `json:"result"`
	}
	if err := json.Unmarshal([]byte(first.Values[FieldPayload].(string)), &r); err != nil || r.Result.Task == nil {
		t.Fatalf("first entry %v: %v", first.Values, err)
	}
	if n := agenttest.OpenStreams(t, m); n != 1 {
		t.Fatalf("%v open streams while streaming, want 1", n)
	}
	a.Stop(50 * time.Millisecond)
	if s := a.Stats(); s.Abandoned != 1 {
		t.Fatalf("stats %+v, want the request abandoned", s)
	}
	if n := agenttest.OpenStreams(t, m); n != 0 {
		t.Fatalf("%v open streams after the stop, want 0", n)
	}
	for _, e := range rdb.XRange(t.Context(), replyStream, "-", "+").Val() {
		if e.Values[FieldFinal] == "true" {
			t.Fatalf("a final entry after the stop: %v", e.Values)
		}
	}
	agenttest.WaitState(t, svc, r.Result.Task.ID, a2a.TaskStateInputRequired)
}

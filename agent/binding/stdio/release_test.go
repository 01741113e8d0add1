package stdio

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
	"github.com/caddy-a2a/caddy-a2a/internal/promtest"
)

// XPORT-4: when the output fails mid-stream (its reader went away) the
// stream is released (closed: with cancel_on_disconnect its turn is
// canceled), the open-stream gauge is back at 0, no final line is written
// and Serve returns the write error.
func TestOutputGoneReleasesStream(t *testing.T) {
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hub, err := agent.NewHub(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	m, err := agent.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	svc := agent.NewService(hub, agent.Config{Backend: backend.EchoBackend{Chunks: 40, Delay: 50 * time.Millisecond}, Metrics: m, CancelOnDisconnect: true})
	t.Cleanup(func() { hub.SetDrainTimeout(0); _ = hub.Close(); _ = st.Close() })
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), svc, inR, outW, Options{}) }()
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
	if n := promtest.Gauge(t, m, "caddy_a2a_open_streams"); n != 1 {
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
	if n := promtest.Gauge(t, m, "caddy_a2a_open_streams"); n != 0 {
		t.Fatalf("%v open streams after the output failed, want 0", n)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		task, err := svc.GetTask(context.Background(), agent.Call{Version: "1.0"}, &a2a.GetTaskRequest{ID: r.Result.Task.ID})
		if err == nil && task.Status.State == a2a.TaskStateCanceled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task: %v %v, want canceled (the stream was not closed)", task, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

//go:build !race

package agent

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// A turn parked in the echo backend's delay holds a 4 KiB stack once the
// collector has shrunk it (issue 17): the frames under the wait (execute,
// runTurn, the backend) stay below the quarter of an 8 KiB stack the
// runtime halves. 8 KiB per turn would mean a frame on that path grew.
func TestIdleTurnStackIsSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 300 turns")
	}
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hub, err := NewHub(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	svc := NewService(hub, Config{Backend: backend.EchoBackend{Chunks: 1, Delay: time.Hour}, MaxConcurrentTurns: 1 << 20})
	t.Cleanup(func() { _ = hub.Close(); _ = st.Close() })
	const n = 300
	g0, stack0, _ := idleFootprint()
	ctx := context.Background()
	for i := 0; i < n; i++ {
		req := &a2a.SendMessageRequest{Message: &a2a.Message{MessageID: "stack" + strconv.Itoa(i), Role: a2a.RoleUser,
			Parts: []a2a.Part{a2a.TextPart("wait")}}}
		s, err := svc.SendStreamingMessage(ctx, Call{Principal: "p", Version: "1.0"}, req)
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 2; j++ { // the Task, then WORKING: the turn is in the backend
			if _, ok := s.Next(ctx); !ok {
				t.Fatal("stream ended")
			}
		}
		s.Detach()
	}
	// The queued store writes drain: the store lists every turn WORKING.
	stored := func() bool {
		res, err := svc.ListTasks(ctx, Call{Principal: "p", Version: "1.0"}, &a2a.ListTasksRequest{Status: a2a.TaskStateWorking})
		return err == nil && res.TotalSize == n
	}
	for deadline := time.Now().Add(10 * time.Second); !stored(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the store never listed the parked turns WORKING")
		}
	}
	g1, stack1, _ := idleFootprint()
	if g := g1 - g0; g < n {
		t.Fatalf("%d more goroutines, want at least the %d parked turns", g, n)
	}
	per := float64(stack1-stack0) / n
	t.Logf("%.0f B of stack per parked turn", per)
	if per > 6<<10 {
		t.Errorf("%.0f B of stack per parked turn, want about 4 KiB", per)
	}
}

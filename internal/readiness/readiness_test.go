package readiness

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

func ok(context.Context) error { return nil }

func TestProbeBodies(t *testing.T) {
	p := New([]Check{{Name: "store", Kind: "redis", Run: ok}, {Name: "instance_lease", Run: ok}}, 0, 0)
	r := p.Probe(context.Background())
	if want := `{"status":"ready","checks":{"store":{"ok":true},"instance_lease":{"ok":true}}}`; !r.Ready || string(r.Body) != want {
		t.Fatalf("ready: %v %s, want %s", r.Ready, r.Body, want)
	}
	// A failure names the check with a fixed reason, never the error text.
	secret := fmt.Errorf("dial redis://user:hunter2@10.0.0.1:6379 /var/lib/a2a: %w", store.ErrUnavailable)
	p = New([]Check{{Name: "store", Kind: "redis", Run: func(context.Context) error { return secret }},
		{Name: "instance_lease", Run: func(context.Context) error { return store.ErrLeaseExpired }}}, 0, 0)
	r = p.Probe(context.Background())
	want := `{"status":"unready","checks":{"store":{"ok":false,"reason":"redis: unreachable"},` +
		`"instance_lease":{"ok":false,"reason":"lease not renewed in time; other instances may fail this instance's tasks"}}}`
	if r.Ready || string(r.Body) != want {
		t.Fatalf("unready: %v %s, want %s", r.Ready, r.Body, want)
	}
	if strings.Contains(string(r.Body), "hunter2") || strings.Contains(string(r.Body), "/var") {
		t.Fatal("the body leaks the error text")
	}
}

func TestReason(t *testing.T) {
	for err, want := range map[error]string{
		store.ErrNotOpen:                            Starting,
		ErrStarting:                                 Starting,
		fmt.Errorf("x: %w", store.ErrClosed):        "closed",
		store.ErrWriterStopped:                      "the writer stopped",
		fmt.Errorf("x: %w: EIO", store.ErrSync):     "the write-ahead log could not be synced to disk",
		context.DeadlineExceeded:                    "no answer in time",
		errors.New("data directory /srv is in use"): "not usable",
	} {
		if got := Reason(err); got != want {
			t.Errorf("Reason(%v) = %q, want %q", err, got, want)
		}
	}
}

// TestProbeBurst: concurrent probes share one round, and a fresh answer
// is reused for the TTL.
func TestProbeBurst(t *testing.T) {
	var calls atomic.Int32
	slow := func(context.Context) error { calls.Add(1); time.Sleep(50 * time.Millisecond); return nil }
	p := New([]Check{{Name: "store", Run: slow}}, time.Second, time.Hour)
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			if !p.Probe(context.Background()).Ready {
				t.Error("not ready")
			}
		})
	}
	wg.Wait()
	p.Probe(context.Background())
	if n := calls.Load(); n != 1 {
		t.Fatalf("101 probes ran the check %d times, want 1", n)
	}
}

// TestProbeTTL: after the TTL a probe runs the checks again, so a change
// shows within TTL + timeout.
func TestProbeTTL(t *testing.T) {
	var fail atomic.Bool
	p := New([]Check{{Name: "store", Run: func(context.Context) error {
		if fail.Load() {
			return store.ErrUnavailable
		}
		return nil
	}}}, 0, 20*time.Millisecond)
	if !p.Probe(context.Background()).Ready {
		t.Fatal("not ready")
	}
	fail.Store(true)
	time.Sleep(30 * time.Millisecond)
	if p.Probe(context.Background()).Ready {
		t.Fatal("still ready after the TTL")
	}
}

// TestProbeHung: a check that waits for ctx, or ignores it, does not hold
// the probe beyond the timeout (plus half of it for the second).
func TestProbeHung(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	p := New([]Check{
		{Name: "store", Run: func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }},
		{Name: "push_queue", Run: func(context.Context) error { <-block; return nil }},
	}, 100*time.Millisecond, 0)
	start := time.Now()
	r := p.Probe(context.Background())
	if d := time.Since(start); d > 400*time.Millisecond {
		t.Fatalf("probe took %v", d)
	}
	want := `{"status":"unready","checks":{"store":{"ok":false,"reason":"no answer in time"},"push_queue":{"ok":false,"reason":"no answer in time"}}}`
	if r.Ready || string(r.Body) != want {
		t.Fatalf("%s, want %s", r.Body, want)
	}
	// A probe whose own request ends first answers unready at once.
	p = New([]Check{{Name: "store", Run: func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }}}, time.Second, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if p.Probe(ctx).Ready {
		t.Fatal("ready with the request gone")
	}
}

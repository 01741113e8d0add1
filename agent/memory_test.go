//go:build !race

package agent

import (
	"context"
	"fmt"
	"runtime"
	"testing"
)

// TestIdleContextHeap checks RPC-6: an idle context costs at most ~2 KiB of
// heap (state lives in the store), so 100k open contexts fit in ~200 MiB.
// Not built with -race, whose instrumentation inflates allocations: `make
// test` runs it in a separate step without -race.
func TestIdleContextHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	st := newStore(t)
	hub, err := NewHub(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hub.Close() })
	svc := NewService(hub, Config{})
	ctx := context.Background()
	for i := 0; i < 200; i++ { // warm up pools and caches
		if _, err := svc.SendMessage(ctx, Call{}, sendReq(inContext(msg("x"), fmt.Sprint("warm-", i)))); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 2000
	for i := 0; i < n; i++ {
		if _, err := svc.SendMessage(ctx, Call{}, sendReq(inContext(msg("x"), fmt.Sprint("ctx-", i)))); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if live := hub.LiveContexts(); live < n {
		t.Fatalf("%d live contexts, want at least %d", live, n)
	}
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("heap per idle context: %d bytes", per)
	if per > 2048 {
		t.Errorf("an idle context costs %d bytes of heap, want at most 2048 (RPC-6)", per)
	}
}

package agent

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// Hub is the state shared by every agent endpoint on one store: live task
// runs and conversation contexts. It outlives configuration reloads, so a
// turn started before a reload is still seen (and cancellable) after it.
type Hub struct {
	// src is the store: what it can do is resolved once, when it opens
	// (at once for NewHub; at the a2a app's Start for NewDeferredHub).
	src *store.Deferred
	// bus carries each running turn's events to its streams; nil: the
	// in-process bus over the store's event log (eventBus).
	bus      store.EventBus
	runs     sync.Map // task id → *run
	contexts *contextTable
	// waiting holds the SubscribeToTask streams of interrupted tasks
	// until a follow-up turn adopts them (RPC-11).
	waiting waitList

	mu          sync.Mutex
	idleTimeout time.Duration
	drain       time.Duration
	closing     atomic.Bool
	wake        chan struct{} // a new idle timeout was set
	stop        chan struct{}
	stopped     sync.WaitGroup
	closeOnce   sync.Once
	// streams counts the open streams by agent (the open_streams gauge).
	streams streamCounts
}

// NewHub opens the shared runtime over st, an open store, with the
// in-process event bus (over the store's event log when it keeps one,
// RPC-17), and marks tasks left running by a previous process as failed.
// The store's Capabilities are read once, here.
func NewHub(ctx context.Context, st store.Capable) (*Hub, error) {
	return NewHubWithBus(ctx, st, nil)
}

// NewHubWithBus is NewHub with the event bus the turns publish on (nil:
// NewHub's). When st keeps an event log (Capabilities.Events), bus must
// log every event into it (as store.NewStoredBus does, or a Redis bus
// writing the same streams the store reads): turns number their events on
// from its LastEventSeq.
func NewHubWithBus(ctx context.Context, st store.Capable, bus store.EventBus) (*Hub, error) {
	d := store.NewDeferred()
	_ = d.Open(st) // a new Deferred: it opens
	if _, err := d.Capabilities().Store.FailInterrupted(ctx, InterruptedMessage, time.Now()); err != nil {
		return nil, fmt.Errorf("recovering interrupted tasks: %w", err)
	}
	return newHub(d, bus), nil
}

// NewDeferredHub builds the runtime over a store that opens later (OPS-6):
// its Capabilities are read once d is open, and callers wait for that
// with d.Wait. It recovers nothing: the opener recovers, under the data
// directory's lock.
func NewDeferredHub(d *store.Deferred) *Hub { return newHub(d, nil) }

func newHub(d *store.Deferred, bus store.EventBus) *Hub {
	h := &Hub{src: d, bus: bus, contexts: newContextTable(), idleTimeout: time.Hour, drain: 10 * time.Second, wake: make(chan struct{}, 1), stop: make(chan struct{})}
	h.stopped.Add(1)
	go h.janitor()
	h.stopped.Add(1)
	go h.cancelListener() // cancels from other instances (SCALE-1)
	return h
}

// caps returns what the hub's store can do (a Store answering
// store.ErrNotOpen, and no optional part, before a deferred store opens).
func (h *Hub) caps() *store.Capabilities { return h.src.Capabilities() }

// eventBus returns the bus turns publish on: the hub's own, or the
// in-process bus over the store's event log (none: not logged).
func (h *Hub) eventBus() store.EventBus {
	if h.bus != nil {
		return h.bus
	}
	return store.NewStoredBus(h.caps().Events)
}

// LiveContexts returns how many contexts are held in memory.
func (h *Hub) LiveContexts() int { return h.contexts.len() }

func (h *Hub) setIdleTimeout(d time.Duration) {
	h.mu.Lock()
	h.idleTimeout = d
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

func (h *Hub) janitor() {
	defer h.stopped.Done()
	for {
		h.mu.Lock()
		idle := h.idleTimeout
		h.mu.Unlock()
		tick := min(max(idle/4, 10*time.Millisecond), time.Minute)
		t := time.NewTimer(tick)
		select {
		case <-h.stop:
			t.Stop()
			return
		case <-h.wake:
			t.Stop()
		case now := <-t.C:
			h.contexts.evictIdle(now.Add(-idle))
		}
	}
}

// SetDrainTimeout sets how long Close lets running turns finish before it
// cancels them (OPS-3). Default 10s; 0 cancels at once.
func (h *Hub) SetDrainTimeout(d time.Duration) {
	h.mu.Lock()
	h.drain = d
	h.mu.Unlock()
}

// Closing reports whether the hub has stopped accepting new turns.
func (h *Hub) Closing() bool { return h.closing.Load() }

// StopAccepting makes the hub refuse new turns from now on (SendMessage
// answers that the gateway is shutting down) while running turns go on.
// The a2a app calls it when the process starts exiting, before the HTTP
// servers' grace period, so that a request still served then gets a clear
// error instead of a turn that would be cut short. Streams waiting for a
// follow-up turn of an input-required task end at once (after a final Task
// snapshot): no turn can start any more. Close implies it.
func (h *Hub) StopAccepting() {
	h.closing.Store(true)
	h.releaseWaiters()
}

// Close shuts the runtime down (OPS-3): it stops accepting new turns, lets
// running ones finish for up to the drain timeout (one deadline for all of
// them), cancels the rest (they end FAILED with InterruptedMessage, waiting
// at most 10s more for backends that ignore the cancellation), closes every
// backend session (per-context processes are terminated with their process
// group) and stops background work. It does not close the store.
func (h *Hub) Close() error {
	h.closeOnce.Do(func() {
		h.StopAccepting()
		h.mu.Lock()
		drain := h.drain
		h.mu.Unlock()
		// A closed channel, not a timer's: every run waited on sees it.
		deadline, cancelDrain := context.WithTimeout(context.Background(), drain)
		defer cancelDrain()
		for _, r := range h.liveRuns() {
			select {
			case <-r.done:
			case <-deadline.Done():
			}
		}
		pending := h.liveRuns()
		for _, r := range pending {
			r.cancel(errShutdown)
		}
		hard, cancelHard := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancelHard()
		for _, r := range pending {
			select {
			case <-r.done:
			case <-hard.Done():
			}
		}
		close(h.stop)
		h.stopped.Wait()
		// Close every backend session (per-context processes) still held.
		h.contexts.evictIdle(time.Now().Add(100 * 365 * 24 * time.Hour))
	})
	return nil
}

func (h *Hub) liveRuns() []*run {
	var out []*run
	h.runs.Range(func(_, v any) bool {
		out = append(out, v.(*run))
		return true
	})
	return out
}

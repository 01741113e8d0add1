package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

func statusEvent(text string) a2a.StreamResponse {
	return a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: &a2a.Message{MessageID: text}}}}
}

func eventText(ev Event) string { return ev.Response.StatusUpdate.Status.Message.MessageID }

// RPC-11, RPC-17: every subscription gets the events published after it
// subscribed, in order, numbered 1, 2, 3… per log; once the log closes each
// ends after its queue drains.
func TestLocalBusOrderSeqAndClose(t *testing.T) {
	log, _ := NewLocalBus().Open("t", LogOptions{})
	log.Publish(statusEvent("before"))
	a, err := log.Subscribe(log.Last())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := log.Subscribe(log.Last())
	for _, s := range []string{"one", "two", "three"} {
		log.Publish(statusEvent(s))
	}
	log.Close()
	if seq := log.Publish(statusEvent("late")); seq != 4 {
		t.Errorf("Publish after Close returned %d, want the last sequence number 4", seq)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	for _, sub := range []Subscription{a, b} {
		var got []string
		var seqs []uint64
		for {
			ev, ok := sub.Next(ctx)
			if !ok {
				break
			}
			got, seqs = append(got, eventText(ev)), append(seqs, ev.Seq)
		}
		if ctx.Err() != nil {
			t.Fatal("subscription did not end after Close")
		}
		if len(got) != 3 || got[0] != "one" || got[2] != "three" || seqs[0] != 2 || seqs[1] != 3 || seqs[2] != 4 {
			t.Errorf("got %v with seqs %v, want [one two three] numbered 2..4", got, seqs)
		}
	}
	late, err := log.Subscribe(log.Last())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := late.Next(ctx); ok || ctx.Err() != nil {
		t.Error("a subscription made after Close did not end at once")
	}
}

// RPC-17: without a stored log the in-process log replays the turn's held
// events (at most Keep); older ones, earlier turns and future ids are
// ErrEventsGone.
func TestLocalBusSubscribeFromThePast(t *testing.T) {
	log, _ := NewLocalBus().Open("t", LogOptions{After: 10, Keep: 3})
	for _, s := range []string{"one", "two", "three", "four"} {
		log.Publish(statusEvent(s))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	sub, err := log.Subscribe(12)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []uint64{13, 14} {
		if ev, ok := sub.Next(ctx); !ok || ev.Seq != want {
			t.Fatalf("replay: ok=%v seq %d, want %d", ok, ev.Seq, want)
		}
	}
	log.Publish(statusEvent("five"))
	if ev, ok := sub.Next(ctx); !ok || ev.Seq != 15 || eventText(ev) != "five" {
		t.Fatalf("live after replay: ok=%v seq %d", ok, ev.Seq)
	}
	for _, after := range []uint64{0, 10, 11, 16} {
		if _, err := log.Subscribe(after); !errors.Is(err, ErrEventsGone) {
			t.Errorf("Subscribe(%d) with events 13..15 held: %v, want ErrEventsGone", after, err)
		}
	}
}

// A reader that falls MaxQueuedEvents behind is disconnected: its queue is
// dropped and Next reports the end, while other subscriptions go on.
func TestLocalBusBoundedQueue(t *testing.T) {
	log, _ := NewLocalBus().Open("t", LogOptions{})
	slow, _ := log.Subscribe(0)
	fast, _ := log.Subscribe(0)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	for i := range MaxQueuedEvents + 1 {
		log.Publish(statusEvent("e"))
		if ev, ok := fast.Next(ctx); !ok || ev.Seq != uint64(i+1) {
			t.Fatalf("fast reader: event %d ok=%v seq %d", i+1, ok, ev.Seq)
		}
	}
	if _, ok := slow.Next(ctx); ok || ctx.Err() != nil {
		t.Error("a reader MaxQueuedEvents+1 behind was not disconnected")
	}
	log.Publish(statusEvent("after"))
	if ev, ok := fast.Next(ctx); !ok || eventText(ev) != "after" {
		t.Error("the fast reader stopped with the slow one")
	}
}

// A full queue keeps every event: MaxQueuedEvents behind is still connected.
func TestLocalBusQueueHoldsMaxQueuedEvents(t *testing.T) {
	log, _ := NewLocalBus().Open("t", LogOptions{})
	sub, _ := log.Subscribe(0)
	for range MaxQueuedEvents {
		log.Publish(statusEvent("e"))
	}
	log.Close()
	n := 0
	for {
		if _, ok := sub.Next(t.Context()); !ok {
			break
		}
		n++
	}
	if n != MaxQueuedEvents {
		t.Errorf("got %d events, want %d", n, MaxQueuedEvents)
	}
}

// Close unsubscribes: later events are not delivered and Next ends; Cancel
// ends the turn's context with its cause without closing the log.
func TestLocalBusUnsubscribeAndCancel(t *testing.T) {
	log, ctx := NewLocalBus().Open("t", LogOptions{})
	sub, _ := log.Subscribe(0)
	sub.Close()
	log.Publish(statusEvent("one"))
	wait, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, ok := sub.Next(wait); ok || wait.Err() != nil {
		t.Error("a closed subscription still delivered or blocked")
	}
	cause := errors.New("stop")
	log.Cancel(cause)
	log.Cancel(errors.New("second"))
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), cause) {
		t.Errorf("turn context cause %v, want the first Cancel's", context.Cause(ctx))
	}
	other, err := log.Subscribe(log.Last())
	if err != nil {
		t.Fatal(err)
	}
	log.Publish(statusEvent("two"))
	if ev, ok := other.Next(wait); !ok || eventText(ev) != "two" {
		t.Error("Cancel closed the log")
	}
}

// Next returns when its context ends and the subscription stays usable.
func TestLocalBusNextContext(t *testing.T) {
	log, _ := NewLocalBus().Open("t", LogOptions{})
	sub, _ := log.Subscribe(0)
	short, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, ok := sub.Next(short); ok {
		t.Fatal("Next returned an event nobody published")
	}
	log.Publish(statusEvent("one"))
	if ev, ok := sub.Next(t.Context()); !ok || eventText(ev) != "one" {
		t.Error("the subscription did not survive a canceled Next")
	}
}

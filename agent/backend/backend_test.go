package backend

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// collect runs b for prompt and returns the events it emitted.
func collect(t *testing.T, ctx context.Context, b Backend, prompt string) ([]Event, error) {
	t.Helper()
	var evs []Event
	err := b.RunTurn(ctx, &TurnRequest{V: EventVersion, Type: "turn", TaskID: "t1", Prompt: prompt}, func(ev Event) error {
		evs = append(evs, ev)
		return nil
	})
	return evs, err
}

// TURN-2: the echo backend streams the answer in Chunks pieces between a
// tool started/completed pair, then usage and an input_required end.
func TestEchoBackendEvents(t *testing.T) {
	evs, err := collect(t, context.Background(), EchoBackend{Chunks: 3}, "hello there world")
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	var text strings.Builder
	for _, ev := range evs {
		if ev.V != EventVersion {
			t.Errorf("event %+v: v %d, want %d", ev, ev.V, EventVersion)
		}
		types = append(types, ev.Type+":"+ev.Status)
		if ev.Type == EventText {
			text.WriteString(ev.Text)
		}
	}
	want := "tool:started text: text: text: tool:completed usage: end:"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("event sequence %q, want %q", got, want)
	}
	answer := EchoBackend{}.Answer("hello there world")
	if answer != "Echo: hello there world" || text.String() != answer {
		t.Errorf("streamed %q, answer %q", text.String(), answer)
	}
	end := evs[len(evs)-1]
	if end.Outcome != OutcomeInputRequired || end.Text != answer {
		t.Errorf("end event %+v", end)
	}
	if evs[0].ToolUseID != "echo-t1" || evs[0].ToolUseID != evs[4].ToolUseID {
		t.Errorf("tool use ids %q, %q", evs[0].ToolUseID, evs[4].ToolUseID)
	}
	var in map[string]string
	if err := json.Unmarshal(evs[0].Input, &in); err != nil || in["text"] != "hello there world" {
		t.Errorf("tool input %s (%v)", evs[0].Input, err)
	}
	if u := evs[5]; u.InputTokens != 3 || u.OutputTokens != 4 || u.TotalTokens != 7 {
		t.Errorf("usage %+v", u)
	}
}

func TestEchoBackendDefaultsAndShortPrompt(t *testing.T) {
	evs, err := collect(t, context.Background(), EchoBackend{}, "abc")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range evs {
		if ev.Type == EventText {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d text chunks by default, want 3", n)
	}
	if got := splitChunks("ab", 5); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("splitChunks(ab, 5) = %q", got)
	}
	if got := splitChunks("", 3); len(got) != 1 || got[0] != "" {
		t.Errorf("splitChunks(\"\", 3) = %q", got)
	}
}

// A canceled turn stops the echo backend with the context's error, and an
// Emit error ends it at once.
func TestEchoBackendStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := collect(t, ctx, EchoBackend{Chunks: 2, Delay: time.Hour}, "x y"); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled turn: %v, want context.Canceled", err)
	}
	stop := errors.New("turn closed")
	calls := 0
	err := EchoBackend{}.RunTurn(context.Background(), &TurnRequest{Prompt: "x"}, func(Event) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("emit error: %v after %d calls, want %v after 1", err, calls, stop)
	}
}

// TURN-8: the failure errors keep their cause for the log and errors.As.
func TestTurnFailureErrors(t *testing.T) {
	var err error = &TurnError{Kind: ErrorKindTransient, Err: os.ErrDeadlineExceeded}
	if err.Error() != "transient: "+os.ErrDeadlineExceeded.Error() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("TurnError %q does not carry its cause", err)
	}
	if got := (&TurnError{Kind: ErrorKindAuth}).Error(); got != "auth turn failure" {
		t.Errorf("TurnError without cause: %q", got)
	}
	cause := errors.New("bad line")
	err = &ProtocolError{Err: cause}
	var pe *ProtocolError
	if !errors.As(err, &pe) || !errors.Is(err, cause) || err.Error() != "turn-event protocol: bad line" {
		t.Errorf("ProtocolError %q", err)
	}
}

// sleepCtx returns nil once its delay has passed, and ctx's error as soon
// as ctx ends (already ended, or during the wait).
func TestSleepCtx(t *testing.T) {
	if err := sleepCtx(context.Background(), time.Millisecond); err != nil {
		t.Errorf("after the delay: %v, want nil", err)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sleepCtx(done, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("ctx already ended: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := sleepCtx(ctx, time.Hour); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ctx ended during the wait: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the wait ended %v after ctx, want at once", d)
	}
}

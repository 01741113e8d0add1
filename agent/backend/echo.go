package backend

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// EchoBackend is the built-in deterministic backend (TURN-2): it streams the
// prompt back in Chunks pieces, Delay apart, with one fake tool use and token
// usage, and ends the turn input_required with the whole answer.
type EchoBackend struct {
	// Chunks is how many text chunks the answer is split into. Default 3.
	Chunks int
	// Delay is the pause before each chunk. Default 0.
	Delay time.Duration
}

// Answer returns the echo backend's final answer for a prompt.
func (EchoBackend) Answer(prompt string) string { return "Echo: " + prompt }

// RunTurn implements Backend. Each event is built in a helper of its own,
// so the frame that waits out Delay (a parked turn's stack) stays small.
func (e EchoBackend) RunTurn(ctx context.Context, req *TurnRequest, emit Emit) error {
	answer := e.Answer(req.Prompt)
	toolID := "echo-" + req.TaskID
	if err := emitEchoTool(emit, toolID, "started", "text", req.Prompt); err != nil {
		return err
	}
	for _, chunk := range splitChunks(answer, e.chunks()) {
		if e.Delay > 0 {
			if err := sleepCtx(ctx, e.Delay); err != nil {
				return err
			}
		} else if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := emitText(emit, chunk); err != nil {
			return err
		}
	}
	if err := emitEchoTool(emit, toolID, "completed", "characters", len(answer)); err != nil {
		return err
	}
	return emitEchoEnd(emit, req.Prompt, answer)
}

// sleepCtx waits d, or until ctx ends (its error). It waits in a single
// channel receive (ctx's end fires the timer early), not a select: a turn
// parked here holds a smaller stack (issue 17).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	stop := context.AfterFunc(ctx, func() { t.Reset(0) })
	defer stop()
	<-t.C
	return ctx.Err()
}

// emitEchoTool emits the echo tool's started event (its input {key: v})
// or completed one (its result {key: v}).
//
//go:noinline
func emitEchoTool(emit Emit, toolID, status, key string, v any) error {
	b := echoToolJSON(key, v)
	ev := Event{V: 1, Type: EventTool, Status: status, ToolUseID: toolID, Name: "echo"}
	if status == "started" {
		ev.Input = b
	} else {
		ev.Result = b
	}
	return emit(ev)
}

// echoToolJSON is the JSON of {key: v}, as encoding/json writes the map,
// without its reflection for the echo tool's string and int values
// (issue 17: it showed in the send profile).
func echoToolJSON(key string, v any) json.RawMessage {
	b := a2a.AppendJSONString(append(make([]byte, 0, 32), '{'), key)
	b = append(b, ':')
	switch x := v.(type) {
	case string:
		b = a2a.AppendJSONString(b, x)
	case int:
		b = strconv.AppendInt(b, int64(x), 10)
	default:
		m, _ := json.Marshal(map[string]any{key: v})
		return m
	}
	return append(b, '}')
}

// emitText emits a text chunk.
//
//go:noinline
func emitText(emit Emit, chunk string) error {
	return emit(Event{V: 1, Type: EventText, Text: chunk})
}

// emitEchoEnd emits the token usage and the end of the turn.
//
//go:noinline
func emitEchoEnd(emit Emit, prompt, answer string) error {
	in := int64(len(strings.Fields(prompt)))
	out := int64(len(strings.Fields(answer)))
	if err := emit(Event{V: 1, Type: EventUsage, InputTokens: in, OutputTokens: out, TotalTokens: in + out}); err != nil {
		return err
	}
	return emit(Event{V: 1, Type: EventEnd, Outcome: OutcomeInputRequired, Text: answer})
}

func (e EchoBackend) chunks() int {
	if e.Chunks <= 0 {
		return 3
	}
	return e.Chunks
}

// splitChunks cuts s into at most n pieces of roughly equal rune counts.
//
//go:noinline
func splitChunks(s string, n int) []string {
	r := []rune(s)
	if n > len(r) {
		n = len(r)
	}
	if n <= 1 {
		return []string{s}
	}
	out := make([]string, 0, n)
	size := (len(r) + n - 1) / n
	for i := 0; i < len(r); i += size {
		j := min(i+size, len(r))
		out = append(out, string(r[i:j]))
	}
	return out
}

package backend

import (
	"context"
	"encoding/json"
	"strings"
	"time"
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

// RunTurn implements Backend.
func (e EchoBackend) RunTurn(ctx context.Context, req *TurnRequest, emit Emit) error {
	answer := e.Answer(req.Prompt)
	toolID := "echo-" + req.TaskID
	input, _ := json.Marshal(map[string]any{"text": req.Prompt})
	if err := emit(Event{V: 1, Type: EventTool, Status: "started", ToolUseID: toolID, Name: "echo", Input: input}); err != nil {
		return err
	}
	for _, chunk := range splitChunks(answer, e.chunks()) {
		if e.Delay > 0 {
			t := time.NewTimer(e.Delay)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		} else if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := emit(Event{V: 1, Type: EventText, Text: chunk}); err != nil {
			return err
		}
	}
	result, _ := json.Marshal(map[string]any{"characters": len(answer)})
	if err := emit(Event{V: 1, Type: EventTool, Status: "completed", ToolUseID: toolID, Name: "echo", Result: result}); err != nil {
		return err
	}
	in := int64(len(strings.Fields(req.Prompt)))
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

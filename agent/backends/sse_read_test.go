package backends

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestReadSSE: the http and openai backends read event streams by the
// HTML standard's rules (internal/sse), skip events without data, stop at
// the end the handler reports, and keep their limits (TURN-4).
func TestReadSSE(t *testing.T) {
	read := func(in string, maxEvent int, maxTotal int64) ([]string, error) {
		var got []string
		err := readSSE(context.Background(), strings.NewReader(in), maxEvent, maxTotal, func(d []byte) (bool, error) {
			got = append(got, string(d))
			return string(d) == "end", nil
		})
		return got, err
	}
	got, err := read("\uFEFF: c\rdata: a\rdata: b\r\rdata:\r\n\r\nevent: x\nid: 1\ndata: c\n\ndata: end\n\ndata: never\n\n", 0, 0)
	if err != nil || strings.Join(got, "|") != "a\nb|c|end" {
		t.Fatalf("got %q, %v", got, err)
	}
	got, err = read("data: a\n\ndata: tail", 0, 0)
	if err != nil || strings.Join(got, "|") != "a|tail" {
		t.Fatalf("unterminated last event: %q, %v", got, err)
	}
	if _, err := read("data: "+strings.Repeat("x", 101)+"\n\n", 100, 0); !errors.Is(err, errLineTooLong) {
		t.Fatalf("event over the limit: %v", err)
	}
	if _, err := read(strings.Repeat("data: x\n\n", 100), 100, 50); !errors.Is(err, errOutputTooLong) {
		t.Fatalf("stream over the limit: %v", err)
	}
	if got, err := read(strings.Repeat("data: x\n\n", 5), 100, 45); err != nil || len(got) != 5 {
		t.Fatalf("stream of exactly the limit: %q, %v", got, err)
	}
}

// TestLineReaderOutputLimit: NDJSON lines pass up to the output limit,
// and a stream beyond it is errOutputTooLong.
func TestLineReaderOutputLimit(t *testing.T) {
	lr := newLineReader(strings.NewReader("ab\ncd\n"), 10, 6)
	for _, want := range []string{"ab", "cd"} {
		if l, err := lr.next(); err != nil || string(l) != want {
			t.Fatalf("line %q, %v; want %q", l, err, want)
		}
	}
	lr = newLineReader(strings.NewReader("ab\ncd\nef\n"), 10, 6)
	_, _ = lr.next()
	_, _ = lr.next()
	if _, err := lr.next(); !errors.Is(err, errOutputTooLong) {
		t.Fatalf("beyond the output limit: %v", err)
	}
}

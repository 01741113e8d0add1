package agent

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"

	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// TASK list page tokens: any token string decodes without panicking; a
// token accepted for a filter re-encodes to itself (tokens are canonical:
// one cursor, one token), and the token made for a cursor decodes to that
// cursor for its filter only.
func FuzzPageToken(f *testing.F) {
	p := pageTokens{key: []byte("0123456789abcdef0123456789abcdef")}
	flt := pageFilter{owner: "alice", status: "TASK_STATE_WORKING"}
	good := p.encode(flt, &store.Cursor{StatusTime: time.UnixMilli(1700000000123).UTC(), TaskID: "task-1"})
	for _, s := range []string{good, good + "=", "AAAA.BBBB", ".", "", "a.b.c", "\xff.\xff"} {
		f.Add(s, "task-1", int64(1700000000123), "alice")
	}
	f.Fuzz(func(t *testing.T, token, taskID string, ms int64, owner string) {
		fl := pageFilter{owner: owner, status: "TASK_STATE_WORKING"}
		if c, ok := p.decode(fl, token); ok {
			if again := p.encode(fl, c); again != token {
				t.Fatalf("accepted token %q re-encodes as %q", token, again)
			}
		}
		if taskID == "" || len(taskID) > 200 {
			return
		}
		c := &store.Cursor{StatusTime: time.UnixMilli(ms).UTC(), TaskID: taskID}
		tok := p.encode(fl, c)
		got, ok := p.decode(fl, tok)
		if !ok || got.TaskID != taskID || !got.StatusTime.Equal(c.StatusTime) {
			t.Fatalf("token %q of %+v decodes as %+v, %v", tok, c, got, ok)
		}
		other := fl
		other.owner += "x"
		if _, ok := p.decode(other, tok); ok {
			t.Fatalf("token %q accepted for another owner", tok)
		}
	})
}

// RPC-17: a Last-Event-ID (header or metadata.lastEventId, any JSON type)
// gives a sequence number or a clean InvalidParams error, never a panic;
// an accepted header is the decimal of the number it gives.
func FuzzLastEventID(f *testing.F) {
	for _, s := range []string{"0", "42", " 7 ", "007", "-1", "18446744073709551615", "18446744073709551616", "1e3", "0x10", "", "\x00"} {
		f.Add(s, true, 1.5)
		f.Add(s, false, 3.0)
	}
	// A service that offers resumption, and calls that activate it (a plain
	// call's ids are never read: beyond.go).
	svc := &Service{cfg: Config{Extensions: []string{StreamResumeExtension}}}
	f.Fuzz(func(t *testing.T, raw string, header bool, num float64) {
		for _, md := range []map[string]any{nil, {LastEventIDKey: raw}, {LastEventIDKey: num}, {LastEventIDKey: true}, {LastEventIDKey: []any{raw}}} {
			call := Call{Extensions: []string{StreamResumeExtension}}
			if header {
				call.LastEventID = raw
			}
			n, err := svc.resumeAfter(call, md)
			if err != nil {
				var ae *a2a.Error
				if !errors.As(err, &ae) || ae.Code != a2a.CodeInvalidParams {
					t.Fatalf("refusal %v is not InvalidParams", err)
				}
				continue
			}
			if n == nil {
				if strings.TrimSpace(call.LastEventID) != "" || md[LastEventIDKey] != nil {
					t.Fatalf("id %q / %v ignored", raw, md)
				}
				continue
			}
			if header && strings.TrimSpace(raw) != "" {
				digits := strings.TrimLeft(strings.TrimSpace(raw), "0")
				if digits == "" {
					digits = "0"
				}
				if digits != strconv.FormatUint(*n, 10) {
					t.Fatalf("header %q resumed after %d", raw, *n)
				}
			}
		}
	})
}

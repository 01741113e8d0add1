package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll reads every event of r as "type|id|data" strings, failing on an
// error other than io.EOF.
func readAll(t *testing.T, r *Reader) []string {
	t.Helper()
	var got []string
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Type+"|"+ev.ID+"|"+string(ev.Data))
	}
}

func TestReader(t *testing.T) {
	in := ": keep-alive\n\nid: 7\nevent: message\ndata: {\"a\":1}\n\ndata: line1\r\ndata:line2\r\n\r\nretry: 10\ndata: last"
	r := NewReader(strings.NewReader(in), 16<<20)
	got := readAll(t, r)
	want := []string{"message|7|{\"a\":1}", "|7|line1\nline2", "|7|last"}
	if strings.Join(got, ";") != strings.Join(want, ";") {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestReaderFraming holds the event-stream parsing rules of the HTML
// standard, each case also read one byte and half a buffer at a time (so
// that CRLF pairs and the byte-order mark straddle reads). The cases
// marked "probe" are those the validator's own reader got wrong: it joined
// data lines without "\n", trimmed all white space, split only at LF, took
// "data" without a colon for nothing, kept the byte-order mark, and let an
// event with an empty data line pass unseen.
func TestReaderFraming(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string
	}{
		{"probe: data lines joined with LF", "data: a\ndata: b\n\n", []string{"||a\nb"}},
		{"CRLF line ends", "data: a\r\ndata: b\r\n\r\n", []string{"||a\nb"}},
		{"probe: CR line ends", "data: a\rdata: b\r\r", []string{"||a\nb"}},
		{"mixed line ends", "data: a\r\n\rdata: b\n\rdata: c\r\r\n", []string{"||a", "||b", "||c"}},
		{"CR then LF is one line end", "data: a\r\n\r\n", []string{"||a"}},
		{"LF then CR is two line ends", "data: a\n\rdata: b\n\n", []string{"||a", "||b"}},
		{"comments ignored", ": c\ndata: x\n:y\n: data: z\n\n", []string{"||x"}},
		{"comment only", ":\n\n: keep-alive\n\n", nil},
		{"event field", "event: turn\ndata: x\n\n", []string{"turn||x"}},
		{"event type reset after dispatch", "event: a\ndata: 1\n\ndata: 2\n\n", []string{"a||1", "||2"}},
		{"event type reset at an empty event", "event: a\n\ndata: 2\n\n", []string{"||2"}},
		{"last event id persists", "id: 1\ndata: a\n\ndata: b\n\n", []string{"|1|a", "|1|b"}},
		{"id without colon resets it", "id: 1\ndata: a\n\nid\ndata: b\n\n", []string{"|1|a", "||b"}},
		{"id with NUL ignored", "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n", []string{"|1|a", "|1|b"}},
		{"id set by an event without data", "id: 3\nevent: x\n\ndata: z\n\n", []string{"|3|z"}},
		{"probe: data without colon is an empty line", "data\n\n", []string{"||"}},
		{"probe: two empty data lines", "data\ndata\n\n", []string{"||\n"}},
		{"probe: empty data value dispatches", "data:\n\n", []string{"||"}},
		{"probe: one leading space stripped, no more", "data:  x \n\n", []string{"||" + " x "}},
		{"no space after the colon", "data:x\n\n", []string{"||x"}},
		{"probe: tab is not stripped", "data:\tx\n\n", []string{"||\tx"}},
		{"colon in the value", "data: a:b\n\n", []string{"||a:b"}},
		{"retry and unknown fields ignored", "retry: 10\nfoo: bar\ndata: x\n\n", []string{"||x"}},
		{"field names are case-sensitive", "Data: x\n\n", nil},
		{"space before the colon makes another field", "data : x\n\n", nil},
		{"probe: byte-order mark stripped", "\uFEFFdata: x\n\n", []string{"||x"}},
		{"only the first byte-order mark", "\uFEFF\uFEFFdata: x\n\n", nil},
		{"byte-order mark later is data", "data: \uFEFFx\n\n", []string{"||\uFEFFx"}},
		{"blank lines only", "\n\n\r\n\r\r", nil},
		{"event without data is not dispatched", "event: a\nid: 3\n\n", nil},
		{"unterminated last event dispatched", "data: a", []string{"||a"}},
		{"last event without blank line", "data: a\n", []string{"||a"}},
		{"empty stream", "", nil},
		{"JSON document", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n", []string{"||{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"}},
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"half":     iotest.HalfReader,
	}
	for _, c := range cases {
		for rname, wrap := range readers {
			t.Run(c.name+"/"+rname, func(t *testing.T) {
				got := readAll(t, NewReader(wrap(strings.NewReader(c.in)), 1<<10))
				if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", c.want) {
					t.Fatalf("%q: got %q, want %q", c.in, got, c.want)
				}
			})
		}
	}
}

func TestReaderLimits(t *testing.T) {
	r := NewReader(strings.NewReader("data: "+strings.Repeat("x", 100)+"\n\n"), 50)
	if _, err := r.Next(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("long line: %v", err)
	}
	r = NewReader(strings.NewReader(strings.Repeat("data: xxxxxxxxxx\n", 10)+"\n"), 50)
	if _, err := r.Next(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("big event: %v", err)
	}
}

func TestReaderLimitEdges(t *testing.T) {
	const max = 100
	full := strings.Repeat("x", max)
	cases := []struct {
		name, in string
		ok       bool
	}{
		{"data of exactly the limit", "data: " + full + "\n\n", true},
		{"data one byte over", "data: " + full + "x\n\n", false},
		{"lines joined to exactly the limit", "data: " + full[:49] + "\ndata: " + full[:50] + "\n\n", true},
		{"lines joined one byte over", "data: " + full[:50] + "\ndata: " + full[:50] + "\n\n", false},
		{"a long comment", ": " + full + "\n\ndata: y\n\n", true},
		{"a comment far over the limit", ": " + strings.Repeat("c", 10*max) + "\n\ndata: y\n\n", false},
		{"an unterminated line far over the limit", "data: " + strings.Repeat("x", 10*max), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(c.in), max)
			var err error
			for err == nil {
				var ev Event
				ev, err = r.Next()
				if len(ev.Data) > max {
					t.Fatalf("event of %d bytes passed a limit of %d", len(ev.Data), max)
				}
			}
			if c.ok && err != io.EOF {
				t.Fatalf("got %v, want the stream read to its end", err)
			}
			if !c.ok && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("got %v, want ErrTooLarge", err)
			}
			if _, again := r.Next(); again != err {
				t.Fatalf("after %v the next call returned %v", err, again)
			}
		})
	}
}

// failingReader yields its data and then err.
type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestReaderPassesReadErrors(t *testing.T) {
	boom := errors.New("connection reset")
	r := NewReader(&failingReader{data: []byte("data: a\n\ndata: partial"), err: boom}, 1<<10)
	ev, err := r.Next()
	if err != nil || string(ev.Data) != "a" {
		t.Fatalf("first event %q, %v", ev.Data, err)
	}
	// A broken stream is not a clean end: the partial event is dropped
	// and the error is the reader's own, not wrapped.
	if _, err := r.Next(); err != boom {
		t.Fatalf("got %v, want the read error itself", err)
	}
	if _, err := r.Next(); err != boom {
		t.Fatalf("second call: got %v, want the read error again", err)
	}
}

// reference is the HTML standard's algorithm written as plainly as
// possible (a data buffer with a LF per data line, dispatch when it is not
// empty), with this package's one deviation: what is pending at the end of
// the stream is dispatched.
func reference(b []byte) []string {
	s := strings.TrimPrefix(string(b), "\uFEFF")
	var lines []string
	for len(s) > 0 {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i])
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
	var out []string
	var data, typ, lastID string
	dispatch := func() {
		if data != "" {
			out = append(out, typ+"|"+lastID+"|"+strings.TrimSuffix(data, "\n"))
		}
		data, typ = "", ""
	}
	for _, line := range lines {
		if line == "" {
			dispatch()
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "data":
			data += value + "\n"
		case "event":
			typ = value
		case "id":
			if !strings.Contains(value, "\x00") {
				lastID = value
			}
		}
	}
	dispatch()
	return out
}

// FuzzReader checks that the reader ends on any input within the limit it
// was given, and that without a limit in the way it reads what the
// reference algorithm reads, whole or one byte at a time.
func FuzzReader(f *testing.F) {
	for _, s := range []string{"data: x\n\n", ":c\n\nevent: e\ndata: a\ndata: b\n\n", "data\r\n\r\n", "id: \x00\ndata: y", "\r\r\n\n",
		"\uFEFFdata: a\rdata: b\r\r", "data:  x \n\nid\ndata\n\n", "\xef\xbb", "event: t\n\ndata:\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewReader(bytes.NewReader(b), 128)
		ended := false
		for i := 0; i < len(b)+2; i++ {
			ev, err := r.Next()
			if err != nil {
				if err != io.EOF && !errors.Is(err, ErrTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				ended = true
				break
			}
			if len(ev.Data) > 128 {
				t.Fatalf("event data %d bytes beyond the limit", len(ev.Data))
			}
		}
		if !ended {
			t.Fatalf("reader did not reach the end of %d bytes", len(b))
		}
		want := fmt.Sprintf("%q", reference(b))
		if got := fmt.Sprintf("%q", readAll(t, NewReader(bytes.NewReader(b), len(b)+1))); got != want {
			t.Fatalf("%q: got %s, reference %s", b, got, want)
		}
		if got := fmt.Sprintf("%q", readAll(t, NewReader(iotest.OneByteReader(bytes.NewReader(b)), len(b)+1))); got != want {
			t.Fatalf("%q one byte at a time: got %s, reference %s", b, got, want)
		}
	})
}

package sse

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestWriter pins the bytes and headers of the server's streams (RPC-4):
// one "data: " line per JSON document, a blank line after it, keep-alive
// comments.
func TestWriter(t *testing.T) {
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Length", "12")
	w := Start(rec)
	if err := w.Data([]byte(`{"jsonrpc":"2.0","id":1,"result":{"task":{}}}`)); err != nil {
		t.Fatal(err)
	}
	if err := w.Comment("keep-alive"); err != nil {
		t.Fatal(err)
	}
	if err := w.Data([]byte(`{"a":"<&>"}`)); err != nil {
		t.Fatal(err)
	}
	want := "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"task\":{}}}\n\n: keep-alive\n\ndata: {\"a\":\"<&>\"}\n\n"
	if got := rec.Body.String(); got != want {
		t.Fatalf("body %q, want %q", got, want)
	}
	h := rec.Result().Header
	for k, v := range map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no", "Content-Length": ""} {
		if h.Get(k) != v {
			t.Errorf("%s: %q, want %q", k, h.Get(k), v)
		}
	}
	if rec.Code != 200 || !rec.Flushed {
		t.Errorf("status %d, flushed %v", rec.Code, rec.Flushed)
	}
}

// TestAppendRoundTrip writes data with line breaks of every kind and reads
// it back: each line became its own data line, and the reader joins them
// with "\n".
func TestAppendRoundTrip(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{"", ""},
		{"one", "one"},
		{"a\nb", "a\nb"},
		{"a\r\nb\rc\n", "a\nb\nc\n"},
		{" leading space", " leading space"},
		{"\n\n", "\n\n"},
		{": not a comment", ": not a comment"},
	} {
		buf := AppendComment(nil, "multi\nline\r\ncomment")
		buf = AppendData(buf, []byte(c.data))
		got := readAll(t, NewReader(strings.NewReader(string(buf)), 1<<10))
		if want := []string{"||" + c.want}; fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Errorf("%q: wrote %q, read %q, want %q", c.data, buf, got, want)
		}
	}
	if got := string(AppendComment(nil, "a\nb")); got != ": a\n: b\n\n" {
		t.Errorf("comment %q", got)
	}
}

// flushCounter is a response that records what had been written at each
// flush.
type flushCounter struct {
	*httptest.ResponseRecorder
	flushed []string
}

func (f *flushCounter) Flush() {
	f.ResponseRecorder.Flush()
	f.flushed = append(f.flushed, f.Body.String())
}

// TestWriterQueueFlushesOnce checks that queued events keep their framing
// and id lines and reach the client with the next Flush (or Event) only.
func TestWriterQueueFlushesOnce(t *testing.T) {
	f := &flushCounter{ResponseRecorder: httptest.NewRecorder()}
	w := Start(f)
	if err := w.Queue("1", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := w.Queue("2", []byte("{\"b\":\n2}")); err != nil {
		t.Fatal(err)
	}
	if len(f.flushed) != 1 || f.flushed[0] != "" {
		t.Fatalf("flushes before Flush: %q (want only the headers' one)", f.flushed)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := w.Event("3", []byte(`{"c":3}`)); err != nil {
		t.Fatal(err)
	}
	want := []string{"", "id: 1\ndata: {\"a\":1}\n\nid: 2\ndata: {\"b\":\ndata: 2}\n\n", "id: 1\ndata: {\"a\":1}\n\nid: 2\ndata: {\"b\":\ndata: 2}\n\nid: 3\ndata: {\"c\":3}\n\n"}
	if fmt.Sprint(f.flushed) != fmt.Sprint(want) {
		t.Fatalf("flushed %q, want %q", f.flushed, want)
	}
}

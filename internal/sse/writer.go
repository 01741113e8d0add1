package sse

import (
	"bytes"
	"net/http"
	"sync"
)

// AppendData appends one event carrying data to buf: a "data: " line per
// line of data (lines split at CRLF, LF or CR) and the blank line that
// dispatches it. A single-line JSON document becomes "data: <doc>\n\n".
func AppendData(buf, data []byte) []byte {
	for {
		buf = append(buf, "data: "...)
		i := bytes.IndexAny(data, "\r\n")
		if i < 0 {
			buf = append(buf, data...)
			break
		}
		buf = append(buf, data[:i]...)
		buf = append(buf, '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	return append(buf, '\n', '\n')
}

// AppendEvent appends one event with the given id (an "id: " line first,
// RPC-17) carrying data (see AppendData). id must hold no line break or
// NUL; an empty id is left out.
func AppendEvent(buf []byte, id string, data []byte) []byte {
	if id != "" {
		buf = append(buf, "id: "...)
		buf = append(buf, id...)
		buf = append(buf, '\n')
	}
	return AppendData(buf, data)
}

// AppendComment appends a comment (": <text>", one line per line of text)
// and a blank line to buf. Readers ignore it; it keeps idle connections
// and proxies from timing out.
func AppendComment(buf []byte, text string) []byte {
	for {
		buf = append(buf, ": "...)
		i := indexLineEnd(text)
		if i < 0 {
			buf = append(buf, text...)
			break
		}
		buf = append(buf, text[:i]...)
		buf = append(buf, '\n')
		if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			i++
		}
		text = text[i+1:]
	}
	return append(buf, '\n', '\n')
}

func indexLineEnd(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '\r' || s[i] == '\n' {
			return i
		}
	}
	return -1
}

// Writer writes an event stream to an HTTP response, flushing each event
// at once. After the first write error every call returns that error.
type Writer struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	err error
}

// Start sends the headers of an event stream (status 200, no caching, no
// proxy buffering) and flushes them.
func Start(w http.ResponseWriter) *Writer {
	s := Open(w)
	s.flush()
	return s
}

// Open is Start without the flush: the headers go out with the first
// Flush (or Event, Data, Comment), together with the events queued before
// it.
func Open(w http.ResponseWriter) *Writer {
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Del("Content-Length")
	w.WriteHeader(http.StatusOK)
	return &Writer{w: w, rc: http.NewResponseController(w)}
}

func (s *Writer) flush() {
	if err := s.rc.Flush(); err != nil && s.err == nil {
		s.err = err
	}
}

func (s *Writer) write(b []byte) error {
	if err := s.queue(b); err != nil {
		return err
	}
	s.flush()
	return s.err
}

// queue writes b to the response without flushing it.
func (s *Writer) queue(b []byte) error {
	if s.err != nil {
		return s.err
	}
	if _, err := s.w.Write(b); err != nil {
		s.err = err
		return err
	}
	return nil
}

// frames holds scratch buffers to render events in, so that a stream
// neither allocates one per event nor keeps one while it is idle.
var frames = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooledFrame bounds the buffers kept in frames.
const maxPooledFrame = 64 << 10

// Data writes one event carrying data (see AppendData).
func (s *Writer) Data(data []byte) error {
	if s.err != nil {
		return s.err
	}
	return s.write(AppendData(make([]byte, 0, len(data)+8), data))
}

// Event writes one event with an id carrying data (see AppendEvent) and
// flushes it.
func (s *Writer) Event(id string, data []byte) error {
	if err := s.Queue(id, data); err != nil {
		return err
	}
	return s.Flush()
}

// Queue writes one event with an id carrying data (see AppendEvent)
// without flushing it: several events written back to back go out with
// one Flush.
func (s *Writer) Queue(id string, data []byte) error {
	if s.err != nil {
		return s.err
	}
	bp := frames.Get().(*[]byte)
	b := AppendEvent((*bp)[:0], id, data)
	err := s.queue(b)
	if cap(b) <= maxPooledFrame {
		*bp = b[:0]
		frames.Put(bp)
	}
	return err
}

// Flush sends what was written so far to the client.
func (s *Writer) Flush() error {
	if s.err != nil {
		return s.err
	}
	s.flush()
	return s.err
}

// Comment writes a comment (see AppendComment), e.g. a keep-alive.
func (s *Writer) Comment(text string) error {
	if s.err != nil {
		return s.err
	}
	return s.write(AppendComment(nil, text))
}

// Package sse is the one Server-Sent Events (text/event-stream) reader and
// writer of the module, shared by the server bindings, the client, the
// http and openai backends and the validator's probe (RPC-4, TURN-4).
//
// The reader follows the event-stream parsing rules of the HTML standard
// (WHATWG, "9.2.6 Interpreting an event stream"): lines end at CRLF, LF or
// CR; a leading byte-order mark is dropped; a line starting with ":" is a
// comment; a line without ":" is a field name with an empty value; one
// space after the colon is removed; data lines are joined with "\n"; a
// blank line dispatches the event (an event without a data line is not
// dispatched); "id" sets the last event ID unless it holds NUL; "retry"
// and unknown fields are ignored. Unlike a browser, which reconnects, a
// stream that ends in the middle of an event still dispatches what it has
// read of it (a peer may close a one-shot response without the last blank
// line). Bytes are passed on as they are, not re-decoded as UTF-8.
//
// Every line and every event is bounded by the limit given to NewReader:
// an over-long one is an error wrapping ErrTooLarge, never unbounded
// memory.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// ContentType is the media type of an event stream.
const ContentType = "text/event-stream"

// ErrTooLarge is wrapped by the error for a line or an event beyond the
// reader's limit.
var ErrTooLarge = errors.New("server-sent event too large")

// fieldSlack is what a line may hold beyond the event limit: the field
// name, the colon and the space before a value of the full size.
const fieldSlack = 16

// bom is the UTF-8 byte-order mark a stream may start with.
var bom = []byte("\uFEFF")

// Event is one dispatched event.
type Event struct {
	// Type is the value of the last "event" field ("" means "message").
	Type string
	// ID is the last event ID of the stream at dispatch.
	ID string
	// Data is the event's data lines joined with "\n" (possibly empty).
	Data []byte
}

// Reader reads events from a stream, each line and each event's data at
// most max bytes. It is not safe for concurrent use.
type Reader struct {
	br      *bufio.Reader
	max     int
	lastID  string
	line    []byte
	started bool  // the byte-order mark check is done
	skipLF  bool  // the last line ended in CR: a following LF belongs to it
	err     error // sticky: once failed, every Next returns it
}

// NewReader returns a reader of r whose lines and events hold at most
// maxEvent bytes of data (maxEvent <= 0 means 1 MiB).
func NewReader(r io.Reader, maxEvent int) *Reader {
	if maxEvent <= 0 {
		maxEvent = 1 << 20
	}
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), max: maxEvent}
}

// Next returns the next dispatched event. It returns io.EOF at the end of
// the stream, an error wrapping ErrTooLarge for a line or an event beyond
// the limit, and the underlying reader's error as it is otherwise.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	var (
		data    []byte
		hasData bool
		typ     string
	)
	for {
		line, err := r.readLine()
		if err != nil {
			if err == io.EOF && hasData {
				return Event{Type: typ, ID: r.lastID, Data: data}, nil
			}
			r.err = err
			return Event{}, err
		}
		if len(line) == 0 {
			if hasData {
				return Event{Type: typ, ID: r.lastID, Data: data}, nil
			}
			typ = ""
			continue
		}
		if line[0] == ':' {
			continue // a comment
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(field) {
		case "data":
			n := len(data) + len(value)
			if hasData {
				n++
			}
			if n > r.max {
				r.err = fmt.Errorf("%w: event data longer than %d bytes", ErrTooLarge, r.max)
				return Event{}, r.err
			}
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		case "event":
			typ = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				r.lastID = string(value)
			}
		}
	}
}

// readLine returns the next line without its terminator (CRLF, LF or CR);
// a last line without one is returned before io.EOF. The slice is valid
// until the next call.
func (r *Reader) readLine() ([]byte, error) {
	limit := r.max + fieldSlack
	r.line = r.line[:0]
	if !r.started {
		// No event fits in fewer than 3 bytes, so waiting for them
		// delays none.
		r.started = true
		if b, _ := r.br.Peek(len(bom)); bytes.Equal(b, bom) {
			_, _ = r.br.Discard(len(bom))
		}
	}
	for {
		if r.br.Buffered() == 0 {
			if _, err := r.br.Peek(1); err != nil {
				if err == io.EOF && len(r.line) > 0 {
					return r.line, nil
				}
				return nil, err
			}
		}
		buf, _ := r.br.Peek(r.br.Buffered())
		if r.skipLF {
			r.skipLF = false
			if buf[0] == '\n' {
				_, _ = r.br.Discard(1)
				continue
			}
		}
		i := bytes.IndexAny(buf, "\r\n")
		end := i
		if i < 0 {
			end = len(buf)
		}
		if len(r.line)+end > limit {
			return nil, fmt.Errorf("%w: line longer than %d bytes", ErrTooLarge, limit)
		}
		r.line = append(r.line, buf[:end]...)
		if i < 0 {
			_, _ = r.br.Discard(len(buf))
			continue
		}
		r.skipLF = buf[i] == '\r'
		_, _ = r.br.Discard(i + 1)
		return r.line, nil
	}
}

package client

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Limits of the SSE reader.
const (
	// MaxSSELine bounds one line of an event stream.
	MaxSSELine = 4 << 20
	// MaxSSEEvent bounds the data of one event (all its data lines).
	MaxSSEEvent = 16 << 20
)

// ErrSSETooLarge is returned when a line or an event exceeds its limit.
var ErrSSETooLarge = errors.New("server-sent event too large")

// SSEEvent is one dispatched server-sent event.
type SSEEvent struct {
	// Event is the event type ("" means "message").
	Event string
	// ID is the last event id seen.
	ID string
	// Data is the joined data lines.
	Data []byte
}

// SSEReader reads server-sent events (text/event-stream) with bounded line
// and event sizes. Comments, retry and unknown fields are ignored.
type SSEReader struct {
	r        *bufio.Reader
	maxLine  int
	maxEvent int
	lastID   string
}

// NewSSEReader returns a reader with the default limits.
func NewSSEReader(r io.Reader) *SSEReader {
	return &SSEReader{r: bufio.NewReaderSize(r, 64<<10), maxLine: MaxSSELine, maxEvent: MaxSSEEvent}
}

// readLine returns one line without its terminator (LF, CRLF or a lone CR
// at the end of the buffered line).
func (s *SSEReader) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		if len(line)+len(chunk) > s.maxLine+2 {
			return nil, fmt.Errorf("%w: line longer than %d bytes", ErrSSETooLarge, s.maxLine)
		}
		line = append(line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF && len(line) > 0 {
				return bytes.TrimRight(line, "\r"), nil
			}
			return nil, err
		}
		line = line[:len(line)-1]
		return bytes.TrimSuffix(line, []byte("\r")), nil
	}
}

// Next returns the next event with data. It returns io.EOF at the end of
// the stream (an unterminated last event is still dispatched).
func (s *SSEReader) Next() (SSEEvent, error) {
	var (
		data    []byte
		hasData bool
		event   string
	)
	for {
		line, err := s.readLine()
		if err != nil {
			if err == io.EOF && hasData {
				return SSEEvent{Event: event, ID: s.lastID, Data: data}, nil
			}
			return SSEEvent{}, err
		}
		if len(line) == 0 {
			if hasData {
				return SSEEvent{Event: event, ID: s.lastID, Data: data}, nil
			}
			event = ""
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(field) {
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			if len(data)+len(value) > s.maxEvent {
				return SSEEvent{}, fmt.Errorf("%w: event data longer than %d bytes", ErrSSETooLarge, s.maxEvent)
			}
			data = append(data, value...)
			hasData = true
		case "event":
			event = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				s.lastID = string(value)
			}
		}
	}
}

package backends

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/internal/limitio"
)

// Default stream limits of the exec and http backends.
const (
	// DefaultMaxLineBytes bounds one event line (an inline artifact payload
	// must fit in it).
	DefaultMaxLineBytes = 16 << 20
	// DefaultMaxOutputBytes bounds everything a backend emits in one turn.
	DefaultMaxOutputBytes = 64 << 20
)

// Output over a limit is unusable: a protocol error (the turn fails, and
// a blocking SendMessage answers InvalidAgentResponseError).
var (
	errLineTooLong   error = &backend.ProtocolError{Err: errors.New("event line exceeds the line limit")}
	errOutputTooLong error = &backend.ProtocolError{Err: errors.New("turn output exceeds the output limit")}
)

// lineReader reads newline-terminated lines with a per-line and a total
// limit (errOutputTooLong once the stream holds more); it never buffers
// more than one line.
type lineReader struct {
	br      *bufio.Reader
	maxLine int
}

func newLineReader(r io.Reader, maxLine int, maxTotal int64) *lineReader {
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	if maxTotal <= 0 {
		maxTotal = DefaultMaxOutputBytes
	}
	return &lineReader{br: bufio.NewReaderSize(limitio.NewReader(r, maxTotal, errOutputTooLong), 64<<10), maxLine: maxLine}
}

// next returns the next line without its line ending; io.EOF at the end (a
// last line without a newline is returned first).
func (l *lineReader) next() ([]byte, error) {
	var line []byte
	for {
		chunk, err := l.br.ReadSlice('\n')
		if len(line)+len(chunk) > l.maxLine+2 {
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		switch {
		case err == nil, errors.Is(err, io.EOF) && len(line) > 0:
			line = bytes.TrimRight(line, "\r\n")
			if len(line) > l.maxLine {
				return nil, errLineTooLong
			}
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}

// decodeEvent parses one protocol line. Blank lines give ok=false; a line
// that is not a JSON object, or has another protocol version, is a
// backend.ProtocolError (the turn fails, sanitised).
func decodeEvent(line []byte) (ev backend.Event, ok bool, err error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return ev, false, nil
	}
	if line[0] != '{' {
		return ev, false, &backend.ProtocolError{Err: errors.New("a line is not a JSON object")}
	}
	if err := json.Unmarshal(line, &ev); err != nil {
		return ev, false, &backend.ProtocolError{Err: fmt.Errorf("malformed event: %w", err)}
	}
	if ev.V != backend.EventVersion {
		return ev, false, &backend.ProtocolError{Err: fmt.Errorf("unsupported version %d", ev.V)}
	}
	if ev.Type == "" {
		return ev, false, &backend.ProtocolError{Err: errors.New("event without a type")}
	}
	return ev, true, nil
}

// errKind wraps err as a TurnError of the given kind.
func errKind(kind string, err error) error {
	return &backend.TurnError{Kind: kind, Err: err}
}

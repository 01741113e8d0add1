package backends

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/backend"
)

// TURN-1: the turn-event NDJSON an agent writes is read line by line
// within the line and output limits and decoded without panicking: every
// line is at most the line limit, an accepted event has the protocol
// version and a type, and every refusal is a protocol error or a limit
// error; reading always ends.
func FuzzNDJSON(f *testing.F) {
	for _, s := range []string{
		"{\"v\":1,\"type\":\"text\",\"text\":\"hi\"}\n{\"v\":1,\"type\":\"end\",\"outcome\":\"completed\"}\n",
		"{\"v\":1,\"type\":\"tool\",\"status\":\"started\",\"toolUseId\":\"t\",\"name\":\"x\",\"input\":{\"a\":[1,2]}}\r\n\n  \n",
		"{\"v\":1,\"type\":\"artifact\",\"artifactId\":\"a\",\"name\":\"n\",\"mediaType\":\"image/png\",\"base64\":\"iVBORw0KGgo=\"}",
		"{\"v\":2,\"type\":\"text\"}\n", "{\"v\":1}\n", "[1]\n", "{\"v\":1,\"type\":\"text\",\"text\":\"" + string(bytes.Repeat([]byte("x"), 200)) + "\"}\n",
		"{\"v\":1,\"type\":\"usage\",\"inputTokens\":-1,\"totalTokens\":1e99}\n", "\xff\xfe\n{\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const maxLine, maxTotal = 128, 4096
		lr := newLineReader(bytes.NewReader(data), maxLine, maxTotal)
		for i := 0; ; i++ {
			if i > len(data)+1 {
				t.Fatal("the reader does not end")
			}
			line, err := lr.next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, errLineTooLong) && !errors.Is(err, errOutputTooLong) {
					t.Fatalf("unexpected read error %v", err)
				}
				return
			}
			if len(line) > maxLine {
				t.Fatalf("a line of %d bytes passed the %d limit", len(line), maxLine)
			}
			ev, ok, err := decodeEvent(line)
			if err != nil {
				var pe *backend.ProtocolError
				if !errors.As(err, &pe) || err.Error() == "" {
					t.Fatalf("refusal %v is not a protocol error", err)
				}
				return
			}
			if ok && (ev.V != backend.EventVersion || ev.Type == "") {
				t.Fatalf("accepted %+v", ev)
			}
			if !ok && len(bytes.TrimSpace(line)) != 0 {
				t.Fatalf("a non-blank line %q was skipped", line)
			}
		}
	})
}

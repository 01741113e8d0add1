package redisrpc

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// Entry field names (XPORT-5).
const (
	FieldCorrelationID = "correlation_id"
	FieldReplyStream   = "reply_stream"
	FieldPayload       = "payload"
	FieldHeaders       = "headers"
	FieldFinal         = "final"
)

// request is one request entry as read from the stream.
type request struct {
	// id is the entry id (what XACK takes).
	id string
	// correlation is the client's correlation_id, echoed on every answer.
	correlation string
	// reply is the reply stream the client asked for (not checked yet).
	reply string
	// payload is the JSON-RPC message.
	payload string
	// headers are the request's headers, keys in lower case.
	headers map[string]string
	// err is why the entry is malformed (set together with whatever could
	// be read, so an answer can still go out when reply is usable).
	err error
}

// errTooLarge marks a payload or headers beyond MaxPayloadBytes.
var errTooLarge = errors.New("too large")

// parseEntry reads a request entry; fields that are missing or not
// strings are empty. The payload and headers are bounded by max bytes.
func parseEntry(m redis.XMessage, max int64) request {
	str := func(k string) string {
		s, _ := m.Values[k].(string)
		return s
	}
	r := request{id: m.ID, correlation: str(FieldCorrelationID), reply: str(FieldReplyStream), payload: str(FieldPayload)}
	if len(r.correlation) > maxStreamName {
		r.correlation = ""
	}
	if int64(len(r.payload)) > max {
		r.payload = ""
		r.err = errTooLarge
		return r
	}
	if _, ok := m.Values[FieldPayload]; !ok {
		r.err = errors.New("the entry has no payload")
		return r
	}
	raw := str(FieldHeaders)
	if raw == "" {
		return r
	}
	if int64(len(raw)) > max {
		r.err = errTooLarge
		return r
	}
	var hs map[string]string
	if err := json.Unmarshal([]byte(raw), &hs); err != nil {
		r.err = errors.New("headers must be a JSON object of strings")
		return r
	}
	r.headers = make(map[string]string, len(hs))
	for k, v := range hs {
		r.headers[strings.ToLower(k)] = v
	}
	return r
}

// version is the A2A-Version header (RPC-2); absent, 1.0 (XPORT §9:
// custom frames default to 1.0, unlike HTTP where absent means 0.3).
func (r request) version() string {
	if v := r.headers["a2a-version"]; v != "" {
		return v
	}
	return "1.0"
}

// extensions are the comma-separated A2A-Extensions URIs (RPC-3).
func (r request) extensions() []string {
	return a2a.ParseExtensions(r.headers["a2a-extensions"])
}

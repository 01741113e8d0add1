package redisrpc

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc"
)

// XPORT-5: a request entry, whatever its fields hold (missing, not
// strings, oversized, malformed headers), is read without panicking into
// bounded values: the correlation id fits a stream name, the payload fits
// the limit, header keys are lower case, a clean error says why an entry
// is refused; the id peeked for an early answer and the end frame built
// from it are valid JSON, and a reply stream is allowed only under the
// configured prefix.
func FuzzEntry(f *testing.F) {
	f.Add("c-1", "a2a:replies:x", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}`, `{"A2A-Version":"1.0","A2A-Extensions":"urn:a, ,urn:b"}`, uint8(0), uint16(1024))
	f.Add("", "", "", "", uint8(0xff), uint16(0))
	f.Add(strings.Repeat("c", 600), "a2a:replies", `{"id":{"a":[1]},"method":"`+strings.Repeat("m", 80)+`"}`, `[1]`, uint8(0x0a), uint16(10))
	f.Add("c", "a2a:repliesX", `not json`, `{"k":1}`, uint8(0x10), uint16(65535))
	f.Fuzz(func(t *testing.T, corr, reply, payload, headers string, mask uint8, max uint16) {
		vals := map[string]any{}
		put := func(bit uint8, k, v string) {
			switch {
			case mask&bit != 0:
			case mask&(bit<<4) != 0:
				vals[k] = 42 // present, not a string
			default:
				vals[k] = v
			}
		}
		put(1, FieldCorrelationID, corr)
		put(2, FieldReplyStream, reply)
		put(4, FieldPayload, payload)
		put(8, FieldHeaders, headers)
		limit := int64(max)
		r := parseEntry(redis.XMessage{ID: "1-1", Values: vals}, limit)
		if len(r.correlation) > maxStreamName {
			t.Fatalf("correlation id of %d bytes kept", len(r.correlation))
		}
		if int64(len(r.payload)) > limit {
			t.Fatalf("payload of %d bytes over the %d limit kept", len(r.payload), limit)
		}
		if r.err != nil && r.err.Error() == "" {
			t.Fatal("empty error")
		}
		if _, ok := vals[FieldPayload]; !ok && r.err == nil {
			t.Fatal("an entry without a payload was accepted")
		}
		for k := range r.headers {
			if k != strings.ToLower(k) {
				t.Fatalf("header key %q not lower case", k)
			}
		}
		if r.version() == "" {
			t.Fatal("no version")
		}
		for _, e := range r.extensions() {
			if e == "" || e != strings.TrimSpace(e) {
				t.Fatalf("extension %q", e)
			}
		}
		id, method := peekID(r.payload)
		if !json.Valid(id) || len(method) > 64 || !json.Valid(jsonrpc.EndFrame(id)) {
			t.Fatalf("peekID(%q) = %q %q", r.payload, id, method)
		}
		o := Options{ResponsePrefix: "a2a:replies"}
		if o.allowedReply(r.reply) && r.reply != o.ResponsePrefix && !strings.HasPrefix(r.reply, o.ResponsePrefix+":") {
			t.Fatalf("reply stream %q allowed", r.reply)
		}
	})
}

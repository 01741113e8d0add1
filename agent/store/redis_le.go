package store

import (
	"strconv"
	"strings"
)

// The le event by reference (issue 32, memory). The event that ends an
// unwatched turn is a status update whose JSON repeats the start of the
// task's own JSON: {"statusUpdate":{"taskId":<id>,"contextId":<ctx>,
// "status":<status>}} against {"id":<id>,"contextId":<ctx>,"status":
// <status>,…}. When it does, byte for byte, the record's le field holds
// "<seq> =<end>" instead of the event: the event is leRefPrefix, bytes 7
// to end (1-based, inclusive) of the record's b field, then "}}". A
// reference always describes the record's current b: a write that
// replaces b and keeps le spells the event out first (putRecordLua), and
// so does every script that moves le into a stream (leLua). A field
// written before this form holds the event itself and reads as before.

const (
	leRefPrefix = `{"statusUpdate":{"taskId":`
	leBodyStart = `{"id":`
)

// leRef returns what a write stores for event ev of a task whose JSON is
// body: "=<end>" when ev is the status update body starts with, else ev.
func leRef(ev, body string) string {
	if !strings.HasPrefix(ev, leRefPrefix) || !strings.HasSuffix(ev, "}}") || !strings.HasPrefix(body, leBodyStart) {
		return ev
	}
	mid := ev[len(leRefPrefix) : len(ev)-2]
	if !strings.HasPrefix(body[len(leBodyStart):], mid) {
		return ev
	}
	return "=" + strconv.Itoa(len(leBodyStart)+len(mid))
}

// leExpand returns the event JSON of an le body: the body itself, or the
// event a reference ("=<end>") makes of the task JSON b.
func leExpand(le, b string) (string, bool) {
	ref, ok := strings.CutPrefix(le, "=")
	if !ok {
		return le, true
	}
	end, err := strconv.Atoi(ref)
	if err != nil || end < len(leBodyStart) || end > len(b) {
		return "", false
	}
	return leRefPrefix + b[len(leBodyStart):end] + "}}", true
}

// leLua defines leWith(b, body): the event JSON of le body b when the
// task JSON is body, as leExpand does; and leExpand(b, k), the same
// against the b field of task hash k (read only for a reference).
const leLua = `
local function leWith(b, body)
  local e = string.match(b, '^=(%d+)$')
  if not e then return b end
  return '` + leRefPrefix + `' .. string.sub(body, 7, tonumber(e)) .. '}}'
end
local function leExpand(b, k)
  if string.sub(b, 1, 1) ~= '=' then return b end
  return leWith(b, redis.call('HGET', k, 'b') or '')
end
`

package store

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// listByStateScript pages through the tasks of one context in one state
// (one slot: the owner's hash tag). There is no sorted set per context
// and state (issue 32: it cost a key per context); the context's set is
// walked in chunks, newest first, from the upper end down to the lower
// bound, and each member's state read from the owner index, as SQLite
// filters a context's rows by state. The walk is bounded by the
// context's task count, which the exact total needs anyway.
//
// KEYS[1] the context's sorted set, KEYS[2] the owner index hash. ARGV
// state, lower bound ("-" or "[ms"), the cursor member ("" = from the
// top), page size. It returns {total, members of the page}.
var listByStateScript = redis.NewScript(setsLua + `
local want = tonumber(ARGV[4])
local skip = 0
if ARGV[3] ~= '' then skip = redis.call('ZLEXCOUNT', KEYS[1], '[' .. ARGV[3], '+') end
local total, page, pos, off = 0, {}, 0, 0
while true do
  local ms = redis.call('ZRANGE', KEYS[1], '+', ARGV[2], 'BYLEX', 'REV', 'LIMIT', off, 256)
  if #ms == 0 then break end
  local ids = {}
  for i, m in ipairs(ms) do ids[i] = string.match(m, '^%d+:(.*)$') or '' end
  local es = redis.call('HMGET', KEYS[2], unpack(ids))
  for i, m in ipairs(ms) do
    pos = pos + 1
    if es[i] then
      local _, _, st = ixEntry(es[i], ids[i])
      if st == ARGV[1] then
        total = total + 1
        if pos > skip and #page < want then page[#page + 1] = m end
      end
    end
  end
  if #ms < 256 then break end
  off = off + 256
end
return {total, page}
`)

// listByState runs listByStateScript: the total of the context's tasks
// in state from lo, and up to want members below the cursor member (""
// = from the top).
func (s *Redis) listByState(ctx context.Context, q ListQuery, lo, cursor string, want int) (int, []string, error) {
	res, err := listByStateScript.Run(ctx, s.c, []string{s.listKey(q.Owner, q.ContextID, ""), s.ownerIx(q.Owner)},
		string(q.State), lo, cursor, want).Slice()
	if err != nil {
		return 0, nil, s.opErr("listing tasks", err)
	}
	total, _ := res[0].(int64)
	raw, _ := res[1].([]any)
	members := make([]string, 0, len(raw))
	for _, m := range raw {
		if str, ok := m.(string); ok {
			members = append(members, str)
		}
	}
	return int(total), members, nil
}

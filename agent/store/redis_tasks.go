package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// putTaskScript writes a task record (one slot: the task's hash tag). It
// refuses a task of another owner (nil reply) and bumps the record's
// version (the owner index applies only newer versions, so index updates
// that arrive out of order converge).
//
// KEYS[1] task hash. ARGV owner, context id, state, status ms, body,
// artifacts ("" = none), event log TTL ms (0: none), then the held
// events (see putRecordLua).
var putTaskScript = redis.NewScript(putRecordLua + `
return putRecord(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], '', ARGV[7], 8)
`)

// indexScript moves a task in its owner's sorted sets (one slot: the
// owner's hash tag): out of the sets of the version it indexed last, into
// those of version ARGV[2], unless a newer version is indexed already.
//
// KEYS[1] the owner's index hash (task id → "version|ctx|state|member").
// ARGV task id, version, context key part, state, member, sorted set base key.
var indexScript = redis.NewScript(indexLua)

const indexLua = setsLua + `
local function index(ix, id, ver, cpart, state, m, base)
` + indexBody + `
end
return index(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
`

// putIndexedScript is putTaskScript then indexScript in one script, for
// deployments without cluster slots (standalone, Sentinel): the record
// and its index change atomically, in one round trip.
//
// KEYS[1] task hash, KEYS[2] owner index hash. ARGV as putTaskScript,
// then task id, context key part, member, sorted set base key, event log
// TTL ms, the lease token of KEYS[3] (optional: a context lease this
// write gives up, see finalLeaseLua), the running set and its change (see
// runLua), then the held events (see putRecordLua).
var putIndexedScript = redis.NewScript(putRecordLua + setsLua + finalLeaseLua + runLua + `
local function index(ix, id, ver, cpart, state, m, base)
` + indexBody + `
end
releaseLease(KEYS[3], ARGV[12])
local v = putRecord(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], '', ARGV[11], 15)
if not v then return false end
if v == -1 then
  trackRun(ARGV[13], ARGV[14], ARGV[7], true)
  return -1
end
index(KEYS[2], ARGV[7], v, ARGV[8], ARGV[3], ARGV[9], ARGV[10])
trackRun(ARGV[13], ARGV[14], ARGV[7], false)
return v
`)

// setsLua defines sets(base, c, s, cs): the owner's sorted sets that
// hold a task of context key part c in state s (with cs, also the per
// context and state set of the layout before issue 32 step 1, which an
// entry written then still has members in); and ixEntry, which reads an
// owner index entry.
const setsLua = `
local function sets(base, c, s, cs)
  local k = {base}
  if c ~= '' then k[#k+1] = base .. ':c:' .. c end
  if s ~= '' then k[#k+1] = base .. ':s:' .. s end
  if cs and c ~= '' and s ~= '' then k[#k+1] = base .. ':cs:' .. c .. ':' .. s end
  return k
end

-- ixEntry reads an owner index entry: "version|ctx|state|ms|" (the
-- layout without the per context and state set), "version|ctx|state|ms"
-- (issue 32: the status time, not a copy of the member) or, as written
-- before, "version|ctx|state|member"; it returns version, ctx, state,
-- member and whether the task is in a per context and state set too.
local function ixEntry(e, id)
  local v, c, s, m = string.match(e, '^(%d+)|([^|]*)|([^|]*)|(.*)$')
  if not v then return v, c, s, m, false end
  local cs = true
  if string.sub(m, -1) == '|' then m = string.sub(m, 1, -2); cs = false end
  if not string.find(m, ':', 1, true) then m = m .. ':' .. id end
  return v, c, s, m, cs
end
`

// indexBody is the body of indexScript over named arguments (after
// setsLua). Old entries move to the new layout on their next write (out
// of the per context and state set).
const indexBody = `
local ms = string.match(m, '^(%d+):')
local old = redis.call('HGET', ix, id)
if old then
  local ov, c, s, om, ocs = ixEntry(old, id)
  if tonumber(ov) >= tonumber(ver) then return 0 end
  if not ocs and c == cpart and s == state and om == m then
    redis.call('HSET', ix, id, ver .. '|' .. c .. '|' .. s .. '|' .. ms .. '|')
    return 1
  end
  for _, k in ipairs(sets(base, c, s, ocs)) do redis.call('ZREM', k, om) end
end
for _, k in ipairs(sets(base, cpart, state, false)) do redis.call('ZADD', k, 0, m) end
redis.call('HSET', ix, id, ver .. '|' .. cpart .. '|' .. state .. '|' .. ms .. '|')
return 1
`

// historyTail ends a stored task JSON whose history's last message is
// its status message, left out of the history (issue 32, memory: a turn's
// answer is both); decodeRedisTask puts it back. JSON holds no raw
// newline, so a record written before reads as it is.
const historyTail = "\n+"

// decodeRedisTask is decodeTask for a Redis record's b field.
func decodeRedisTask(t *a2a.Task, body, arts []byte, withArtifacts bool) error {
	body, tail := bytes.CutSuffix(body, []byte(historyTail))
	if err := decodeTask(t, body, arts, withArtifacts); err != nil {
		return err
	}
	if tail && t.Status.Message != nil {
		t.History = append(t.History, *t.Status.Message)
	}
	return nil
}

// encodedTask is a task ready to be written.
type encodedTask struct {
	id, contextID, state string
	statusMS             int64
	body, arts           string
}

func encodeTask(t *a2a.Task) (encodedTask, error) {
	if t == nil {
		return encodedTask{}, errors.New("writing task: nil task")
	}
	if t.ID == "" {
		return encodedTask{}, errors.New("writing task: empty task id")
	}
	e := encodedTask{id: t.ID, contextID: t.ContextID, state: string(t.Status.State)}
	if t.Status.Timestamp == "" {
		e.statusMS = time.Now().UnixMilli()
	} else {
		ts, err := a2a.ParseTimestamp(t.Status.Timestamp)
		if err != nil {
			return encodedTask{}, fmt.Errorf("writing task %q: invalid status timestamp: %w", t.ID, err)
		}
		e.statusMS = ts.UnixMilli()
	}
	noArts := *t
	noArts.Artifacts = nil
	tail := ""
	if n := len(t.History); n > 0 && t.Status.Message != nil && reflect.DeepEqual(t.History[n-1], *t.Status.Message) {
		noArts.History, tail = t.History[:n-1], historyTail
	}
	body, err := a2a.MarshalJSONString(&noArts)
	if err != nil {
		return encodedTask{}, fmt.Errorf("encoding task %q: %w", t.ID, err)
	}
	e.body = body + tail
	if len(t.Artifacts) > 0 {
		a, err := a2a.MarshalJSONString(t.Artifacts)
		if err != nil {
			return encodedTask{}, fmt.Errorf("encoding artifacts of task %q: %w", t.ID, err)
		}
		e.arts = a
	}
	return e, nil
}

// PutTask inserts or replaces the owner's task; ErrNotFound when the id
// belongs to another owner. Without cluster slots the record and the
// owner's list indexes change in one script. In a cluster (the index is
// another slot) the record is written atomically, then the index: a crash
// between the two leaves the index one version behind until the task's
// next write.
func (s *Redis) PutTask(ctx context.Context, owner string, t *a2a.Task) error {
	if err := s.live(); err != nil {
		return err
	}
	e, err := encodeTask(t)
	if err != nil {
		return err
	}
	s.renewIfStale(ctx, t.Status.State)
	le := s.takeHeld(e.id)
	if !s.cluster {
		fl, ro := s.takeFinalLease(t), s.runOpFor(e.id, t.Status.State)
		args := append([]any{owner, e.contextID, e.state, e.statusMS, e.body, e.arts,
			e.id, keyPart(e.contextID), member(e.statusMS, e.id), s.ownerBase(owner), s.logTTL(t), fl.tokenArg(), ro.key, ro.op}, le.args(e.body)...)
		v, err := putIndexedScript.Run(ctx, s.c, fl.keys([]string{s.taskKey(e.id), s.ownerIx(owner)}), args...).Int64()
		fl.done(err)
		if errors.Is(err, redis.Nil) {
			return ErrNotFound
		}
		if err != nil {
			s.putBack(e.id, le)
			return s.opErr("writing task", err)
		}
		s.runOpDone(e.id, ro, v == -1)
		if v == -1 {
			return ErrTaskReaped
		}
		return nil
	}
	version, err := putTaskScript.Run(ctx, s.c, []string{s.taskKey(e.id)},
		append([]any{owner, e.contextID, e.state, e.statusMS, e.body, e.arts, s.logTTL(t)}, le.args(e.body)...)...).Int64()
	if errors.Is(err, redis.Nil) {
		return ErrNotFound
	}
	if err != nil {
		s.putBack(e.id, le)
		return s.opErr("writing task", err)
	}
	if version == -1 {
		s.trackRunning(ctx, e.id, a2a.TaskStateFailed)
		return ErrTaskReaped
	}
	if err := s.indexTask(ctx, owner, e, version); err != nil {
		return err
	}
	s.trackRunning(ctx, e.id, t.Status.State)
	return nil
}

// logTTL is the expiry (ms) a write of t sets on the task's event log:
// the store's event log TTL once the state is final, else 0.
func (s *Redis) logTTL(t *a2a.Task) int64 {
	if s.evTTL <= 0 || !t.Status.State.Terminal() {
		return 0
	}
	s.markEnded(t.ID) // events appended after it expire too (redis_events.go)
	return s.evTTL.Milliseconds()
}

// indexTask moves version of the task in its owner's sorted sets (the
// second step of a write in a cluster).
func (s *Redis) indexTask(ctx context.Context, owner string, e encodedTask, version int64) error {
	err := indexScript.Run(ctx, s.c, []string{s.ownerIx(owner)},
		e.id, version, keyPart(e.contextID), e.state, member(e.statusMS, e.id), s.ownerBase(owner)).Err()
	if err != nil {
		return s.opErr("indexing task", err)
	}
	return nil
}

// PutTaskNoWait is PutTask with a timeout of its own: the write has
// landed when it returns (so later writes of the caller apply after it).
func (s *Redis) PutTaskNoWait(owner string, t *a2a.Task) error {
	ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
	defer cancel()
	return s.PutTask(ctx, owner, t)
}

// GetTask returns the owner's task, or ErrNotFound.
func (s *Redis) GetTask(ctx context.Context, owner, id string) (*a2a.Task, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	vals, err := s.c.HMGet(ctx, s.taskKey(id), "o", "b", "a").Result()
	if err != nil {
		return nil, s.opErr("reading task", err)
	}
	o, ok := vals[0].(string)
	if !ok || o != owner {
		return nil, ErrNotFound
	}
	body, _ := vals[1].(string)
	arts, _ := vals[2].(string)
	t := new(a2a.Task)
	if err := decodeRedisTask(t, []byte(body), []byte(arts), true); err != nil {
		return nil, err
	}
	return t, nil
}

// FailInterrupted does nothing on a shared store and returns 0: the tasks
// left WORKING may belong to instances that are alive. RPC-12 recovery
// across instances is by instance leases (ReapInstances, SCALE-2).
func (s *Redis) FailInterrupted(context.Context, string, time.Time) (int, error) {
	if err := s.live(); err != nil {
		return 0, err
	}
	return 0, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

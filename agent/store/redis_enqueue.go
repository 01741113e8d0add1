package store

import (
	"context"
	"encoding/base64"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// Push jobs are queued atomically with the state change that makes them
// (SCALE-2, PUSH-5). The job records are built inside the script that
// writes the task, from the push configs it reads in the same script, so
// a job exists exactly when the write that triggered it landed: no lost
// notification (a crash after the write) and no phantom one (a write that
// failed, a config deleted meanwhile).
//
// Without cluster slots (standalone, Sentinel) that one script also puts
// the jobs in the outbox ({p}: the queue, the job strings, the config's
// job set). In a cluster the outbox is another slot, so the script puts
// them in the task's own pending hash P{t:<id>}:pj instead; they are then
// moved to the outbox (SET NX: a second move of the same job is a no-op)
// and dropped from the pending hash. A crash between the two steps leaves
// them pending, never lost: the task's next write moves them with its own,
// the instance retries a failed move on its heartbeat, and, because the
// task stays in the instance's running set until the move succeeded, the
// instance that reaps a dead instance moves them too.

// makeJobsLua builds the jobs of a write: one per config in the hash
// cfgKey, as the JSON of a redisJob. cjBase is the key of a config's job
// set without the config id, used for configs stored before their job set
// key was stored with them (ids of the plain alphabet only). tp is the
// W3C traceparent of the writing turn (empty when not traced).
const makeJobsLua = `
local function makeJobs(cfgKey, cjBase, idBase, payload, now, tp)
  local out = {}
  for i, v in ipairs(redis.call('HVALS', cfgKey)) do
    local c = cjson.decode(v)
    local cj = c.cj
    if type(cj) ~= 'string' then
      cj = ''
      if type(c.ID) == 'string' and #c.ID <= 128 and string.match(c.ID, '^[%w%._/@%-]+$') then cj = cjBase .. c.ID end
    end
    local id = idBase .. string.format('%04x', i)
    local j = {ID = id, TaskID = c.TaskID, ConfigID = c.ID, Owner = c.Owner, URL = c.URL,
      Token = c.Token, Scheme = c.Scheme, Credentials = c.Credentials, Payload = payload,
      Attempts = 0, Due = now, CreatedAt = now, LastError = '', TraceParent = tp, cj = cj}
    out[#out + 1] = {id, cjson.encode(j), cj}
  end
  return out
end
`

// putRecordLua writes the task record like putTaskScript: false for
// another owner's task, -1 for a task a reaper failed (its state is final:
// the late write of a turn whose instance was reaped changes nothing),
// else the record's new version. With reap "1" it writes only over a
// task still SUBMITTED or WORKING (else -1) and marks it reaped.
//
// With evTTL above 0 (the state is final) the task's event log expires
// evTTL ms later (RPC-17: resumable while the client may reconnect). A
// state other than SUBMITTED or WORKING clears the task's cancel flag
// (redis_live.go): the turn it was meant for has ended. It reads the
// record once (HMGET) and writes it once (HSET); a new record has no
// artifacts or cancel flag to clear (issue 32). ctx is not stored (issue
// 32: the JSON holds it, and nothing read the field; records written
// before keep their c field unread); the argument stays so that the
// scripts' argument positions do not move.
//
// From ARGV[evs] on (when present) come the task's events held by
// AppendEvents (redis_events.go): log size, le flag, then seq, body
// pairs. They are written with the record: one event ending an unwatched
// turn of a task without stream goes to the record's le field; otherwise
// into the stream (created with the le event first, which then leaves
// the record), like appendEventsScript. The le event may be a reference
// to the task JSON (redis_le.go): one to the record's b is spelled out
// before b changes, one to the written body where it goes to a stream.
const putRecordLua = leLua + `
local function putRecord(k, owner, ctx, state, ms, body, arts, reap, evTTL, evs)
  local h = redis.call('HMGET', k, 'o', 'r', 'v', 's', 'le')
  if h[1] and h[1] ~= owner then return false end
  if h[2] then return -1 end
  local v = (tonumber(h[3]) or 0) + 1
  local f = {'o', owner, 's', state, 'ts', ms, 'b', body, 'v', v}
  if reap == '1' then
    if h[4] ~= '` + string(a2a.TaskStateSubmitted) + `' and h[4] ~= '` + string(a2a.TaskStateWorking) + `' then return -1 end
    f[#f+1] = 'r'; f[#f+1] = '1'
  end
  if arts ~= '' then f[#f+1] = 'a'; f[#f+1] = arts end
  local dropLe, newLe = false, false
  if evs and #ARGV >= evs + 3 then
    local ev = k .. ':ev'
    local keep = ARGV[evs]
    local stream = redis.call('EXISTS', ev) == 1
    if not stream and ARGV[evs + 1] == '1' and #ARGV == evs + 3 then
      f[#f+1] = 'le'; f[#f+1] = ARGV[evs + 2] .. ' ' .. ARGV[evs + 3]
      newLe = true
    else
      if not stream and h[5] then
        local seq, b = string.match(h[5], '^(%d+) (.*)$')
        if tonumber(seq) < tonumber(ARGV[evs + 2]) then
          redis.call('XADD', ev, 'MAXLEN', keep, seq .. '-0', 'b', leExpand(b, k))
        end
        dropLe = true
      end
      for i = evs + 2, #ARGV, 2 do
        redis.pcall('XADD', ev, 'MAXLEN', keep, ARGV[i] .. '-0', 'b', leWith(ARGV[i + 1], body))
      end
    end
  end
  if h[5] and not newLe and not dropLe and h[1] then
    local seq, b = string.match(h[5], '^(%d+) (=%d+)$')
    if seq then f[#f+1] = 'le'; f[#f+1] = seq .. ' ' .. leExpand(b, k) end
  end
  redis.call('HSET', k, unpack(f))
  if dropLe then redis.call('HDEL', k, 'le') end
  if arts == '' and h[1] then redis.call('HDEL', k, 'a') end
  if tonumber(evTTL) > 0 then redis.call('PEXPIRE', k .. ':ev', evTTL) end
  if h[1] and state ~= '` + string(a2a.TaskStateSubmitted) + `' and state ~= '` + string(a2a.TaskStateWorking) + `' then redis.call('DEL', k .. ':cx') end
  return v
end
`

// ErrTaskReaped is the answer to a write of a task that a reaper failed
// (its instance's lease had ended): the task stays FAILED.
var ErrTaskReaped = errors.New("writing task: the task was failed after this instance's heartbeat lease ended; its state is final")

// putIndexedJobsScript writes the task, its index and its jobs in the
// outbox, in one script (no cluster slots).
//
// KEYS[1] task hash, KEYS[2] push config hash, KEYS[3] owner index hash.
// ARGV owner, context id, state, status ms, body, artifacts, task id,
// context key part, member, sorted set base key, job key prefix, queue
// key, job set base key, job id base, payload (base64), now (RFC 3339),
// now ms, reap flag, event log TTL ms, traceparent, the lease token of
// KEYS[4] (optional: a context lease this write gives up, see
// finalLeaseLua), the running set and its change (see runLua), then the
// held events (see putRecordLua). Returns {version, jobs queued}.
var putIndexedJobsScript = redis.NewScript(putRecordLua + makeJobsLua + setsLua + finalLeaseLua + runLua + `
local function index(ix, id, ver, cpart, state, m, base)
` + indexBody + `
end
releaseLease(KEYS[4], ARGV[21])
local v = putRecord(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[18], ARGV[19], 24)
if not v then return false end
if v == -1 then
  trackRun(ARGV[22], ARGV[23], ARGV[7], true)
  return {-1, 0}
end
trackRun(ARGV[22], ARGV[23], ARGV[7], false)
index(KEYS[3], ARGV[7], v, ARGV[8], ARGV[3], ARGV[9], ARGV[10])
local jobs = makeJobs(KEYS[2], ARGV[13], ARGV[14], ARGV[15], ARGV[16], ARGV[20])
for _, j in ipairs(jobs) do
  redis.call('SET', ARGV[11] .. j[1], j[2])
  redis.call('ZADD', ARGV[12], ARGV[17], j[1])
  if j[3] ~= '' then redis.call('SADD', j[3], j[1]) end
end
return {v, #jobs}
`)

// putPendingJobsScript writes the task record and its jobs in the task's
// pending hash (one slot: a cluster). It returns the version and every
// pending job of the task (earlier ones whose move failed included), as
// HGETALL pairs.
//
// KEYS[1] task hash, KEYS[2] push config hash, KEYS[3] pending hash.
// ARGV owner, context id, state, status ms, body, artifacts, job set base
// key, job id base, payload (base64), now (RFC 3339), reap flag, event
// log TTL ms, traceparent, then the held events (see putRecordLua).
var putPendingJobsScript = redis.NewScript(putRecordLua + makeJobsLua + `
local v = putRecord(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[11], ARGV[12], 14)
if not v then return false end
if v == -1 then return {-1, {}} end
for _, j in ipairs(makeJobs(KEYS[2], ARGV[7], ARGV[8], ARGV[9], ARGV[10], ARGV[13])) do
  redis.call('HSET', KEYS[3], j[1], j[2])
end
return {v, redis.call('HGETALL', KEYS[3])}
`)

// moveJobsScript puts pending jobs in the outbox (one slot: {p}). Every
// step is idempotent (SET NX, ZADD NX, SADD), so a move that failed
// halfway is completed by the next: a job in the outbox, claimed or not,
// is left as it is (one that was delivered and acknowledged since is sent
// again, with the same delivery id: at least once).
//
// KEYS[1] queue. ARGV job key prefix, due ms, then job id, job JSON pairs.
var moveJobsScript = redis.NewScript(`
local n = 0
for i = 3, #ARGV, 2 do
  local id, j = ARGV[i], ARGV[i + 1]
  redis.call('SET', ARGV[1] .. id, j, 'NX')
  n = n + redis.call('ZADD', KEYS[1], 'NX', ARGV[2], id)
  local cj = cjson.decode(j).cj
  if type(cj) == 'string' and cj ~= '' then redis.call('SADD', cj, id) end
end
return n
`)

func (s *Redis) pendingJobsKey(id string) string { return s.taskKey(id) + ":pj" }

// jobSetBase is configJobsKey without the config id.
func (s *Redis) jobSetBase(taskID string) string { return s.configJobsKey(taskID, "") }

// PutTaskWithJobs stores the task and queues one push job per config of
// the task, atomically with the write (see the top of this file).
func (s *Redis) PutTaskWithJobs(ctx context.Context, owner string, t *a2a.Task, payload []byte) (int, error) {
	return s.putTaskWithJobs(ctx, owner, t, payload, false)
}

// PutFinalIfRunning implements SharedEvents (a reaper's write, for a
// cancel whose turn did not stop elsewhere).
func (s *Redis) PutFinalIfRunning(ctx context.Context, owner string, t *a2a.Task, payload []byte) (int, error) {
	return s.putTaskWithJobs(ctx, owner, t, payload, true)
}

// putTaskWithJobs is PutTaskWithJobs; with reap it writes only over a
// task still SUBMITTED or WORKING and marks it reaped (ErrTaskReaped
// otherwise).
func (s *Redis) putTaskWithJobs(ctx context.Context, owner string, t *a2a.Task, payload []byte, reap bool) (int, error) {
	if err := s.live(); err != nil {
		return 0, err
	}
	e, err := encodeTask(t)
	if err != nil {
		return 0, err
	}
	now := nowUTC()
	pay := base64.StdEncoding.EncodeToString(payload)
	nowStr := now.Format(time.RFC3339Nano)
	idBase := newJobID()
	reapFlag, tp := "", traceParent(ctx)
	if reap {
		reapFlag = "1"
	}
	s.renewIfStale(ctx, t.Status.State)
	le := s.takeHeld(e.id)
	if !s.cluster {
		fl, ro := s.takeFinalLease(t), s.runOpFor(e.id, t.Status.State)
		keys := fl.keys([]string{s.taskKey(e.id), s.pushCfgKey(e.id), s.ownerIx(owner)})
		args := append([]any{owner, e.contextID, e.state, e.statusMS, e.body, e.arts,
			e.id, keyPart(e.contextID), member(e.statusMS, e.id), s.ownerBase(owner),
			s.jobPrefix(), s.queueKey(), s.jobSetBase(e.id), idBase, pay, nowStr, now.UnixMilli(), reapFlag, s.logTTL(t), tp, fl.tokenArg(),
			ro.key, ro.op}, le.args(e.body)...)
		res, err := putIndexedJobsScript.Run(ctx, s.c, keys, args...).Slice()
		fl.done(err)
		if errors.Is(err, redis.Nil) {
			return 0, ErrNotFound
		}
		if err != nil {
			s.putBack(e.id, le)
			return 0, s.opErr("writing task", err)
		}
		v, _ := res[0].(int64)
		s.runOpDone(e.id, ro, v == -1)
		if v == -1 {
			return 0, ErrTaskReaped
		}
		n, _ := res[1].(int64)
		return int(n), nil
	}
	// Cluster: the task stays in this instance's running set until its
	// jobs reached the outbox, so a reaper finds them if we die first.
	s.markRunning(ctx, e.id)
	args := append([]any{owner, e.contextID, e.state, e.statusMS, e.body, e.arts,
		s.jobSetBase(e.id), idBase, pay, nowStr, reapFlag, s.logTTL(t), tp}, le.args(e.body)...)
	res, err := putPendingJobsScript.Run(ctx, s.c, []string{s.taskKey(e.id), s.pushCfgKey(e.id), s.pendingJobsKey(e.id)}, args...).Slice()
	if errors.Is(err, redis.Nil) {
		return 0, ErrNotFound
	}
	if err != nil {
		s.putBack(e.id, le)
		return 0, s.opErr("writing task", err)
	}
	version, _ := res[0].(int64)
	if version == -1 {
		s.trackRunning(ctx, e.id, a2a.TaskStateFailed)
		return 0, ErrTaskReaped
	}
	pending := stringsOf(res[1])
	if err := s.indexTask(ctx, owner, e, version); err != nil {
		return 0, err
	}
	queued := countNew(pending, idBase)
	if err := s.movePending(ctx, e.id, pending); err != nil {
		// The jobs are stored (pending): the heartbeat retries the move.
		s.retryMoveLater(e.id)
		return queued, nil
	}
	s.trackRunning(ctx, e.id, t.Status.State)
	return queued, nil
}

// movePending moves a task's pending jobs (HGETALL pairs) to the outbox,
// then drops them from the pending hash.
func (s *Redis) movePending(ctx context.Context, taskID string, pairs []string) error {
	if len(pairs) < 2 {
		return nil
	}
	args := make([]any, 0, len(pairs)+2)
	args = append(args, s.jobPrefix(), nowUTC().UnixMilli())
	ids := make([]string, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		args = append(args, pairs[i], pairs[i+1])
		ids = append(ids, pairs[i])
	}
	if err := moveJobsScript.Run(ctx, s.c, []string{s.queueKey()}, args...).Err(); err != nil {
		return s.opErr("queueing push deliveries", err)
	}
	if err := s.c.HDel(ctx, s.pendingJobsKey(taskID), ids...).Err(); err != nil {
		return s.opErr("queueing push deliveries", err)
	}
	return nil
}

// flushPending moves whatever jobs task id has pending to the outbox (a
// cluster only; without slots nothing is ever pending).
func (s *Redis) flushPending(ctx context.Context, id string) error {
	if !s.cluster {
		return nil
	}
	m, err := s.c.HGetAll(ctx, s.pendingJobsKey(id)).Result()
	if err != nil {
		return s.opErr("reading pending push deliveries", err)
	}
	pairs := make([]string, 0, 2*len(m))
	for k, v := range m {
		pairs = append(pairs, k, v)
	}
	return s.movePending(ctx, id, pairs)
}

// stringsOf returns the strings of a script's array reply.
func stringsOf(v any) []string {
	vals, _ := v.([]any)
	out := make([]string, 0, len(vals))
	for _, x := range vals {
		if str, ok := x.(string); ok {
			out = append(out, str)
		}
	}
	return out
}

// countNew counts the jobs of pending pairs made by this write (their ids
// start with idBase).
func countNew(pairs []string, idBase string) int {
	n := 0
	for i := 0; i < len(pairs); i += 2 {
		if len(pairs[i]) > len(idBase) && pairs[i][:len(idBase)] == idBase {
			n++
		}
	}
	return n
}

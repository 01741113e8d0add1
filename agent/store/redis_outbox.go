package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// The outbox in Redis (PUSH-4, PUSH-5): every job is a JSON string
// {p}:job:<id>; the sorted set {p}:q holds every job scored by when it may
// next be claimed (its due time, or the end of its lease once claimed, so
// an expired lease makes it claimable again); {p}:cj:<task>:<config> lists
// a config's jobs for DeletePushConfig; dead letters are {p}:dj:<id> and
// the sorted set {p}:dead scored by death time.

// redisJob is a stored job: the job and the key of its config's job set.
type redisJob struct {
	PushJob
	CJ string `json:"cj"`
}

// claimScript leases up to ARGV[3] jobs claimable at ARGV[1] until ARGV[2].
var claimScript = redis.NewScript(`
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
local out = {}
for _, id in ipairs(ids) do
  local j = redis.call('GET', ARGV[4] .. id)
  if j then
    redis.call('ZADD', KEYS[1], ARGV[2], id)
    out[#out+1] = j
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return out
`)

// ackScript deletes jobs. KEYS[1] queue; ARGV job prefix, ids….
var ackScript = redis.NewScript(`
for i = 2, #ARGV do
  local k = ARGV[1] .. ARGV[i]
  local j = redis.call('GET', k)
  if j then
    redis.call('SREM', cjson.decode(j).cj, ARGV[i])
    redis.call('DEL', k)
  end
  redis.call('ZREM', KEYS[1], ARGV[i])
end
return #ARGV - 1
`)

// replaceJobScript rewrites a job that still exists and reschedules it.
// KEYS[1] job, KEYS[2] queue; ARGV JSON, score, id.
var replaceJobScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
return 1
`)

// deadScript moves a job to the dead letters.
// KEYS job, queue, dead key, dead set, config job set; ARGV dead JSON, dead ms, id.
var deadScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[3])
redis.call('SREM', KEYS[5], ARGV[3])
redis.call('SET', KEYS[3], ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[2], ARGV[3])
return 1
`)

// requeueScript moves a dead letter back unless the job exists.
// KEYS dead key, dead set, job, queue, config job set; ARGV job JSON, due ms, id.
var requeueScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[3])
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
redis.call('SET', KEYS[3], ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[2], ARGV[3])
redis.call('SADD', KEYS[5], ARGV[3])
return 1
`)

// dropJobsScript deletes the jobs of a config. KEYS config job set, queue; ARGV job prefix.
var dropJobsScript = redis.NewScript(`
local ids = redis.call('SMEMBERS', KEYS[1])
for _, id in ipairs(ids) do
  redis.call('DEL', ARGV[1] .. id)
  redis.call('ZREM', KEYS[2], id)
end
redis.call('DEL', KEYS[1])
return #ids
`)

func nowUTC() time.Time { return time.Now().UTC() }

func newJobID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ClaimPushJobs leases up to limit claimable jobs until now+lease, in one
// script: two claims never get the same job while its lease runs.
func (s *Redis) ClaimPushJobs(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]PushJob, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 1
	}
	vals, err := claimScript.Run(ctx, s.c, []string{s.queueKey()}, now.UnixMilli(), now.Add(lease).UnixMilli(), limit, s.jobPrefix()).StringSlice()
	if err != nil {
		return nil, s.opErr("claiming push deliveries", err)
	}
	out := make([]PushJob, 0, len(vals))
	for _, v := range vals {
		var j redisJob
		if err := json.Unmarshal([]byte(v), &j); err != nil {
			return nil, errors.New("claiming push deliveries: undecodable job")
		}
		out = append(out, j.PushJob)
	}
	return out, nil
}

// AckPushJobs deletes delivered jobs.
func (s *Redis) AckPushJobs(ctx context.Context, ids ...string) error {
	if err := s.live(); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	args := make([]any, 0, len(ids)+1)
	args = append(args, s.jobPrefix())
	for _, id := range ids {
		args = append(args, id)
	}
	if err := ackScript.Run(ctx, s.c, []string{s.queueKey()}, args...).Err(); err != nil {
		return s.opErr("acknowledging push delivery", err)
	}
	return nil
}

func (s *Redis) getJob(ctx context.Context, id string) (*redisJob, error) {
	v, err := s.c.Get(ctx, s.jobPrefix()+id).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var j redisJob
	if err := json.Unmarshal([]byte(v), &j); err != nil {
		return nil, errors.New("undecodable job")
	}
	return &j, nil
}

// RetryPushJob records a failed attempt and makes the job due at due.
func (s *Redis) RetryPushJob(ctx context.Context, id string, attempts int, due time.Time, lastErr string) error {
	if err := s.live(); err != nil {
		return err
	}
	j, err := s.getJob(ctx, id)
	if err != nil {
		return s.opErr("scheduling push retry", err)
	}
	if j == nil {
		return nil
	}
	j.Attempts, j.Due, j.LastError = attempts, due, lastErr
	b, _ := json.Marshal(j)
	if err := replaceJobScript.Run(ctx, s.c, []string{s.jobPrefix() + id, s.queueKey()}, string(b), due.UnixMilli(), id).Err(); err != nil {
		return s.opErr("scheduling push retry", err)
	}
	return nil
}

// DeadPushJob moves a job to the dead letters.
func (s *Redis) DeadPushJob(ctx context.Context, id string, attempts int, reason string) error {
	if err := s.live(); err != nil {
		return err
	}
	j, err := s.getJob(ctx, id)
	if err != nil {
		return s.opErr("dead-lettering push delivery", err)
	}
	if j == nil {
		return nil
	}
	now := nowUTC()
	j.Attempts = attempts
	d := redisDead{*j, reason, now}
	b, _ := json.Marshal(d)
	err = deadScript.Run(ctx, s.c, []string{s.jobPrefix() + id, s.queueKey(), s.deadPrefix() + id, s.deadKey(), j.CJ},
		string(b), now.UnixMilli(), id).Err()
	if err != nil {
		return s.opErr("dead-lettering push delivery", err)
	}
	return nil
}

// ReleasePushLeases does nothing on a shared store and returns 0: the
// leases may be held by live instances, and an expired lease makes its
// job claimable again anyway.
func (s *Redis) ReleasePushLeases(context.Context) (int, error) {
	return 0, s.live()
}

// PushQueueDepth counts the jobs in the outbox.
func (s *Redis) PushQueueDepth(ctx context.Context) (int, error) {
	if err := s.live(); err != nil {
		return 0, err
	}
	n, err := s.c.ZCard(ctx, s.queueKey()).Result()
	if err != nil {
		return 0, s.opErr("counting push deliveries", err)
	}
	return int(n), nil
}

type redisDead struct {
	redisJob
	Reason string    `json:"reason"`
	DeadAt time.Time `json:"deadAt"`
}

func (s *Redis) deadJobs(ctx context.Context, ids []string) ([]redisDead, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = s.deadPrefix() + id
	}
	vals, err := s.c.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, err
	}
	out := make([]redisDead, 0, len(vals))
	for _, v := range vals {
		str, ok := v.(string)
		if !ok {
			continue
		}
		var d redisDead
		if json.Unmarshal([]byte(str), &d) == nil {
			out = append(out, d)
		}
	}
	return out, nil
}

// ListDeadPushJobs returns up to limit dead letters, oldest first.
func (s *Redis) ListDeadPushJobs(ctx context.Context, limit int) ([]DeadPushJob, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 100
	}
	ids, err := s.c.ZRange(ctx, s.deadKey(), 0, int64(limit-1)).Result()
	if err != nil {
		return nil, s.opErr("reading dead push deliveries", err)
	}
	ds, err := s.deadJobs(ctx, ids)
	if err != nil {
		return nil, s.opErr("reading dead push deliveries", err)
	}
	out := make([]DeadPushJob, 0, len(ds))
	for _, d := range ds {
		j := d.PushJob
		j.Due, j.LastError = d.DeadAt, ""
		out = append(out, DeadPushJob{PushJob: j, Reason: d.Reason, DeadAt: d.DeadAt})
	}
	return out, nil
}

// RequeueDeadPushJobs moves the dead letter id (all when "") back to the
// outbox with zero attempts, keeping its id; it returns how many moved.
func (s *Redis) RequeueDeadPushJobs(ctx context.Context, id string) (int, error) {
	if err := s.live(); err != nil {
		return 0, err
	}
	ids := []string{id}
	if id == "" {
		var err error
		if ids, err = s.c.ZRange(ctx, s.deadKey(), 0, -1).Result(); err != nil {
			return 0, s.opErr("requeueing dead push deliveries", err)
		}
	}
	ds, err := s.deadJobs(ctx, ids)
	if err != nil {
		return 0, s.opErr("requeueing dead push deliveries", err)
	}
	now := nowUTC()
	moved := 0
	for _, d := range ds {
		j := d.redisJob
		j.Attempts, j.Due, j.LastError = 0, now, ""
		b, _ := json.Marshal(j)
		n, err := requeueScript.Run(ctx, s.c, []string{s.deadPrefix() + j.ID, s.deadKey(), s.jobPrefix() + j.ID, s.queueKey(), j.CJ},
			string(b), now.UnixMilli(), j.ID).Int()
		if err != nil {
			return moved, s.opErr("requeueing dead push deliveries", err)
		}
		moved += n
	}
	return moved, nil
}

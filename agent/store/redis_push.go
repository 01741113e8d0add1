package store

import (
	"context"
	"encoding/json"
	"errors"
	"sort"

	"github.com/redis/go-redis/v9"
)

// putConfigScript inserts or replaces a push config (one slot: the task's
// hash tag): another owner's config is refused (-2), a new id beyond the
// cap too (-1); a replaced config keeps its creation time.
//
// KEYS[1] the task's push config hash. ARGV config id, owner, JSON, cap.
var putConfigScript = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur then
  local c = cjson.decode(cur)
  if c.Owner ~= ARGV[2] then return -2 end
  local n = cjson.decode(ARGV[3])
  n.CreatedAt = c.CreatedAt
  redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(n))
  return 1
end
if tonumber(ARGV[4]) > 0 and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[4]) then return -1 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
`)

// deleteConfigScript deletes the owner's config; 1 when it existed.
var deleteConfigScript = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if not cur then return 0 end
if cjson.decode(cur).Owner ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
return 1
`)

// storedConfig is a push config as stored: the config and the key of the
// set listing its jobs.
type storedConfig struct {
	PushConfig
	CJ string `json:"cj"`
}

// PutPushConfig inserts or replaces a config; ErrNotFound when (TaskID,
// ID) exists with another owner.
func (s *Redis) PutPushConfig(ctx context.Context, c PushConfig) error {
	return s.PutPushConfigMax(ctx, c, 0)
}

// PutPushConfigMax is PutPushConfig refusing a new id beyond maxPerTask
// configs on the task (ErrPushConfigLimit); count and write are one script.
func (s *Redis) PutPushConfigMax(ctx context.Context, c PushConfig, maxPerTask int) error {
	if err := s.live(); err != nil {
		return err
	}
	if c.TaskID == "" || c.ID == "" {
		return errors.New("writing push config: empty id")
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = nowUTC()
	}
	// The stored config carries the key of its job set, so that a task
	// write's script can queue its jobs (redis_enqueue.go).
	b, err := json.Marshal(storedConfig{PushConfig: c, CJ: s.configJobsKey(c.TaskID, c.ID)})
	if err != nil {
		return err
	}
	n, err := putConfigScript.Run(ctx, s.c, []string{s.pushCfgKey(c.TaskID)}, c.ID, c.Owner, string(b), max(maxPerTask, 0)).Int()
	if err != nil {
		return s.opErr("writing push config", err)
	}
	switch n {
	case -1:
		return ErrPushConfigLimit
	case -2:
		return ErrNotFound
	}
	return nil
}

// GetPushConfig returns the owner's config, or ErrNotFound.
func (s *Redis) GetPushConfig(ctx context.Context, owner, taskID, id string) (*PushConfig, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	v, err := s.c.HGet(ctx, s.pushCfgKey(taskID), id).Result()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, s.opErr("reading push config", err)
	}
	var c PushConfig
	if err := json.Unmarshal([]byte(v), &c); err != nil || c.Owner != owner {
		return nil, ErrNotFound
	}
	return &c, nil
}

// ListPushConfigs returns up to limit of the owner's configs of a task in
// id order after the id after. A task holds few configs (PUSH-1 caps
// them), so the hash is read whole.
func (s *Redis) ListPushConfigs(ctx context.Context, owner, taskID, after string, limit int) ([]PushConfig, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 100
	}
	all, err := s.c.HGetAll(ctx, s.pushCfgKey(taskID)).Result()
	if err != nil {
		return nil, s.opErr("reading push configs", err)
	}
	var out []PushConfig
	for id, v := range all {
		if id <= after {
			continue
		}
		var c PushConfig
		if json.Unmarshal([]byte(v), &c) == nil && c.Owner == owner {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// DeletePushConfig removes the owner's config, then its pending
// deliveries (the outbox is another slot in a cluster).
func (s *Redis) DeletePushConfig(ctx context.Context, owner, taskID, id string) error {
	if err := s.live(); err != nil {
		return err
	}
	n, err := deleteConfigScript.Run(ctx, s.c, []string{s.pushCfgKey(taskID)}, id, owner).Int()
	if err != nil {
		return s.opErr("deleting push config", err)
	}
	if n == 0 {
		return nil
	}
	if err := dropJobsScript.Run(ctx, s.c, []string{s.configJobsKey(taskID, id), s.queueKey()}, s.jobPrefix()).Err(); err != nil {
		return s.opErr("dropping push deliveries", err)
	}
	return nil
}

func (s *Redis) queueKey() string   { return s.p + "{p}:q" }
func (s *Redis) jobPrefix() string  { return s.p + "{p}:job:" }
func (s *Redis) deadKey() string    { return s.p + "{p}:dead" }
func (s *Redis) deadPrefix() string { return s.p + "{p}:dj:" }
func (s *Redis) configJobsKey(taskID, id string) string {
	return s.p + "{p}:cj:" + keyPart(taskID) + ":" + keyPart(id)
}

package store

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// Retention over Redis (OPS-5): the same cut-offs as the SQLite store,
// applied by scans in small batches. Tasks are found through each owner's
// sorted set of every task (members are ordered by status time, so the
// old ones come first); contexts and owners by SCAN (on every master of a
// cluster). Every delete re-checks its condition in a script, so a record
// touched meanwhile stays. Only one instance runs a pass at a time (a
// lock key; the others skip theirs). The ids of the tasks removed go to
// the stream P{k}:pruned (one entry per batch, the newest 10,000
// entries), which every instance reads at each of its passes, so that
// each removes its own local files of those tasks (PruneOptions.OnTasks:
// the stored input files stay in the data_dir of the instance that ran
// the turn).

// pruneTaskScript removes a task record that is not running and whose
// status time is before ARGV[1], with its push configs, event log,
// pending jobs and cancel flag (one slot). With ARGV[2] "1" (dry run) it
// removes nothing. It returns false when the task stays, else the ids of
// its push configs.
//
// KEYS[1] task hash.
var pruneTaskScript = redis.NewScript(`
local s = redis.call('HGET', KEYS[1], 's')
if not s or s == '` + string(a2a.TaskStateSubmitted) + `' or s == '` + string(a2a.TaskStateWorking) + `' then return false end
if tonumber(redis.call('HGET', KEYS[1], 'ts') or '0') >= tonumber(ARGV[1]) then return false end
if ARGV[2] == '1' then return {} end
local cfgs = redis.call('HKEYS', KEYS[1] .. ':push')
redis.call('DEL', KEYS[1], KEYS[1] .. ':push', KEYS[1] .. ':ev', KEYS[1] .. ':pj', KEYS[1] .. ':cx')
return cfgs
`)

// unindexScript removes a task from its owner's sorted sets and index
// hash (one slot). KEYS[1] index hash; ARGV task id, sorted set base key.
var unindexScript = redis.NewScript(setsLua + `
local old = redis.call('HGET', KEYS[1], ARGV[1])
if not old then return 0 end
local _, c, s, m, cs = ixEntry(old, ARGV[1])
for _, k in ipairs(sets(ARGV[2], c, s, cs)) do redis.call('ZREM', k, m) end
redis.call('HDEL', KEYS[1], ARGV[1])
return 1
`)

// pruneContextScript removes a context record not updated since ARGV[1]
// and not leased by a turn (one slot); with ARGV[2] "1" it only answers.
// KEYS[1] context hash.
var pruneContextScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1] .. ':lease') == 1 then return 0 end
local u = redis.call('HGET', KEYS[1], 'u') or redis.call('HGET', KEYS[1], 'c')
if not u or tonumber(u) >= tonumber(ARGV[1]) then return 0 end
if ARGV[2] ~= '1' then redis.call('DEL', KEYS[1]) end
return 1
`)

// pruneDeadScript removes up to ARGV[2] dead letters dead before ARGV[1]
// (one slot: {p}); with ARGV[4] "1" it only counts them.
// KEYS[1] dead set; ARGV[3] dead letter key prefix.
var pruneDeadScript = redis.NewScript(`
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
if ARGV[4] == '1' then return #ids end
for _, id in ipairs(ids) do
  redis.call('DEL', ARGV[3] .. id)
  redis.call('ZREM', KEYS[1], id)
end
return #ids
`)

// pruneLockTTL bounds how long one instance's pass holds the others off
// (it is released at the end of the pass).
const pruneLockTTL = 10 * time.Minute

func (s *Redis) pruneLockKey() string    { return s.p + "{k}:prune" }
func (s *Redis) prunedStreamKey() string { return s.p + "{k}:pruned" }

// prunedStreamLen bounds the stream of pruned task ids (entries).
const prunedStreamLen = 10000

// announcePruned adds a batch of pruned task ids to the stream.
func (s *Redis) announcePruned(ctx context.Context, ids []string) error {
	return s.c.XAdd(ctx, &redis.XAddArgs{Stream: s.prunedStreamKey(), MaxLen: prunedStreamLen, Approx: true,
		Values: []any{"ids", strings.Join(ids, "\n")}}).Err()
}

// consumePruned calls onTasks with the task ids the stream got since this
// handle last read it (all it holds, the first time).
func (s *Redis) consumePruned(ctx context.Context, onTasks func([]string)) error {
	s.pruneMu.Lock()
	defer s.pruneMu.Unlock()
	from := s.prunedSeen
	if from == "" {
		from = "-"
	} else {
		from = "(" + from
	}
	for ctx.Err() == nil {
		msgs, err := s.c.XRangeN(ctx, s.prunedStreamKey(), from, "+", 100).Result()
		if err != nil {
			return s.opErr("reading pruned tasks", err)
		}
		for _, m := range msgs {
			if v, ok := m.Values["ids"].(string); ok && v != "" {
				onTasks(strings.Split(v, "\n"))
			}
			s.prunedSeen = m.ID
		}
		if len(msgs) < 100 {
			return nil
		}
		from = "(" + s.prunedSeen
	}
	return ctx.Err()
}

var _ Pruner = (*Redis)(nil)

// Prune implements Pruner. A pass another instance is running already
// makes this one a no-op.
func (s *Redis) Prune(ctx context.Context, opts PruneOptions) (PruneResult, error) {
	var res PruneResult
	if err := s.live(); err != nil {
		return res, err
	}
	batch := opts.Batch
	if batch <= 0 {
		batch = defaultPruneBatch
	}
	if !opts.DryRun {
		token := randomID()
		ok, err := s.c.SetNX(ctx, s.pruneLockKey(), token, pruneLockTTL).Result()
		if err != nil {
			return res, s.opErr("pruning", err)
		}
		if !ok {
			// Another instance prunes: remove the local files of the
			// tasks pruned so far.
			if opts.OnTasks != nil {
				return res, s.consumePruned(ctx, opts.OnTasks)
			}
			return res, nil
		}
		defer releaseScript.Run(context.WithoutCancel(ctx), s.c, []string{s.pruneLockKey()}, token)
	}
	dry := "0"
	if opts.DryRun {
		dry = "1"
	}
	if !opts.TasksBefore.IsZero() {
		err := s.scanKeys(ctx, s.p+"{o:*}:z", "zset", func(key string) error {
			n, err := s.pruneOwnerTasks(ctx, key, opts, batch, dry)
			res.Tasks += n
			return err
		})
		if err != nil {
			return res, fmt.Errorf("pruning tasks: %w", err)
		}
		n, err := s.pruneBlobs(ctx, opts.TasksBefore, batch, dry)
		res.SharedArtifacts = n
		if err != nil {
			return res, fmt.Errorf("pruning artifact payloads: %w", err)
		}
	}
	if !opts.ContextsBefore.IsZero() {
		cut := opts.ContextsBefore.UnixMilli()
		err := s.scanKeys(ctx, s.p+"{x:*}", "hash", func(key string) error {
			n, err := pruneContextScript.Run(ctx, s.c, []string{key}, cut, dry).Int()
			res.Contexts += n
			return err
		})
		if err != nil {
			return res, fmt.Errorf("pruning contexts: %w", s.opErr("scan", err))
		}
	}
	if !opts.DeadBefore.IsZero() {
		for ctx.Err() == nil {
			n, err := pruneDeadScript.Run(ctx, s.c, []string{s.deadKey()}, opts.DeadBefore.UnixMilli(), batch, s.deadPrefix(), dry).Int()
			if err != nil {
				return res, fmt.Errorf("pruning dead letters: %w", s.opErr("delete", err))
			}
			res.DeadLetters += n
			if n < batch || opts.DryRun {
				break
			}
		}
	}
	if opts.OnTasks != nil && !opts.DryRun {
		if err := s.consumePruned(ctx, opts.OnTasks); err != nil {
			return res, err
		}
	}
	return res, ctx.Err()
}

// pruneOwnerTasks prunes the old tasks of one owner's sorted set (key is
// P{o:<owner>}:z), oldest first, a batch at a time.
func (s *Redis) pruneOwnerTasks(ctx context.Context, key string, opts PruneOptions, batch int, dry string) (int, error) {
	owner, ok := ownerOfSet(s.p, key)
	if !ok {
		return 0, nil
	}
	cut := opts.TasksBefore.UnixMilli()
	upto := "(" + padMS(cut) + ":"
	from := "-"
	total := 0
	for ctx.Err() == nil {
		members, err := s.c.ZRangeArgs(ctx, redis.ZRangeArgs{Key: key, Start: from, Stop: upto, ByLex: true, Count: int64(batch)}).Result()
		if err != nil {
			return total, s.opErr("reading tasks", err)
		}
		var ids []string
		for _, m := range members {
			_, id, found := strings.Cut(m, ":")
			if !found {
				continue
			}
			cfgs, err := pruneTaskScript.Run(ctx, s.c, []string{s.taskKey(id)}, cut, dry).StringSlice()
			if errors.Is(err, redis.Nil) {
				continue // running, newer, or gone
			}
			if err != nil {
				return total, s.opErr("deleting a task", err)
			}
			ids = append(ids, id)
			if dry == "1" {
				continue
			}
			if err := unindexScript.Run(ctx, s.c, []string{s.ownerIx(owner)}, id, s.ownerBase(owner)).Err(); err != nil {
				return total, s.opErr("unindexing a task", err)
			}
			for _, c := range cfgs {
				if err := dropJobsScript.Run(ctx, s.c, []string{s.configJobsKey(id, c), s.queueKey()}, s.jobPrefix()).Err(); err != nil {
					return total, s.opErr("dropping push deliveries", err)
				}
			}
		}
		total += len(ids)
		switch {
		case len(ids) == 0:
		case dry == "1":
			if opts.OnTasks != nil {
				opts.OnTasks(ids)
			}
		default:
			// Every instance (this one at the end of the pass) removes
			// its local files of these tasks.
			if err := s.announcePruned(ctx, ids); err != nil {
				return total, s.opErr("recording pruned tasks", err)
			}
		}
		if len(members) < batch {
			break
		}
		from = "(" + members[len(members)-1]
	}
	return total, ctx.Err()
}

// ownerOfSet returns the owner whose sorted set of every task is key, or
// false for a key of another shape.
func ownerOfSet(prefix, key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, prefix+"{o:")
	if !ok {
		return "", false
	}
	part, ok := strings.CutSuffix(rest, "}:z")
	if !ok || strings.ContainsAny(part, "{}") {
		return "", false
	}
	if enc, ok := strings.CutPrefix(part, "~"); ok {
		b, err := base64.RawURLEncoding.DecodeString(enc)
		return string(b), err == nil
	}
	return part, true
}

// scanKeys calls fn with every key matching pattern of type typ, on every
// master of a cluster (one call of fn at a time).
func (s *Redis) scanKeys(ctx context.Context, pattern, typ string, fn func(string) error) error {
	var mu sync.Mutex
	one := func(ctx context.Context, c redis.UniversalClient) error {
		var cursor uint64
		for {
			keys, next, err := c.ScanType(ctx, cursor, pattern, 500, typ).Result()
			if err != nil {
				return err
			}
			for _, k := range keys {
				mu.Lock()
				err := fn(k)
				mu.Unlock()
				if err != nil {
					return err
				}
			}
			if next == 0 || ctx.Err() != nil {
				return ctx.Err()
			}
			cursor = next
		}
	}
	if cc, ok := s.c.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return one(ctx, c) })
	}
	return one(ctx, s.c)
}

package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash/crc32"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/redis/go-redis/v9"
)

// Liveness across instances (SCALE-2). Every Redis store handle is an
// instance with a random id: it holds a heartbeat lease — its score in the
// sorted set P{i}:live is when the lease ends, renewed every third of the
// lease — and records the tasks it wrote SUBMITTED or WORKING in the set
// P{i:<instance>}:run (removed once it writes them in another state).
// Every third of the lease each instance also looks for instances whose
// lease ended: the first to claim one (a script pushes its lease end one
// lease later, so a reaper that dies halfway is replaced) queues the push
// jobs its tasks left pending (a cluster), marks its tasks still SUBMITTED
// or WORKING as FAILED with the crash message, logging the FAILED status
// update and queueing its push notifications like a turn's final write,
// then drops the instance and its set. Never before the lease ended. A handle closed without marking its tasks
// (a graceful stop marks them itself) is, for the others, a dead instance.

// DefaultInstanceLease is the heartbeat lease of an instance (SCALE-2
// instance_lease).
const DefaultInstanceLease = 15 * time.Second

// DefaultInterruptedMessage is the status message of a task whose instance
// died when RedisOptions.InterruptedMessage is empty.
const DefaultInterruptedMessage = "The gateway stopped while this task was running; the task did not finish. Please retry."

// redisInstance is one handle's liveness state.
type redisInstance struct {
	id    string
	lease time.Duration
	msg   string
	stop  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once

	mu      sync.Mutex
	unmoved map[string]bool // tasks whose pending push jobs a move failed to queue (cluster)
	tracked sync.Map        // task id → struct{}: in this instance's running set
	renewed atomic.Int64    // unix ms of the last renewal Redis acknowledged (OPS-8)
}

func (s *Redis) liveKey() string               { return s.p + "{i}:live" }
func (s *Redis) runKey(instance string) string { return s.p + "{i:" + keyPart(instance) + "}:run" }

// runShards is how many running sets an instance spreads its tasks over
// in a Cluster (issue 32): each turn adds its task to one and removes it,
// so a single set would put two commands of every turn of the instance on
// one primary. The set of a task is P{i:<instance>:<shard>}:run, shard =
// CRC-32 of the task id mod runShards, in hex.
const runShards = 16

// runKeyFor is the running set that holds task id of instance: the one
// set (runKey) without cluster slots, its shard in a Cluster.
func (s *Redis) runKeyFor(instance, id string) string {
	if !s.cluster {
		return s.runKey(instance)
	}
	return s.p + "{i:" + keyPart(instance) + ":" + strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(id))%runShards), 16) + "}:run"
}

// runKeysOf lists every running set of instance: runKey (the only one
// without slots, and the one instances before issue 32 wrote) and, in a
// Cluster, the shards.
func (s *Redis) runKeysOf(instance string) []string {
	keys := []string{s.runKey(instance)}
	if s.cluster {
		for i := range runShards {
			keys = append(keys, s.p+"{i:"+keyPart(instance)+":"+strconv.FormatUint(uint64(i), 16)+"}:run")
		}
	}
	return keys
}

// runMembers returns the tasks in every running set of instance.
func (s *Redis) runMembers(ctx context.Context, instance string) ([]string, error) {
	keys := s.runKeysOf(instance)
	cmds := make([]*redis.StringSliceCmd, len(keys))
	if _, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.SMembers(ctx, k)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	var ids []string
	for _, c := range cmds {
		ids = append(ids, c.Val()...)
	}
	return ids, nil
}

// InstanceID returns the id under which this handle holds its lease.
func (s *Redis) InstanceID() string {
	if s.inst == nil {
		return ""
	}
	return s.inst.id
}

// startInstance registers the handle's lease and starts its heartbeat.
func (s *Redis) startInstance(ctx context.Context, lease time.Duration, msg string) error {
	if lease <= 0 {
		lease = DefaultInstanceLease
	}
	if msg == "" {
		msg = DefaultInterruptedMessage
	}
	s.inst = &redisInstance{id: randomID(), lease: lease, msg: msg, stop: make(chan struct{})}
	if err := s.heartbeat(ctx); err != nil {
		return err
	}
	s.inst.wg.Add(1)
	go s.beat()
	return nil
}

// heartbeat renews the lease.
func (s *Redis) heartbeat(ctx context.Context) error {
	start := time.Now()
	end := start.Add(s.inst.lease).UnixMilli()
	if err := s.c.ZAdd(ctx, s.liveKey(), redis.Z{Score: float64(end), Member: s.inst.id}).Err(); err != nil {
		return s.opErr("renewing the instance lease", err)
	}
	s.inst.renewed.Store(start.UnixMilli())
	return nil
}

// beat renews the lease and reaps dead instances every third of the lease,
// until the handle closes.
func (s *Redis) beat() {
	defer s.inst.wg.Done()
	t := time.NewTicker(s.inst.lease / 3)
	defer t.Stop()
	for {
		select {
		case <-s.inst.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.inst.lease/3)
		_ = s.heartbeat(ctx)
		s.retryMoves(ctx)
		_, _ = s.ReapInstances(ctx, time.Now())
		cancel()
	}
}

// renewIfStale renews the lease at once, before a write records a task
// as running here, when the last renewal Redis acknowledged is two beats
// old or older (the heartbeat failed, e.g. while Redis was away): a turn
// recorded under a lapsed lease could be failed by another instance's
// reaper before the next beat renews it. A stopped heartbeat (a graceful
// close) stays stopped. The normal case costs no command.
func (s *Redis) renewIfStale(ctx context.Context, st a2a.TaskState) {
	if s.inst == nil || (st != a2a.TaskStateSubmitted && st != a2a.TaskStateWorking) {
		return
	}
	if time.Since(time.UnixMilli(s.inst.renewed.Load())) < 2*s.inst.lease/3 {
		return
	}
	select {
	case <-s.inst.stop:
		return
	default:
	}
	_ = s.heartbeat(ctx) // a failure shows in the write that follows
}

// stopInstance stops the heartbeat (the lease then runs out).
func (s *Redis) stopInstance() {
	if s.inst == nil {
		return
	}
	s.inst.once.Do(func() { close(s.inst.stop) })
	s.inst.wg.Wait()
}

// trackRunning records (running) or forgets that this instance runs task
// id. Best effort: a task not recorded is not failed if the instance dies.
// The handle remembers what it recorded, so a task recorded already (a
// second WORKING write) or never (a quick turn stored once, at its end)
// costs no command.
func (s *Redis) trackRunning(ctx context.Context, id string, st a2a.TaskState) {
	if s.inst == nil {
		return
	}
	_, had := s.inst.tracked.Load(id)
	if st == a2a.TaskStateSubmitted || st == a2a.TaskStateWorking {
		if !had {
			s.markRunning(ctx, id)
		}
		return
	}
	if had && s.c.SRem(ctx, s.runKeyFor(s.inst.id, id), id).Err() == nil {
		s.inst.tracked.Delete(id)
	}
}

// markRunning records the task in this instance's running set whatever
// its state: until its pending push jobs are queued (a cluster), a reaper
// must find it if this instance dies.
func (s *Redis) markRunning(ctx context.Context, id string) {
	if s.inst != nil && s.c.SAdd(ctx, s.runKeyFor(s.inst.id, id), id).Err() == nil {
		s.inst.tracked.Store(id, struct{}{})
	}
}

// retryMoveLater remembers a task whose pending push jobs could not be
// queued; the heartbeat retries.
func (s *Redis) retryMoveLater(id string) {
	if s.inst == nil {
		return
	}
	s.inst.mu.Lock()
	if s.inst.unmoved == nil {
		s.inst.unmoved = map[string]bool{}
	}
	s.inst.unmoved[id] = true
	s.inst.mu.Unlock()
}

// retryMoves queues the pending push jobs of the tasks retryMoveLater
// remembered, then forgets the tasks no longer running.
func (s *Redis) retryMoves(ctx context.Context) {
	s.inst.mu.Lock()
	ids := make([]string, 0, len(s.inst.unmoved))
	for id := range s.inst.unmoved {
		ids = append(ids, id)
	}
	s.inst.mu.Unlock()
	for _, id := range ids {
		if s.flushPending(ctx, id) != nil {
			continue
		}
		s.inst.mu.Lock()
		delete(s.inst.unmoved, id)
		s.inst.mu.Unlock()
		if st, err := s.c.HGet(ctx, s.taskKey(id), "s").Result(); err == nil {
			s.trackRunning(ctx, id, a2a.TaskState(st))
		}
	}
}

// reapClaimScript claims the reaping of an instance whose lease ended
// before ARGV[2]: its lease is pushed to ARGV[3], so a reaper that dies
// halfway lets another one take over once that claim ends too.
// KEYS[1] live set; ARGV instance, now ms, claim end ms.
var reapClaimScript = redis.NewScript(`
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not s or tonumber(s) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
`)

// reapDoneScript drops a reaped instance's lease entry, unless it came
// back and renewed it since the claim; it returns 1 when it dropped it
// (the instance's running sets are then deleted after it, one by one: in
// a Cluster they are other slots).
// KEYS[1] live set; ARGV instance, claim end ms.
var reapDoneScript = redis.NewScript(`
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if s and tonumber(s) == tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
return 0
`)

// ReapInstances fails the running tasks of every instance whose lease
// ended before now and that no other instance reaped first (SCALE-2); it
// returns how many tasks it marked FAILED.
func (s *Redis) ReapInstances(ctx context.Context, now time.Time) (int, error) {
	if err := s.live(); err != nil {
		return 0, err
	}
	dead, err := s.c.ZRangeByScore(ctx, s.liveKey(), &redis.ZRangeBy{Min: "-inf", Max: "(" + itoa(now.UnixMilli())}).Result()
	if err != nil {
		return 0, s.opErr("reading instance leases", err)
	}
	n := 0
	for _, inst := range dead {
		if s.inst != nil && inst == s.inst.id {
			continue // our own lease, late: renewed by the next beat
		}
		claimEnd := now.Add(s.reapLease()).UnixMilli()
		won, err := reapClaimScript.Run(ctx, s.c, []string{s.liveKey()}, inst, now.UnixMilli(), claimEnd).Int()
		if err != nil {
			return n, s.opErr("reaping an instance", err)
		}
		if won == 0 {
			continue // another instance reaps it
		}
		ids, err := s.runMembers(ctx, inst)
		if err != nil {
			return n, s.opErr("reading an instance's tasks", err)
		}
		complete := true
		for _, id := range ids {
			if err := s.flushPending(ctx, id); err != nil {
				complete = false
			}
			ok, err := s.failOrphan(ctx, id, now)
			if err != nil && !errors.Is(err, redis.Nil) && !errors.Is(err, ErrNotFound) {
				complete = false
			}
			if ok {
				n++
			}
		}
		if !complete {
			continue // the claim runs out: reaped again, the done part is a no-op
		}
		s.finishReap(ctx, inst, claimEnd)
	}
	return n, nil
}

// finishReap drops a reaped instance's lease entry and then its running
// sets — unless the instance renewed its lease since the claim: it lives,
// and its sets record the turns it runs now (a reaper that deleted them
// would leave those turns unknown if it died later).
func (s *Redis) finishReap(ctx context.Context, inst string, claimEnd int64) {
	if dropped, err := reapDoneScript.Run(ctx, s.c, []string{s.liveKey()}, inst, claimEnd).Int(); err != nil || dropped == 0 {
		return
	}
	for _, k := range s.runKeysOf(inst) { // each its own slot in a Cluster
		_ = s.c.Del(ctx, k).Err()
	}
}

// interruptedMessage is the status message of a reaped task.
func (s *Redis) interruptedMessage() string {
	if s.inst != nil {
		return s.inst.msg
	}
	return DefaultInterruptedMessage
}

// reapLease is how long a reaper's claim on a dead instance lasts.
func (s *Redis) reapLease() time.Duration {
	if s.inst != nil {
		return s.inst.lease
	}
	return DefaultInstanceLease
}

// failOrphan marks task id FAILED with the crash message if it is still
// SUBMITTED or WORKING — checked by the write's script, so a turn that
// finishes meanwhile keeps its state — with its push jobs, and the status
// update in its event log (a follower on any instance ends with it). The
// task is marked reaped: a late write of its turn (an instance that lived
// on after its lease ended) leaves it FAILED.
func (s *Redis) failOrphan(ctx context.Context, id string, now time.Time) (bool, error) {
	owner, err := s.c.HGet(ctx, s.taskKey(id), "o").Result()
	if err != nil {
		return false, err
	}
	t, err := s.GetTask(ctx, owner, id)
	if err != nil {
		return false, err
	}
	if t.Status.State != a2a.TaskStateSubmitted && t.Status.State != a2a.TaskStateWorking {
		return false, nil
	}
	t.Status = a2a.TaskStatus{State: a2a.TaskStateFailed, Timestamp: a2a.Timestamp(now), Message: &a2a.Message{
		MessageID: randomID(), Role: a2a.RoleAgent, TaskID: id, ContextID: t.ContextID,
		Parts: []a2a.Part{a2a.TextPart(s.interruptedMessage())},
	}}
	ev := a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: t.ContextID, Status: t.Status}}
	payload, err := json.Marshal(ev)
	if err != nil {
		return false, err
	}
	if _, err := s.putTaskWithJobs(ctx, owner, t, payload, true); err != nil {
		if errors.Is(err, ErrTaskReaped) {
			return false, nil // it finished (or was reaped) meanwhile
		}
		return false, err
	}
	if last, err := s.LastEventSeq(ctx, id); err == nil {
		_ = s.AppendEvents(id, []Event{{Seq: last + 1, Response: ev}}, 0)
	}
	return true, nil
}

// randomID returns 24 random hex digits.
func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

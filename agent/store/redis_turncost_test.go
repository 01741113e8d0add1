package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// The Redis cost of a turn (issue 32, SCALE-1..3), measured on the store
// API: a blocking SendMessage in a new context does, in order, what the
// agent does for it — create the context and take its lease (one call),
// log the event that ends the turn, store the final state, which gives
// the lease up (Release then sends nothing).

// blockingTurn runs one turn-shaped sequence of task id in a new context
// of owner.
func blockingTurn(t testing.TB, s *Redis, owner, id string) {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	ctxID := "c-" + id
	l, _, ok, err := s.CreateAndLeaseContext(ctx, ContextRecord{Owner: owner, ID: ctxID, CreatedAt: now, UpdatedAt: now}, 30*time.Second)
	if err != nil || !ok {
		t.Fatalf("lease: %v, %v", ok, err)
	}
	// The agent publishes the turn's last event, then stores the final
	// state (finalize).
	task := mkTask(id, ctxID, a2a.TaskStateInputRequired, now)
	ev := a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: ctxID, Status: task.Status}}
	if err := s.AppendEvents(id, []Event{{Seq: 1, Response: ev}}, 0); err != nil {
		t.Fatal(err)
	}
	s.ReleaseWithFinalWrite(l, id) // as the agent's endTurn does
	if _, err := s.PutTaskWithJobs(ctx, owner, task, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// nodeCalls sums the calls of INFO commandstats on one node, without the
// test's own (info, config, cluster, ping…).
func nodeCalls(t testing.TB, c *redis.Client) int {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "cmdstat_"), ":")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		switch strings.SplitN(name, "|", 2)[0] {
		case "info", "config", "cluster", "ping", "hello", "client", "command", "readonly", "script":
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(f, "calls="); ok {
				k, _ := strconv.Atoi(v)
				n += k
			}
		}
	}
	return n
}

// topUsec sums the commandstats time of the commands a client sends
// (scripts, with what they run; plain commands a script ran are in its
// time already: only those never run by the store's scripts count).
func topUsec(t testing.TB, c *redis.Client) float64 {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "cmdstat_"), ":")
		if !ok || (name != "evalsha" && name != "eval" && name != "set") {
			continue // the lease's SET NX is the one plain command of a turn
		}
		for _, f := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(f, "usec="); ok {
				u, _ := strconv.ParseFloat(v, 64)
				sum += u
			}
		}
	}
	return sum
}

// TestRedisTurnCommandBudget (issue 32): a blocking turn in a new context
// costs Redis at most 16 commands (scripts count with the commands they
// run) in at most 2 round trips on a single node.
func TestRedisTurnCommandBudget(t *testing.T) {
	s := newTestRedis(t)
	c := redis.NewClient(&redis.Options{Addr: redisAddr(t)})
	defer c.Close()
	blockingTurn(t, s, "alice", "warm") // scripts loaded
	const turns = 50
	ctx := context.Background()
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	trips := &tripCounter{}
	s.c.AddHook(trips)
	for i := range turns {
		blockingTurn(t, s, "alice", fmt.Sprint("budget-", i))
	}
	t.Logf("%.1f round trips per blocking turn", float64(trips.n.Load())/turns)
	if per := float64(trips.n.Load()) / turns; per > 2 {
		t.Errorf("a blocking turn costs %.1f round trips; want at most 2 (5 before issue 32)", per)
	}
	info, err := c.Info(ctx, "stats").Result()
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_commands_processed:"); ok {
			total, _ = strconv.Atoi(v)
		}
	}
	per := float64(total-2) / turns // CONFIG RESETSTAT and INFO
	t.Logf("%.1f Redis commands per blocking turn (scripts with what they run), %.0f µs of Redis command time (commandstats, top level)", per, topUsec(t, c)/turns)
	if per > 16 {
		t.Errorf("a blocking turn costs %.1f Redis commands; want at most 16 (25 before issue 32)", per)
	}
}

// TestRedisClusterTurnsSpread (issue 32, SCALE-3): on a real 3-primary
// Redis Cluster the turns of many tasks and owners spread over the
// primaries: each serves a share of the commands within ±20 % of a third
// (every key of a task is in its task's slot, an owner's indexes in the
// owner's slot, no command spans slots).
func TestRedisClusterTurnsSpread(t *testing.T) {
	s := newTestCluster(t)
	ctx := context.Background()
	nodes := make([]*redis.Client, len(testCluster.addrs))
	for i, a := range testCluster.addrs {
		nodes[i] = redis.NewClient(&redis.Options{Addr: a})
		defer nodes[i].Close()
	}
	for i := range 3 {
		blockingTurn(t, s, fmt.Sprint("warm-owner-", i), fmt.Sprint("warm-", i)) // scripts loaded on every node
	}
	for _, n := range nodes {
		if err := n.ConfigResetStat(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	const turns = 600
	for i := range turns {
		blockingTurn(t, s, fmt.Sprint("owner-", i%200), fmt.Sprint("spread-", i))
	}
	calls := make([]int, len(nodes))
	sum := 0
	for i, n := range nodes {
		calls[i] = nodeCalls(t, n)
		sum += calls[i]
	}
	t.Logf("%d turns: commands per primary %v (%.1f per turn)", turns, calls, float64(sum)/turns)
	if got, err := s.Events(ctx, "spread-0", 0); err != nil || len(got) != 1 {
		t.Fatalf("the event of a turn: %d, %v", len(got), err)
	}
	for i, c := range calls {
		share := float64(c) / float64(sum)
		if share < 0.8/3 || share > 1.2/3 {
			t.Errorf("primary %d served %.1f %% of the commands; want within ±20 %% of a third", i, 100*share)
		}
	}
}

// tripCounter is a go-redis hook counting round trips: a command or a
// pipeline is one.
type tripCounter struct{ n atomic.Int64 }

func (h *tripCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *tripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}

func (h *tripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmds)
	}
}

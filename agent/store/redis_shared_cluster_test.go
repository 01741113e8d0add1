package store

import (
	"context"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// TestRedisSharedOnCluster (SCALE-1…3): following a task's events, the
// cancel channel and reaping a dead instance work on a real three-node
// Redis Cluster (every command stays within one slot).
func TestRedisSharedOnCluster(t *testing.T) {
	a := newTestCluster(t)
	var urls []string
	for _, ad := range testCluster.addrs {
		urls = append(urls, "redis://"+ad)
	}
	b, err := OpenRedis(context.Background(), RedisOptions{URLs: urls, KeyPrefix: a.p, InstanceLease: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	sub, err := b.LiveEvents(ctx, "ct1", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if err := a.AppendEvents("ct1", seqEvents(1, 3), 0); err != nil {
		t.Fatal(err)
	}
	for want := uint64(1); want <= 3; want++ {
		if ev, ok := sub.Next(ctx); !ok || ev.Seq != want {
			t.Fatalf("followed %d, %v; want %d", ev.Seq, ok, want)
		}
	}

	reqs, err := b.CancelRequests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.PublishCancel(ctx, "ct1"); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-reqs:
		if id != "ct1" {
			t.Fatalf("cancel for %q", id)
		}
	case <-ctx.Done():
		t.Fatal("no cancel request on the cluster")
	}

	if err := a.PutTask(ctx, "alice", mkTask("ct1", "c", a2a.TaskStateWorking, time.Now())); err != nil {
		t.Fatal(err)
	}
	a.stopInstance()
	if n, err := b.ReapInstances(ctx, time.Now().Add(DefaultInstanceLease+time.Second)); err != nil || n != 1 {
		t.Fatalf("reaped %d, %v on the cluster; want 1", n, err)
	}
	if st := mustGet(t, b, "alice", "ct1").Status.State; st != a2a.TaskStateFailed {
		t.Fatalf("reaped task is %s", st)
	}
}

package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// The store conformance suite: the tests that take a FullStore run
// against every implementation (SCALE-1): the embedded SQLite store and
// the Redis store on a real redis-server.

// FullStore is the part every store implementation has: tasks, contexts,
// no-wait writes, push configs and the outbox, and Close.
type FullStore interface {
	Store
	NoWaitWriter
	PushStore
}

// testRedis is one redis-server for the whole package run, started on
// first use; every Redis store of a test gets its own key prefix.
var testRedis struct {
	once sync.Once
	addr string
	err  error
	cmd  *exec.Cmd
	dir  string
	seq  atomic.Int64
}

func TestMain(m *testing.M) {
	code := m.Run()
	stopCluster()
	stopSentinel()
	if testRedis.cmd != nil {
		_ = syscall.Kill(-testRedis.cmd.Process.Pid, syscall.SIGKILL)
		_ = testRedis.cmd.Wait()
		_ = os.RemoveAll(testRedis.dir)
	}
	os.Exit(code)
}

// redisAddr starts (once) a throwaway redis-server on a free loopback
// port and returns its address. The test fails without redis-server.
func redisAddr(t testing.TB) string {
	t.Helper()
	testRedis.once.Do(func() {
		bin, err := exec.LookPath("redis-server")
		if err != nil {
			testRedis.err = fmt.Errorf("redis-server is required: %w", err)
			return
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			testRedis.err = err
			return
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		testRedis.dir, _ = os.MkdirTemp("", "a2a-store-redis")
		cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", testRedis.dir)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			testRedis.err = err
			return
		}
		testRedis.cmd = cmd
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		c := redis.NewClient(&redis.Options{Addr: addr})
		defer c.Close()
		for range 200 {
			if c.Ping(context.Background()).Err() == nil {
				testRedis.addr = addr
				return
			}
			time.Sleep(25 * time.Millisecond)
		}
		testRedis.err = fmt.Errorf("redis-server on %s did not answer", addr)
	})
	if testRedis.err != nil {
		t.Fatal(testRedis.err)
	}
	return testRedis.addr
}

// newTestRedis opens a Redis store with a fresh key prefix.
func newTestRedis(t testing.TB) *Redis {
	t.Helper()
	addr := redisAddr(t)
	s, err := OpenRedis(context.Background(), RedisOptions{URLs: []string{"redis://" + addr + "/0"}, KeyPrefix: fmt.Sprintf("t%d:", testRedis.seq.Add(1))})
	if err != nil {
		t.Fatalf("OpenRedis: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// eachStore runs fn against a fresh store of every implementation.
func eachStore(t *testing.T, fn func(t *testing.T, s FullStore)) {
	t.Run("sqlite", func(t *testing.T) {
		fn(t, openTest(t, filepath.Join(t.TempDir(), "data", "a2a.db"), SQLiteOptions{}))
	})
	t.Run("redis", func(t *testing.T) { fn(t, newTestRedis(t)) })
	// The Sentinel URL form (redis+sentinel://…), a failover client.
	t.Run("redis-sentinel", func(t *testing.T) { fn(t, newTestSentinel(t)) })
	// The cluster code path (record and index in two scripts), on the
	// same standalone server.
	t.Run("redis-cluster-path", func(t *testing.T) {
		s := newTestRedis(t)
		s.cluster = true
		fn(t, s)
	})
	// A real three-node Redis Cluster (SCALE-3): every script and MULTI
	// must stay in one slot.
	t.Run("redis-cluster", func(t *testing.T) { fn(t, newTestCluster(t)) })
}

// testCluster is a three-master Redis Cluster for the package run.
var testCluster struct {
	once  sync.Once
	addrs []string
	err   error
	cmds  []*exec.Cmd
	dir   string
}

func stopCluster() {
	for _, c := range testCluster.cmds {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		_ = c.Wait()
	}
	if testCluster.dir != "" {
		_ = os.RemoveAll(testCluster.dir)
	}
}

// newTestCluster opens a Redis store on the cluster with a fresh prefix.
func newTestCluster(t testing.TB) *Redis {
	t.Helper()
	testCluster.once.Do(func() { testCluster.addrs, testCluster.err = startCluster() })
	if testCluster.err != nil {
		t.Fatal(testCluster.err)
	}
	var urls []string
	for _, a := range testCluster.addrs {
		urls = append(urls, "redis://"+a)
	}
	s, err := OpenRedis(context.Background(), RedisOptions{URLs: urls, KeyPrefix: fmt.Sprintf("k%d:", testRedis.seq.Add(1))})
	if err != nil {
		t.Fatalf("OpenRedis (cluster): %v", err)
	}
	if !s.cluster {
		t.Fatal("several URLs did not make a cluster client")
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func startCluster() ([]string, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server is required: %w", err)
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, fmt.Errorf("redis-cli is required for the cluster tests: %w", err)
	}
	testCluster.dir, _ = os.MkdirTemp("", "a2a-store-cluster")
	var addrs []string
	for i := range 3 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		dir := filepath.Join(testCluster.dir, fmt.Sprint(i))
		_ = os.MkdirAll(dir, 0o700)
		cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--dir", dir, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		testCluster.cmds = append(testCluster.cmds, cmd)
		addrs = append(addrs, fmt.Sprintf("127.0.0.1:%d", port))
	}
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a})
		ok := false
		for range 200 {
			if c.Ping(context.Background()).Err() == nil {
				ok = true
				break
			}
			time.Sleep(25 * time.Millisecond)
		}
		_ = c.Close()
		if !ok {
			return nil, fmt.Errorf("cluster node %s did not answer", a)
		}
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("redis-cli --cluster create: %v\n%s", err, out)
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	defer c.Close()
	for range 400 {
		info, err := c.ClusterInfo(context.Background()).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			// Every node must agree before the first writes.
			ready := true
			for _, a := range addrs {
				n := redis.NewClient(&redis.Options{Addr: a})
				ni, err := n.ClusterInfo(context.Background()).Result()
				_ = n.Close()
				if err != nil || !strings.Contains(ni, "cluster_state:ok") {
					ready = false
				}
			}
			if ready {
				return addrs, nil
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	return nil, fmt.Errorf("redis cluster did not become ready")
}

// TestCountsFollowMoves: after tasks move between states and contexts,
// every filter's Total and page walk match a brute-force model (RPC-9).
func TestCountsFollowMoves(t *testing.T) { eachStore(t, testCountsFollowMoves) }

func testCountsFollowMoves(t *testing.T, s FullStore) {
	all := fillRandom(t, s, 300, 3)
	r := rand.New(rand.NewPCG(9, 9))
	n := 0
	for _, m := range all {
		if n++; n > 100 {
			break
		}
		m.state = testStates[r.IntN(len(testStates))]
		m.ctx = []string{"c1", "c2", "c9", ""}[r.IntN(4)]
		m.ms += int64(r.IntN(50))
		task := mkTask(m.id, m.ctx, m.state, time.UnixMilli(m.ms))
		task.Artifacts = []a2a.Artifact{{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart(m.id)}}}
		mustPut(t, s, m.owner, task)
	}
	for _, owner := range []string{"", "alice", "bob"} {
		for _, c := range []string{"", "c1", "c2", "c3", "c9"} {
			for _, st := range append([]a2a.TaskState{""}, testStates...) {
				q := ListQuery{Owner: owner, ContextID: c, State: st, Limit: 40}
				want := expect(all, q)
				if got := listAll(t, s, q, len(want)); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%+v:\n got %v\nwant %v", q, got, want)
				}
			}
		}
	}
}

// TestOwnerKeysEscaped: owners and ids holding key separators and braces
// are kept apart (Redis keys are built from them).
func TestOwnerKeysEscaped(t *testing.T) { eachStore(t, testOwnerKeysEscaped) }

func testOwnerKeysEscaped(t *testing.T, s FullStore) {
	owners := []string{"a}:z", "a", "a:c:x", "{o:a}", "ü ser"}
	for i, o := range owners {
		mustPut(t, s, o, mkTask(fmt.Sprintf("id{%d}:x", i), "c:"+o, a2a.TaskStateWorking, t0))
	}
	for i, o := range owners {
		res := mustList(t, s, ListQuery{Owner: o, Limit: 10})
		if res.Total != 1 || len(res.Tasks) != 1 || res.Tasks[0].ID != fmt.Sprintf("id{%d}:x", i) {
			t.Fatalf("owner %q: %+v", o, res)
		}
		res = mustList(t, s, ListQuery{Owner: o, ContextID: "c:" + o, State: a2a.TaskStateWorking, Limit: 10})
		if res.Total != 1 {
			t.Fatalf("owner %q filtered: %+v", o, res)
		}
	}
}

// TestOutboxConformance covers PUSH-4/PUSH-5 on every store: jobs queued
// with the state change, leased claims, retries, dead letters, requeue,
// ack, and deleting a config drops its jobs.
func TestOutboxConformance(t *testing.T) { eachStore(t, testOutbox) }

func testOutbox(t *testing.T, s FullStore) {
	ctx := context.Background()
	task := &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	if err := s.PutTask(ctx, "alice", task); err != nil {
		t.Fatal(err)
	}
	if n, err := s.PutTaskWithJobs(ctx, "alice", task, []byte(`{}`)); n != 0 || err != nil {
		t.Fatalf("jobs without configs: %d %v", n, err)
	}
	for _, id := range []string{"a", "b"} {
		if err := s.PutPushConfig(ctx, PushConfig{Owner: "alice", TaskID: "t1", ID: id, URL: "https://example.com/" + id, Token: "sealed"}); err != nil {
			t.Fatal(err)
		}
	}
	if c, err := s.GetPushConfig(ctx, "alice", "t1", "a"); err != nil || c.URL != "https://example.com/a" || c.Token != "sealed" || c.CreatedAt.IsZero() {
		t.Fatalf("GetPushConfig: %+v %v", c, err)
	}
	if _, err := s.GetPushConfig(ctx, "bob", "t1", "a"); err != ErrNotFound {
		t.Fatalf("foreign GetPushConfig: %v", err)
	}
	if err := s.PutPushConfig(ctx, PushConfig{Owner: "bob", TaskID: "t1", ID: "a", URL: "https://evil.example/"}); err != ErrNotFound {
		t.Fatalf("foreign upsert: %v", err)
	}
	if cs, _ := s.ListPushConfigs(ctx, "alice", "t1", "a", 10); len(cs) != 1 || cs[0].ID != "b" {
		t.Fatalf("ListPushConfigs after a: %+v", cs)
	}
	if _, err := s.PutTaskWithJobs(ctx, "bob", task, []byte(`{}`)); err != ErrNotFound {
		t.Fatalf("foreign PutTaskWithJobs: %v", err)
	}
	if n, _ := s.PushQueueDepth(ctx); n != 0 {
		t.Fatalf("phantom jobs: %d", n)
	}
	task.Status.State = a2a.TaskStateCompleted
	n, err := s.PutTaskWithJobs(ctx, "alice", task, []byte(`{"statusUpdate":{}}`))
	if err != nil || n != 2 {
		t.Fatalf("PutTaskWithJobs: %d %v", n, err)
	}
	if got := mustGet(t, s, "alice", "t1"); got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("task not written with its jobs: %v", got.Status.State)
	}
	now := time.Now()
	js, err := s.ClaimPushJobs(ctx, now, time.Minute, 10)
	if err != nil || len(js) != 2 || js[0].URL == "" || string(js[0].Payload) != `{"statusUpdate":{}}` || js[0].ID == js[1].ID || js[0].Token != "sealed" {
		t.Fatalf("claim: %+v %v", js, err)
	}
	if again, _ := s.ClaimPushJobs(ctx, now, time.Minute, 10); len(again) != 0 {
		t.Fatalf("claimed leased jobs: %d", len(again))
	}
	if again, _ := s.ClaimPushJobs(ctx, now.Add(2*time.Minute), time.Minute, 10); len(again) != 2 {
		t.Fatalf("expired leases not reclaimed: %d", len(again))
	}
	if err := s.RetryPushJob(ctx, js[0].ID, 1, now.Add(time.Hour), "receiver answered 503"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeadPushJob(ctx, js[1].ID, 1, "receiver answered 400"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ClaimPushJobs(ctx, now.Add(3*time.Minute), time.Minute, 10); len(got) != 0 {
		t.Fatalf("retry claimed before due: %d", len(got))
	}
	got, _ := s.ClaimPushJobs(ctx, now.Add(2*time.Hour), time.Minute, 10)
	if len(got) != 1 || got[0].Attempts != 1 || got[0].LastError != "receiver answered 503" {
		t.Fatalf("due retry: %+v", got)
	}
	dead, err := s.ListDeadPushJobs(ctx, 10)
	if err != nil || len(dead) != 1 || dead[0].ID != js[1].ID || dead[0].Reason != "receiver answered 400" || dead[0].Token != "sealed" || dead[0].DeadAt.IsZero() {
		t.Fatalf("dead: %+v %v", dead, err)
	}
	if n, _ := s.PushQueueDepth(ctx); n != 1 {
		t.Fatalf("depth with one dead: %d", n)
	}
	if n, err := s.RequeueDeadPushJobs(ctx, js[1].ID); n != 1 || err != nil {
		t.Fatalf("requeue: %d %v", n, err)
	}
	if d, _ := s.ListDeadPushJobs(ctx, 10); len(d) != 0 {
		t.Fatalf("dead after requeue: %d", len(d))
	}
	got, _ = s.ClaimPushJobs(ctx, now.Add(3*time.Hour), time.Minute, 10)
	if len(got) != 2 {
		t.Fatalf("after requeue: %d claimable, want 2", len(got))
	}
	for _, j := range got {
		if j.ID == js[1].ID && j.Attempts != 0 {
			t.Fatalf("requeued job kept its attempts: %+v", j)
		}
	}
	if err := s.AckPushJobs(ctx, got[0].ID, got[1].ID); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.PushQueueDepth(ctx); n != 0 {
		t.Fatalf("depth after ack: %d", n)
	}
	// Deleting a config drops its pending jobs; a missing one is fine.
	task.Status.State = a2a.TaskStateInputRequired
	if n, _ := s.PutTaskWithJobs(ctx, "alice", task, []byte(`{}`)); n != 2 {
		t.Fatalf("jobs: %d", n)
	}
	if err := s.DeletePushConfig(ctx, "bob", "t1", "a"); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.PushQueueDepth(ctx); n != 2 {
		t.Fatalf("a foreign delete dropped jobs: %d", n)
	}
	if err := s.DeletePushConfig(ctx, "alice", "t1", "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeletePushConfig(ctx, "alice", "t1", "a"); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.PushQueueDepth(ctx); n != 1 {
		t.Fatalf("depth after delete: %d", n)
	}
	if _, err := s.GetPushConfig(ctx, "alice", "t1", "a"); err != ErrNotFound {
		t.Fatalf("deleted config: %v", err)
	}
}

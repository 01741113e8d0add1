package store

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// TestRedisIdleContextMemory: an idle context record (workspace binding,
// times, no backend state) costs at most 1 KiB in Redis (MEMORY USAGE).
func TestRedisIdleContextMemory(t *testing.T) {
	s := newTestRedis(t)
	ctx := context.Background()
	var worst int64
	for i := range 50 {
		rec := ContextRecord{Owner: "user@example.com", ID: fmt.Sprintf("%08x-1b4e-4c8a-9d6f-0123456789ab", i), Cwd: "/srv/workspaces/team-a/project-" + fmt.Sprint(i),
			CreatedAt: t0, UpdatedAt: t0.Add(time.Minute)}
		if err := s.PutContext(ctx, rec); err != nil {
			t.Fatal(err)
		}
		n, err := s.c.MemoryUsage(ctx, s.ctxKey(rec.Owner, rec.ID)).Result()
		if err != nil {
			t.Fatal(err)
		}
		worst = max(worst, n)
	}
	t.Logf("idle context: %d bytes (MEMORY USAGE, worst of 50)", worst)
	if worst > 1024 || worst == 0 {
		t.Fatalf("idle context uses %d bytes in Redis, want ≤ 1024", worst)
	}
}

// TestRedisURLForms: the URL forms of `store redis` build the right kind
// of client (SCALE-3); bad ones are refused without echoing the URL.
func TestRedisURLForms(t *testing.T) {
	for _, tc := range []struct {
		urls []string
		want string
	}{
		{[]string{"redis://127.0.0.1:6379/0"}, "*redis.Client"},
		{[]string{"rediss://u:p@cache.example:6380/2"}, "*redis.Client"},
		{[]string{"unix:///run/redis.sock"}, "*redis.Client"},
		{[]string{"redis+sentinel://s1:26379,s2/mymaster/1"}, "*redis.Client"}, // a failover client is a *redis.Client
		{[]string{"redis://s1:26379?master_name=mymaster"}, "*redis.Client"},
		{[]string{"redis://n1:7000?addr=n2:7000"}, "*redis.ClusterClient"},
		{[]string{"redis://n1:7000", "redis://n2:7000", "redis://n3:7000"}, "*redis.ClusterClient"},
	} {
		c, err := newRedisClient(tc.urls)
		if err != nil {
			t.Fatalf("%v: %v", tc.urls, err)
		}
		if got := fmt.Sprintf("%T", c); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.urls, got, tc.want)
		}
		_ = c.Close()
	}
	c, _ := newRedisClient([]string{"redis+sentinel://u:pw@s1:26379,s2:26380/mymaster/3?sentinel_password=spw"})
	opt := c.(*redis.Client).Options()
	_ = c.Close()
	if opt.DB != 3 || opt.Password != "pw" || opt.Username != "u" {
		t.Errorf("sentinel master options: db %d user %q", opt.DB, opt.Username)
	}
	for _, bad := range [][]string{nil, {"http://secret@x"}, {"redis+sentinel://s1:26379"}, {"redis+sentinel://s1/m/x"}, {"redis://a:1", "unix:///secret.sock"}} {
		_, err := newRedisClient(bad)
		if err == nil {
			t.Errorf("%v accepted", bad)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("%v: error echoes the URL: %v", bad, err)
		}
	}
	// An unreachable server at start-up: the error names the address an
	// operator must fix (OPS-9), never its user or password.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := OpenRedis(ctx, RedisOptions{URLs: []string{"redis://user:hunter2@127.0.0.1:1/0"}})
	if err == nil || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "user") || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("unreachable: %v", err)
	}
}

// TestRedisPageTokenKey: instances on one Redis share one page-token key,
// created once.
func TestRedisPageTokenKey(t *testing.T) {
	a := newTestRedis(t)
	b, err := OpenRedis(context.Background(), RedisOptions{URLs: []string{"redis://" + redisAddr(t)}, KeyPrefix: a.p})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ka, err := a.PageTokenKey(context.Background())
	if err != nil || len(ka) != 32 {
		t.Fatalf("key: %x %v", ka, err)
	}
	kb, err := b.PageTokenKey(context.Background())
	if err != nil || !bytes.Equal(ka, kb) {
		t.Fatalf("second instance's key differs: %x %x %v", ka, kb, err)
	}
	other := newTestRedis(t) // another prefix: another deployment
	if ko, _ := other.PageTokenKey(context.Background()); bytes.Equal(ko, ka) {
		t.Fatal("another key prefix shares the key")
	}
}

// TestRedisContextLease (SCALE-3): one holder at a time across stores;
// release frees it; an expired lease is taken over and the old holder's
// renew and release do not touch the new holder's.
func TestRedisContextLease(t *testing.T) {
	a := newTestRedis(t)
	b, err := OpenRedis(context.Background(), RedisOptions{URLs: []string{"redis://" + redisAddr(t)}, KeyPrefix: a.p})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	la, ok, err := a.TryLeaseContext(ctx, "o", "c", time.Minute)
	if err != nil || !ok {
		t.Fatalf("first lease: %v %v", ok, err)
	}
	if _, ok, _ := b.TryLeaseContext(ctx, "o", "c", time.Minute); ok {
		t.Fatal("second instance leased a busy context")
	}
	if _, ok, _ := b.TryLeaseContext(ctx, "other-owner", "c", time.Minute); !ok {
		t.Fatal("another owner's context of the same id is busy")
	}
	if held, err := la.Renew(ctx, time.Minute); !held || err != nil {
		t.Fatalf("renew: %v %v", held, err)
	}
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	lb, ok, _ := b.TryLeaseContext(ctx, "o", "c", 50*time.Millisecond)
	if !ok {
		t.Fatal("released lease not free")
	}
	time.Sleep(120 * time.Millisecond) // sleep: b's lease expires (lease expiry is tested)
	la2, ok, _ := a.TryLeaseContext(ctx, "o", "c", time.Minute)
	if !ok {
		t.Fatal("expired lease not taken over")
	}
	if held, _ := lb.Renew(ctx, time.Minute); held {
		t.Fatal("the expired holder renewed the new holder's lease")
	}
	_ = lb.Release(ctx)
	if _, ok, _ := b.TryLeaseContext(ctx, "o", "c", time.Minute); ok {
		t.Fatal("the expired holder's release freed the new holder's lease")
	}
	_ = la2.Release(ctx)
}

// TestRedisNoCrashRecovery (RPC-12 with a shared store): FailInterrupted
// leaves WORKING tasks alone — they may run on live instances.
func TestRedisNoCrashRecovery(t *testing.T) {
	s := newTestRedis(t)
	mustPut(t, s, "o", mkTask("w", "c", a2a.TaskStateWorking, t0))
	if n, err := s.FailInterrupted(context.Background(), "stopped", time.Now()); n != 0 || err != nil {
		t.Fatalf("FailInterrupted: %d %v", n, err)
	}
	if got := mustGet(t, s, "o", "w"); got.Status.State != a2a.TaskStateWorking {
		t.Fatalf("state %s", got.Status.State)
	}
}

// TestRedisClosed: every method fails with ErrClosed after Close.
func TestRedisClosed(t *testing.T) {
	s := newTestRedis(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	ctx := context.Background()
	for name, err := range map[string]error{
		"PutTask":    s.PutTask(ctx, "o", mkTask("x", "c", a2a.TaskStateWorking, t0)),
		"PutContext": s.PutContext(ctx, ContextRecord{Owner: "o", ID: "c"}),
	} {
		if err != ErrClosed {
			t.Errorf("%s after Close: %v", name, err)
		}
	}
	if _, err := s.GetTask(ctx, "o", "x"); err != ErrClosed {
		t.Errorf("GetTask after Close: %v", err)
	}
	if _, err := s.ListTasks(ctx, ListQuery{Owner: "o", Limit: 1}); err != ErrClosed {
		t.Errorf("ListTasks after Close: %v", err)
	}
}

// TestCapabilities: each store says once what it can do: SQLite keeps
// its parts local (no Shared, Leaser, Creator or Blobs), Redis has every
// part, and a Deferred hands out those of the store it opened.
func TestCapabilities(t *testing.T) {
	ctx := context.Background()
	local := NewDeferred()
	if err := local.Open(openTest(t, t.TempDir()+"/a2a.db", SQLiteOptions{})); err != nil {
		t.Fatal(err)
	}
	lc := local.Capabilities()
	if lc.Shared != nil || lc.Leaser != nil || lc.Creator != nil || lc.Opener != nil || lc.Blobs != nil {
		t.Fatalf("SQLite reported as shared: %+v", lc)
	}
	if lc.NoWait == nil || lc.Push == nil || lc.Events == nil || lc.Sent == nil || lc.Pruner == nil {
		t.Fatalf("SQLite lacks a part: %+v", lc)
	}
	shared := NewDeferred()
	if shared.Capabilities().Shared != nil {
		t.Fatal("shared before Open")
	}
	r := newTestRedis(t)
	if err := shared.Open(r); err != nil {
		t.Fatal(err)
	}
	c := shared.Capabilities()
	if c.Shared == nil || c.Leaser == nil || c.Creator == nil || c.Opener == nil || c.Blobs == nil || c.Pruner == nil || c.NoWait == nil {
		t.Fatalf("Redis lacks a part: %+v", c)
	}
	if c.Events != EventStore(r) || c.Sent != SentMessageStore(r) || c.Shared != SharedEvents(r) {
		t.Fatal("the parts are not the opened store's")
	}
	l, ok, err := c.Leaser.TryLeaseContext(ctx, "o", "c", time.Minute)
	if err != nil || !ok {
		t.Fatalf("lease over Redis: %v %v", ok, err)
	}
	if _, ok, _ := r.TryLeaseContext(ctx, "o", "c", time.Minute); ok {
		t.Fatal("the lease is not the store's")
	}
	_ = l.Release(ctx)
	if err := c.Blobs.PutBlob(ctx, "ab", []byte("payload")); err != nil {
		t.Fatal(err)
	}
	if b, err := r.GetBlob(ctx, "ab"); err != nil || string(b) != "payload" {
		t.Fatalf("GetBlob: %q %v", b, err)
	}
	if _, err := c.Blobs.GetBlob(ctx, "cd"); err != ErrNotFound {
		t.Fatalf("missing blob: %v", err)
	}
	if err := c.Blobs.PutBlob(ctx, "big", make([]byte, DefaultMaxSharedBlobBytes+1)); err != ErrBlobTooLarge {
		t.Fatalf("blob over the cap: %v", err)
	}
	if c.Blobs.MaxBlobBytes() != DefaultMaxSharedBlobBytes {
		t.Fatalf("MaxBlobBytes = %d", c.Blobs.MaxBlobBytes())
	}
}

// TestRedisCreateContextOnce (INPUT-1 across instances): concurrent
// creates of one context on several store connections agree on the
// first creator's workspace binding.
func TestRedisCreateContextOnce(t *testing.T) {
	first := newTestRedis(t)
	ctx := context.Background()
	stores := []*Redis{first}
	for range 3 {
		s, err := OpenRedis(ctx, RedisOptions{URLs: []string{"redis://" + redisAddr(t)}, KeyPrefix: first.p})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores = append(stores, s)
	}
	for round := range 20 {
		id := fmt.Sprint("ctx-", round)
		type out struct {
			cwd     string
			created bool
		}
		res := make(chan out, 8)
		for i := range 8 {
			go func() {
				rec := ContextRecord{Owner: "o", ID: id, Cwd: fmt.Sprint("/w/", i), CreatedAt: t0, UpdatedAt: t0}
				got, created, err := stores[i%len(stores)].CreateContext(ctx, rec)
				if err != nil {
					t.Error(err)
					res <- out{}
					return
				}
				res <- out{got.Cwd, created}
			}()
		}
		created, cwds := 0, map[string]bool{}
		for range 8 {
			o := <-res
			cwds[o.cwd] = true
			if o.created {
				created++
			}
		}
		stored, err := first.GetContext(ctx, "o", id)
		if err != nil || created != 1 || len(cwds) != 1 || !cwds[stored.Cwd] || !stored.CreatedAt.Equal(t0) {
			t.Fatalf("round %d: %d creators, bindings %v, stored %+v %v", round, created, cwds, stored, err)
		}
	}
}

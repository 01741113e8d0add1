package tests

// OPS-5 end to end: retention of a seeded store by the running gateway
// (retention block) and by `caddy a2a tasks prune` on a stopped one.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// seedOldTasks writes n COMPLETED tasks of owner "" whose status is 40
// days old into the SQLite store of dir, plus inputs/<id> for the first.
func seedOldTasks(t *testing.T, dir string, n int) {
	t.Helper()
	st, err := store.OpenSQLite(filepath.Join(dir, "a2a.db"), store.SQLiteOptions{Durability: store.DurabilityNormal})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	old := a2a.Timestamp(time.Now().Add(-40 * 24 * time.Hour))
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += 16 {
				tk := &a2a.Task{ID: fmt.Sprintf("old-%06d", i), ContextID: "ctx-old", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: old}}
				if err := st.PutTask(context.Background(), "", tk); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "inputs", "old-000000"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "inputs", "old-000000", "1-a.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// oldArtifact writes an artifact payload file last referenced 40 days ago
// and returns its path.
func oldArtifact(t *testing.T, dir string) string {
	t.Helper()
	sha := strings.Repeat("ab", 32)
	p := filepath.Join(dir, "artifacts", sha[:2], sha)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("payload"), 0o600); err != nil {
		t.Fatal(err)
	}
	then := time.Now().Add(-40 * 24 * time.Hour)
	if err := os.Chtimes(p, then, then); err != nil {
		t.Fatal(err)
	}
	return p
}

func listTotal(t *testing.T, url string) float64 {
	t.Helper()
	res, rerr := harness.At(url).RPC(t, "ListTasks", map[string]any{"pageSize": 1})
	if rerr != nil {
		t.Fatalf("ListTasks: %v", rerr)
	}
	n, _ := res["totalSize"].(float64)
	return n
}

// TestRetentionGateway (OPS-5): a gateway with `retention { tasks 30d }`
// prunes a seeded store of 20,000 old tasks in the background, with their
// input files and unreferenced artifacts; a task of its own running turn
// and a fresh task stay; the pruned count is a metric.
func TestRetentionGateway(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	seedOldTasks(t, data, 20000)
	art := oldArtifact(t, data)
	gw := harness.StartGatewayWith(t, `a2a {
	card {
		name retention
	}
	backend echo {
		chunks 2
		delay 3s
	}
}
metrics /metrics`, harness.Options{Global: "a2a {\n\tdata_dir " + data + "\n\tretention {\n\t\ttasks 30d\n\t\tcontexts 7d\n\t\tdead_letters 14d\n\t\tinterval 1s\n\t}\n}"})
	// A running turn (6 s) and a finished one, both fresh.
	res, rerr := harness.At(gw.URL+"/").RPC(t, "SendMessage", map[string]any{"message": map[string]any{"messageId": "m-run", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "slow"}}}, "configuration": map[string]any{"returnImmediately": true}})
	if rerr != nil {
		t.Fatalf("SendMessage: %v", rerr)
	}
	running := bkStr(res, "task", "id")

	deadline := time.Now().Add(60 * time.Second)
	for listTotal(t, gw.URL+"/") > 1 {
		if time.Now().After(deadline) {
			t.Fatalf("not pruned within 60s: %v tasks left", listTotal(t, gw.URL+"/"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got, _ := harness.At(gw.URL+"/").RPC(t, "GetTask", map[string]any{"id": running}); bkStr(got, "id") != running {
		t.Fatalf("the running task was pruned")
	}
	// The pass goes on with the files, then counts.
	for {
		_, ierr := os.Stat(filepath.Join(data, "inputs", "old-000000"))
		_, aerr := os.Stat(art)
		m := harness.At(gw.URL+"/metrics").Do(t, "GET", "")
		counted := strings.Contains(string(m.Raw), `caddy_a2a_pruned_total{kind="tasks"} 20000`) && strings.Contains(string(m.Raw), `caddy_a2a_pruned_total{kind="artifacts"} 1`)
		if os.IsNotExist(ierr) && os.IsNotExist(aerr) && counted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the prune: input dir %v, artifact %v, counted %v", ierr, aerr, counted)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The prune command refuses a directory a gateway holds.
	if out, err := harness.Run(t, t.TempDir(), "a2a", "tasks", "prune", "--data-dir", data, "--older-than", "30d"); err == nil || !strings.Contains(out, "in use by a running gateway") {
		t.Errorf("prune next to a running gateway: %v %s", err, out)
	}
}

// TestRetentionCommand (OPS-5): `caddy a2a tasks prune` on a stopped data
// directory: --dry-run counts, the real pass removes, a second finds
// nothing, a bad duration is a usage error.
func TestRetentionCommand(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	seedOldTasks(t, data, 3000)
	art := oldArtifact(t, data)
	run := func(args ...string) string {
		t.Helper()
		out, err := harness.Run(t, t.TempDir(), append([]string{"a2a", "tasks", "prune", "--data-dir", data}, args...)...)
		if err != nil {
			t.Fatalf("prune %v: %v\n%s", args, err, out)
		}
		return out
	}
	if out := run("--older-than", "30d", "--dry-run"); !strings.Contains(out, "would remove: 3000 tasks") || !strings.Contains(out, "1 input directories, 1 artifact files") {
		t.Fatalf("dry run: %s", out)
	}
	if _, err := os.Stat(art); err != nil {
		t.Fatalf("the dry run removed a file: %v", err)
	}
	if out := run("--older-than", "30d"); !strings.Contains(out, "removed: 3000 tasks") {
		t.Fatalf("prune: %s", out)
	}
	if out := run("--older-than", "30d"); !strings.Contains(out, "removed: 0 tasks") {
		t.Fatalf("second prune: %s", out)
	}
	if _, err := os.Stat(art); !os.IsNotExist(err) {
		t.Errorf("artifact still there")
	}
	if out, err := harness.Run(t, t.TempDir(), "a2a", "tasks", "prune", "--data-dir", data, "--older-than", "soon"); err == nil || !strings.Contains(out, "invalid duration") {
		t.Errorf("bad duration: %v %s", err, out)
	}
}

// TestRetentionRedisGateways (OPS-5, SCALE-1): two gateways on one Redis,
// both with a retention block: the old tasks seeded in Redis are pruned
// (by whichever instance holds the pass), a fresh task stays, and the
// stored input files of a pruned task in *each* gateway's data_dir are
// removed — the instance that did not prune learns the ids from Redis.
func TestRetentionRedisGateways(t *testing.T) {
	t.Parallel()
	addr := harness.StartRedis(t)
	st, err := store.OpenRedis(context.Background(), store.RedisOptions{URLs: []string{"redis://" + addr + "/0"}, KeyPrefix: "ret:"})
	if err != nil {
		t.Fatal(err)
	}
	old := a2a.Timestamp(time.Now().Add(-40 * 24 * time.Hour))
	for i := 0; i < 1500; i++ {
		tk := &a2a.Task{ID: fmt.Sprintf("old-%06d", i), ContextID: "ctx-old", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: old}}
		if err := st.PutTask(context.Background(), "", tk); err != nil {
			t.Fatal(err)
		}
	}
	_ = st.Close()
	var dirs []string
	var gws []*harness.Gateway
	for i := 0; i < 2; i++ {
		data := t.TempDir()
		in := filepath.Join(data, "inputs", fmt.Sprintf("old-%06d", i))
		if err := os.MkdirAll(in, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(in, "1-a.txt"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, in)
		global := "a2a {\n\tdata_dir " + data + "\n\tstore redis {\n\t\turl redis://" + addr + "/0\n\t\tkey_prefix ret:\n\t}\n\tretention {\n\t\ttasks 30d\n\t\tinterval 1s\n\t\tbatch 200\n\t}\n}"
		gws = append(gws, harness.StartGatewayWith(t, "a2a {\n\tcard {\n\t\tname retention\n\t}\n\tbackend echo\n}", harness.Options{Global: global}))
	}
	if _, rerr := harness.At(gws[0].URL+"/").RPC(t, "SendMessage", map[string]any{"message": map[string]any{"messageId": "m-fresh", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "fresh"}}}}); rerr != nil {
		t.Fatalf("SendMessage: %v", rerr)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		a, b := listTotal(t, gws[0].URL+"/"), listTotal(t, gws[1].URL+"/")
		_, e0 := os.Stat(dirs[0])
		_, e1 := os.Stat(dirs[1])
		if a == 1 && b == 1 && os.IsNotExist(e0) && os.IsNotExist(e1) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60s: %v / %v tasks listed (want 1: the fresh one), input dirs %v / %v", a, b, e0, e1)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

package tests

// OPS-6, one owner per data directory: `caddy validate` and `caddy adapt
// --validate` on the config of a running gateway neither open its store
// nor run crash recovery (its running task stays WORKING and no false push
// is queued), a second gateway on the same directory fails to start with a
// line naming it, and reloads of the owner keep working. OPS-7: an exec
// agent dies with the gateway even on kill -9.

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// ownerGlobal puts the data directory at an absolute path, so that a
// validation run from another working directory reads the same one.
func ownerGlobal(dataDir string) string {
	return "a2a {\n\tdata_dir " + dataDir + "\n}"
}

func TestOpsValidateLeavesRunningGatewayAlone(t *testing.T) {
	t.Parallel()
	recv := newPushReceiver(t)
	dataDir := filepath.Join(t.TempDir(), "data")
	// 8 s of turn ("Echo: a slow turn" in 16 chunks, 500ms apart): both
	// validation commands must run inside it, also on a busy machine
	// (chunks 30 with delay 100ms was 1.7 s: the echo backend makes at most
	// one chunk per rune of its answer).
	slow := "backend echo {\n\t\tchunks 16\n\t\tdelay 500ms\n\t}"
	gw := harness.StartGatewayWith(t, opsSite("owner", slow), harness.Options{Admin: true, Global: ownerGlobal(dataDir)})

	res, rpcErr := harness.At(gw.URL).RPC(t, "SendMessage", map[string]any{"message": bkMessage("a slow turn", "", nil),
		"configuration": map[string]any{"returnImmediately": true, "taskPushNotificationConfig": map[string]any{"url": recv.srv.URL + "/slow"}}}, harness.Client(opsClient))
	task, _ := res["task"].(map[string]any)
	if rpcErr != nil || task == nil {
		t.Fatalf("SendMessage: %v %v", res, rpcErr)
	}
	id := bkStr(task, "id")

	// Both validation commands, from another working directory, while the
	// turn runs.
	for _, args := range [][]string{
		{"validate", "--config", gw.ConfigPath, "--adapter", "caddyfile"},
		{"adapt", "--config", gw.ConfigPath, "--validate"},
	} {
		if out, err := harness.Run(t, t.TempDir(), args...); err != nil {
			t.Errorf("%s: %v\n%s", args[0], err, out)
		}
	}
	res, rpcErr = harness.At(gw.URL).RPC(t, "GetTask", map[string]any{"id": id}, harness.Client(opsClient))
	if st := bkStr(res, "status", "state"); rpcErr != nil || st != "TASK_STATE_WORKING" {
		t.Fatalf("after validation the running task is %q (%v), want still WORKING: validation ran crash recovery", st, rpcErr)
	}

	// A reload of the owner (same data directory) works, mid-turn.
	gw.Reload(opsSite("owner reloaded", slow))
	if d := opsCard(t, gw.URL); d != "owner reloaded" {
		t.Errorf("card description %q after the reload", d)
	}

	// Wait until the task is no longer WORKING or SUBMITTED (or 20s).
	task, _ = harness.WaitTask(t, gw.URL, id, 20*time.Second, func(task map[string]any) bool {
		st := harness.TaskState(task)
		return st != "TASK_STATE_WORKING" && st != "TASK_STATE_SUBMITTED"
	}, harness.Client(opsClient))
	if st := harness.TaskState(task); st != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("the task ended %s, want INPUT_REQUIRED", st)
	}
	// Exactly one push, for the real end of the turn.
	hits := recv.waitHits(t, "/slow", 1, 10*time.Second)
	time.Sleep(700 * time.Millisecond) // sleep: room for a false push, which must not come
	hits = recv.hits("/slow")
	for _, h := range hits {
		if st := bkStr(h.Body, "statusUpdate", "status", "state"); st != "TASK_STATE_INPUT_REQUIRED" {
			t.Errorf("push for state %s: a false notification", st)
		}
	}
	if len(hits) != 1 {
		t.Errorf("%d push deliveries, want 1", len(hits))
	}
	// A new turn after the reload runs too.
	res, rpcErr = harness.At(gw.URL).RPC(t, "SendMessage", map[string]any{"message": bkMessage("after", "", nil)}, harness.Client(opsClient))
	if rpcErr != nil || res["task"] == nil {
		t.Fatalf("SendMessage after the reload: %v %v", res, rpcErr)
	}
}

// Validation of a config whose data directory does not exist creates
// nothing there (no store, no keys, no lock).
func TestOpsValidateCreatesNoDataDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	cfg := filepath.Join(dir, "Caddyfile")
	site := "{\n\tadmin off\n\t" + strings.ReplaceAll(ownerGlobal(dataDir), "\n", "\n\t") + "\n}\n\nhttp://127.0.0.1:1 {\n" + opsSite("v", "backend echo") + "\n}\n"
	if err := os.WriteFile(cfg, []byte(site), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"validate", "--config", cfg, "--adapter", "caddyfile"},
		{"adapt", "--config", cfg, "--validate"},
	} {
		if out, err := harness.Run(t, dir, args...); err != nil {
			t.Fatalf("%s: %v\n%s", args[0], err, out)
		}
		if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
			t.Fatalf("%s created the data directory (stat: %v)", args[0], err)
		}
	}
}

func TestOpsSecondGatewayRefused(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(t.TempDir(), "data")
	a := harness.StartGatewayWith(t, opsSite("first", "backend echo"), harness.Options{Global: ownerGlobal(dataDir)})
	b := harness.StartGatewayWith(t, opsSite("second", "backend echo"), harness.Options{Global: ownerGlobal(dataDir), NoHealthWait: true})
	if !b.WaitExit(20 * time.Second) {
		t.Fatalf("a second gateway on the same data directory is running:\n%s", b.Output())
	}
	want := "data directory " + dataDir + " is in use by another caddy-a2a process"
	if !strings.Contains(b.Output(), want) {
		t.Errorf("second gateway's output lacks %q:\n%s", want, b.Output())
	}
	// The owner is unharmed.
	if res, rpcErr := harness.At(a.URL).RPC(t, "SendMessage", map[string]any{"message": bkMessage("still here", "", nil)}, harness.Client(opsClient)); rpcErr != nil || res["task"] == nil {
		t.Fatalf("SendMessage to the owner: %v %v", res, rpcErr)
	}
	// Once the owner is gone, even by kill -9, the directory is free: the
	// kernel drops the lock with the process (no stale lock file).
	a.Signal(syscall.SIGKILL)
	if !a.WaitExit(5 * time.Second) {
		t.Fatal("the owner survived kill -9")
	}
	b.Start()
	if res, rpcErr := harness.At(b.URL).RPC(t, "SendMessage", map[string]any{"message": bkMessage("new owner", "", nil)}, harness.Client(opsClient)); rpcErr != nil || res["task"] == nil {
		t.Fatalf("SendMessage to the new owner: %v %v", res, rpcErr)
	}
}

// OPS-7: kill -9 of the gateway mid-turn takes the exec agent with it.
func TestOpsExecAgentDiesWithGateway(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "agent.pid")
	script := filepath.Join(dir, "agent.sh")
	// The agent writes its pid and becomes a long sleep (the same process).
	body := "#!/bin/sh\necho $$ > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + "\nexec sleep 100\n"
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	gw := harness.StartGateway(t, "a2a {\n\tcard {\n\t\tname exec-owner\n\t}\n\tbackend exec "+script+"\n}")
	res, rpcErr := harness.At(gw.URL).RPC(t, "SendMessage", map[string]any{"message": bkMessage("sleep", "", nil),
		"configuration": map[string]any{"returnImmediately": true}}, harness.Client(opsClient))
	if rpcErr != nil || res["task"] == nil {
		t.Fatalf("SendMessage: %v %v", res, rpcErr)
	}
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0; {
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if pid == 0 && time.Now().After(deadline) {
			t.Fatal("the agent did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("agent %d not running: %v", pid, err)
	}

	gw.Signal(syscall.SIGKILL) // the gateway only, not its process group
	if !gw.WaitExit(5 * time.Second) {
		t.Fatal("the gateway survived kill -9")
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		// Gone, or a zombie waiting for init (or a subreaper) to reap it.
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if os.IsNotExist(err) || strings.Contains(string(st), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent %d outlived the gateway's kill -9 by 5s: %s", pid, st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// OPS-6: the store and the push key ring load when the a2a app starts,
// which may come after the HTTP server is already accepting: the first
// requests wait for them instead of failing (a SendMessage with a push
// token seals it with the key ring). Ten starts: Caddy starts its apps in
// map order, so each start has about even odds of serving HTTP first.
func TestOpsFirstRequestsWaitForStart(t *testing.T) {
	t.Parallel()
	site := `a2a {
	card {
		name early
	}
	push {
		allow_private_networks 127.0.0.0/8
	}
}`
	for i := range 10 {
		gw := harness.StartGatewayWith(t, site, harness.Options{NoHealthWait: true})
		params := map[string]any{"message": bkMessage("early", "", nil),
			"configuration": map[string]any{"returnImmediately": true, "taskPushNotificationConfig": map[string]any{"url": "http://127.0.0.1:1/hook", "token": "tok"}}}
		var wg sync.WaitGroup
		var failed atomic.Value
		for range 8 {
			wg.Go(func() {
				for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
					res, err := harness.At(gw.URL).Try("SendMessage", params)
					if err != nil && strings.Contains(err.Error(), "rpc error") {
						failed.Store(err.Error())
						return
					}
					if err == nil && res["task"] != nil {
						return
					}
					time.Sleep(time.Millisecond) // not listening yet
				}
				failed.Store("no answer within 15s")
			})
		}
		wg.Wait()
		if v := failed.Load(); v != nil {
			t.Fatalf("start %d: an early SendMessage failed: %v", i, v)
		}
		gw.Stop()
	}
}

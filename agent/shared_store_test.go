package agent

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// startRedis runs a throwaway redis-server on a free loopback port; the
// test fails without redis-server.
func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is required: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	for range 200 {
		if c.Ping(context.Background()).Err() == nil {
			return addr
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatal("redis-server did not answer")
	return ""
}

// newSharedEnv starts an endpoint (an "instance") over its own Redis store
// connection to addr.
func newSharedEnv(t *testing.T, addr string, cfg Config) *testEnv {
	t.Helper()
	return newSharedEnvMax(t, addr, 0, cfg)
}

// newSharedEnvMax is newSharedEnv with max_shared_blob_bytes maxBlob.
func newSharedEnvMax(t *testing.T, addr string, maxBlob int64, cfg Config) *testEnv {
	t.Helper()
	st, err := store.OpenRedis(context.Background(), store.RedisOptions{URLs: []string{"redis://" + addr}, MaxSharedBlobBytes: maxBlob})
	if err != nil {
		t.Fatal(err)
	}
	hub, err := NewHub(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	return serveTestEnv(t, hub, NewService(hub, cfg), TransportConfig{}, func() { _ = st.Close() })
}

// TestSharedContextLease (SCALE-3): two instances on one Redis store. A
// message on B for a context whose turn runs on A waits context_wait and
// ends "Task is already working."; with a longer context_wait it waits
// for A's turn to end and then runs.
func TestSharedContextLease(t *testing.T) {
	addr := startRedis(t)
	gA, gB := newGate(), newGate()
	wait := 300 * time.Millisecond
	a := newSharedEnv(t, addr, Config{Backend: gA, ContextWait: wait})
	b := newSharedEnv(t, addr, Config{Backend: gB, ContextWait: wait})
	bLong := newSharedEnv(t, addr, Config{Backend: gB, ContextWait: 5 * time.Second})

	t1 := a.send("", immediate(inContext(msg("first"), "c1")))
	gA.waitStarted(t)
	start := time.Now()
	t2 := b.send("", sendReq(inContext(msg("second"), "c1")))
	took := time.Since(start)
	if t2.Status.State != a2a.TaskStateFailed || statusText(t2) != "Task is already working." {
		t.Fatalf("second message on B: %s %q, want FAILED \"Task is already working.\"", t2.Status.State, statusText(t2))
	}
	if took < wait-20*time.Millisecond {
		t.Fatalf("B refused after %v, want it to wait about %v (context_wait)", took, wait)
	}
	// Another context is not blocked by A's lease.
	gB.release <- struct{}{}
	if t3 := b.send("", sendReq(inContext(msg("other"), "c2"))); t3.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("other context on B: %s %q", t3.Status.State, statusText(t3))
	}
	<-gB.started

	// context_wait across instances: B waits while A's turn ends.
	go func() {
		if !blockedIn("(*Service).leaseShared") {
			t.Error("B never waited for A's lease")
		}
		gA.release <- struct{}{}
		gB.release <- struct{}{}
	}()
	t4 := bLong.send("", sendReq(inContext(msg("fourth"), "c1")))
	if t4.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("B after A's turn: %s %q, want INPUT_REQUIRED", t4.Status.State, statusText(t4))
	}
	// A's task, read on B (shared tasks).
	if got := b.waitState("", t1.ID, a2a.TaskStateInputRequired, 5*time.Second); got.ContextID != "c1" {
		t.Fatalf("A's task on B: %+v", got)
	}
}

// historyBackend keeps the prompts of a context in its session state and
// answers with all of them, like a chat backend keeping history.
type historyBackend struct{}

func (historyBackend) RunTurn(_ context.Context, req *backend.TurnRequest, emit backend.Emit) error {
	st := string(req.Session.State)
	if st != "" {
		st += "|"
	}
	st += req.Prompt
	req.Session.State = []byte(st)
	return emit(backend.Event{V: 1, Type: backend.EventEnd, Outcome: backend.OutcomeCompleted, Text: st})
}

// TestSharedSessionState (SCALE-1/3): the backend's session state of a
// context moves with the context between instances, also to an instance
// that ran the context before (its cached state is reloaded).
func TestSharedSessionState(t *testing.T) {
	addr := startRedis(t)
	a := newSharedEnv(t, addr, Config{Backend: historyBackend{}})
	b := newSharedEnv(t, addr, Config{Backend: historyBackend{}})
	for i, step := range []struct {
		env  *testEnv
		text string
		want string
	}{{a, "one", "one"}, {b, "two", "one|two"}, {a, "three", "one|two|three"}} {
		got := step.env.send("alice", sendReq(inContext(msg(step.text), "ctx")))
		if got.Status.State != a2a.TaskStateCompleted || !containsText(got, step.want) {
			t.Fatalf("turn %d: %s, want a reply %q: %+v", i+1, got.Status.State, step.want, got)
		}
	}
}

func containsText(t a2a.Task, want string) bool {
	if statusText(t) == want {
		return true
	}
	for _, m := range t.History {
		if messageText(m) == want {
			return true
		}
	}
	for _, art := range t.Artifacts {
		for _, p := range art.Parts {
			if p.Text != nil && *p.Text == want {
				return true
			}
		}
	}
	return false
}

// TestSharedArtifactDownload (SCALE-1): an artifact payload stored by a
// turn on A downloads from B, whose data directory never had it; a
// payload over max_shared_blob_bytes fails the turn.
func TestSharedArtifactDownload(t *testing.T) {
	addr := startRedis(t)
	payload := strings.Repeat("shared bytes ", 3) // 39 bytes
	events := func(req *backend.TurnRequest) []backend.Event {
		p := payload
		if req.Prompt == "big" {
			p = strings.Repeat("x", 65)
		}
		return []backend.Event{
			{V: 1, Type: backend.EventArtifact, ArtifactID: "a1", Name: "out", MediaType: "text/plain", Filename: "out.txt", Text: p},
			{V: 1, Type: backend.EventEnd, Outcome: backend.OutcomeCompleted, Text: "done"},
		}
	}
	cfg := func() Config {
		return Config{Backend: artScript{events: events}, ArtifactDir: t.TempDir(), MaxArtifactBytes: 1 << 20}
	}
	a := newSharedEnvMax(t, addr, 64, cfg())
	b := newSharedEnvMax(t, addr, 64, cfg())
	task := a.send("", sendReq(msg("go")))
	if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 {
		t.Fatalf("turn on A: %s %v", task.Status.State, task.Artifacts)
	}
	rep := b.do("GET", "/artifacts/"+task.ID+"/a1", nil, v1Headers(""))
	if rep.status != 200 || string(rep.body) != payload {
		t.Fatalf("download on B: %d %q, want 200 %q", rep.status, rep.body, payload)
	}
	// Another owner cannot fetch it through B either.
	if rep := b.do("GET", "/artifacts/"+task.ID+"/a1", nil, v1Headers("mallory")); rep.status != 404 {
		t.Fatalf("foreign download on B: %d", rep.status)
	}
	// Over max_shared_blob_bytes (64): the turn fails.
	a.sendInvalid(sendReq(msg("big")), strings.Repeat("x", 65))
}

// TestSharedFollowUpWaitsForRemoteTurn (SCALE-3, RPC-1b): a follow-up
// through B of a task whose turn runs on A is refused with "Task is
// already working." after context_wait, leaving A's task alone; with a
// longer context_wait it waits for A's turn and continues the task.
func TestSharedFollowUpWaitsForRemoteTurn(t *testing.T) {
	addr := startRedis(t)
	gA, gB := newGate(), newGate()
	a := newSharedEnv(t, addr, Config{Backend: gA, ContextWait: 300 * time.Millisecond})
	b := newSharedEnv(t, addr, Config{Backend: gB, ContextWait: 300 * time.Millisecond})
	bLong := newSharedEnv(t, addr, Config{Backend: gB, ContextWait: 5 * time.Second})

	t1 := a.send("", immediate(inContext(msg("first"), "c1")))
	gA.waitStarted(t)
	follow := inContext(msg("follow-up"), "c1")
	follow.TaskID = t1.ID
	rpcErr := b.rpcError("", a2a.MethodSendMessage, sendReq(follow), a2a.CodeUnsupportedOperation)
	if rpcErr.Message != "Task is already working." {
		t.Fatalf("follow-up on B while A runs: %q", rpcErr.Message)
	}
	if got := b.getTask("", t1.ID); got.Status.State.Terminal() {
		t.Fatalf("the refused follow-up changed A's task: %s %q", got.Status.State, statusText(got))
	}
	go func() {
		if !blockedIn("(*Service).awaitRemoteTurn") {
			t.Error("B's follow-up never waited for A's turn")
		}
		gA.release <- struct{}{}
		gB.release <- struct{}{}
	}()
	got := bLong.send("", sendReq(follow))
	if got.ID != t1.ID || got.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("follow-up on B after A's turn: %s %s %q", got.ID, got.Status.State, statusText(got))
	}
	users := 0
	for _, m := range got.History {
		if m.Role == a2a.RoleUser {
			users++
		}
	}
	if users != 2 {
		t.Fatalf("history holds %d user messages, want both turns: %+v", users, got.History)
	}
}

// TestSharedWorkspaceBinding (INPUT-1, SCALE-1): a context bound to a
// workspace through A runs in it through B (a follow-up without a cwd)
// and refuses another workspace through B.
func TestSharedWorkspaceBinding(t *testing.T) {
	root, dirA, dirB := workspaceDirs(t)
	addr := startRedis(t)
	cbA, cbB := &cwdBackend{}, &cwdBackend{}
	a := newSharedEnv(t, addr, Config{Backend: cbA, Workspace: NewWorkspace(root, []string{root})})
	b := newSharedEnv(t, addr, Config{Backend: cbB, Workspace: NewWorkspace(root, []string{root})})
	if got := a.send("", sendReq(withCwd(inContext(msg("x"), "bound"), dirA))); got.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("bind through A: %s %q", got.Status.State, statusText(got))
	}
	if got := b.send("", sendReq(inContext(msg("y"), "bound"))); got.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("follow-up through B: %s %q", got.Status.State, statusText(got))
	}
	cbB.mu.Lock()
	ran := cbB.cwds
	cbB.mu.Unlock()
	if len(ran) != 1 || ran[0] != dirA {
		t.Fatalf("B ran in %v, want the workspace bound through A", ran)
	}
	if got := b.send("", sendReq(withCwd(inContext(msg("z"), "bound"), dirB))); got.Status.State != a2a.TaskStateFailed {
		t.Fatalf("other workspace through B: %s, want FAILED", got.Status.State)
	}
}

package agent

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
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
)

func immediate(m *a2a.Message) *a2a.SendMessageRequest {
	req := sendReq(m)
	req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	return req
}

func TestContextBusyRejectsAfterWait(t *testing.T) {
	g := newGate()
	wait := 200 * time.Millisecond
	e := newTestEnv(t, Config{Backend: g, ContextWait: wait})
	t1 := e.send("", immediate(inContext(msg("first"), "c1")))
	g.waitStarted(t)

	start := time.Now()
	t2 := e.send("", sendReq(inContext(msg("second"), "c1"))) // blocking
	took := time.Since(start)
	if t2.Status.State != a2a.TaskStateFailed {
		t.Fatalf("second message state %s, want TASK_STATE_FAILED", t2.Status.State)
	}
	if got := statusText(t2); got != "Task is already working." {
		t.Errorf("second message status %q, want %q", got, "Task is already working.")
	}
	if took < wait-20*time.Millisecond {
		t.Errorf("rejected after %v, want it to wait about %v", took, wait)
	}
	if t2.ContextID != "c1" || t2.ID == t1.ID {
		t.Errorf("second task %s in %s", t2.ID, t2.ContextID)
	}
	// The running turn is unaffected.
	g.release <- struct{}{}
	e.waitState("", t1.ID, a2a.TaskStateInputRequired, 10*time.Second)
	// And the context works again.
	g.release <- struct{}{}
	t3 := e.send("", sendReq(inContext(msg("third"), "c1")))
	if t3.Status.State != a2a.TaskStateInputRequired {
		t.Errorf("third message: %s %q", t3.Status.State, statusText(t3))
	}
}

func TestContextBusyWaitsForShortTurn(t *testing.T) {
	g := newGate()
	e := newTestEnv(t, Config{Backend: g, ContextWait: 3 * time.Second})
	t1 := e.send("", immediate(inContext(msg("first"), "c1")))
	g.waitStarted(t)
	go func() {
		// Once the second message waits for c1, the first turn ends.
		if !blockedIn("(*convContext).acquire") {
			t.Error("the second message never waited for its context")
		}
		g.release <- struct{}{}
		g.release <- struct{}{}
	}()
	t2 := e.send("", sendReq(inContext(msg("second"), "c1")))
	if t2.Status.State != a2a.TaskStateInputRequired {
		t.Errorf("second message after a short turn: %s %q, want INPUT_REQUIRED", t2.Status.State, statusText(t2))
	}
	e.waitState("", t1.ID, a2a.TaskStateInputRequired, 5*time.Second)
}

func TestDifferentContextsRunConcurrently(t *testing.T) {
	g := newGate()
	e := newTestEnv(t, Config{Backend: g, ContextWait: 100 * time.Millisecond})
	var ids []string
	for i := 0; i < 3; i++ {
		ids = append(ids, e.send("", immediate(inContext(msg("x"), fmt.Sprint("ctx-", i)))).ID)
	}
	for range ids {
		g.waitStarted(t) // all three run at once
	}
	for _, id := range ids {
		if got := e.getTask("", id); got.Status.State != a2a.TaskStateWorking {
			t.Errorf("task %s: %s, want WORKING", id, got.Status.State)
		}
	}
	for range ids {
		g.release <- struct{}{}
	}
	for _, id := range ids {
		e.waitState("", id, a2a.TaskStateInputRequired, 10*time.Second)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	g := newGate()
	e := newTestEnv(t, Config{Backend: g, MaxConcurrentTurns: 1, ContextWait: 100 * time.Millisecond})
	t1 := e.send("", immediate(inContext(msg("x"), "c1")))
	g.waitStarted(t)
	t2 := e.send("", sendReq(inContext(msg("y"), "c2")))
	if t2.Status.State != a2a.TaskStateFailed || !strings.Contains(statusText(t2), "maximum number of concurrent turns") {
		t.Errorf("turn over the limit: %s %q, want FAILED with a clear message", t2.Status.State, statusText(t2))
	}
	g.release <- struct{}{}
	e.waitState("", t1.ID, a2a.TaskStateInputRequired, 10*time.Second)
}

func workspaceDirs(t *testing.T) (root, a, b string) {
	t.Helper()
	root = t.TempDir()
	a = filepath.Join(root, "proj-a")
	b = filepath.Join(root, "proj-b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Resolve symlinks (e.g. macOS /var → /private/var) the way the server does.
	root, _ = filepath.EvalSymlinks(root)
	a, _ = filepath.EvalSymlinks(a)
	b, _ = filepath.EvalSymlinks(b)
	return root, a, b
}

// cwdBackend records the cwd of each turn.
type cwdBackend struct {
	mu   sync.Mutex
	cwds []string
}

func (c *cwdBackend) RunTurn(ctx context.Context, req *backend.TurnRequest, emit backend.Emit) error {
	c.mu.Lock()
	c.cwds = append(c.cwds, req.Cwd)
	c.mu.Unlock()
	return emit(backend.Event{V: 1, Type: backend.EventEnd, Outcome: backend.OutcomeInputRequired, Text: "ok"})
}

func TestContextWorkspace(t *testing.T) {
	root, a, b := workspaceDirs(t)
	cb := &cwdBackend{}
	e := newTestEnv(t, Config{Backend: cb, Workspace: NewWorkspace(root, []string{root})})

	first := e.send("", sendReq(withCwd(inContext(msg("x"), "ws"), a)))
	if first.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("first message with a valid cwd: %s %q", first.Status.State, statusText(first))
	}
	if cb.cwds[0] != a {
		t.Errorf("backend ran in %q, want %q", cb.cwds[0], a)
	}
	// Same cwd again: fine.
	if got := e.send("", sendReq(withCwd(inContext(msg("x"), "ws"), a))); got.Status.State != a2a.TaskStateInputRequired {
		t.Errorf("same cwd again: %s %q", got.Status.State, statusText(got))
	}
	// Different cwd for the known context.
	other := e.send("", sendReq(withCwd(inContext(msg("x"), "ws"), b)))
	if other.Status.State != a2a.TaskStateFailed {
		t.Fatalf("different cwd: state %s, want FAILED", other.Status.State)
	}
	txt := statusText(other)
	if !strings.Contains(strings.ToLower(txt), "invalid workspace") {
		t.Errorf("different cwd: status %q, want an invalid-workspace message", txt)
	}
	if strings.Contains(txt, b) || strings.Contains(txt, a) || strings.Contains(txt, root) {
		t.Errorf("status message echoes a path: %q", txt)
	}
	// The bound context still works with its own cwd, and with none: the
	// workspace follows the context (INPUT-1).
	if got := e.send("", sendReq(withCwd(inContext(msg("x"), "ws"), a))); got.Status.State != a2a.TaskStateInputRequired {
		t.Errorf("bound cwd after a rejected one: %s", got.Status.State)
	}
	if got := e.send("", sendReq(inContext(msg("x"), "ws"))); got.Status.State != a2a.TaskStateInputRequired {
		t.Errorf("follow-up without a cwd: %s %q", got.Status.State, statusText(got))
	}
	if last := cb.cwds[len(cb.cwds)-1]; last != a {
		t.Errorf("follow-up without a cwd ran in %q, want the bound %q", last, a)
	}
}

// INPUT-1, RPC-6: generic A2A clients never resend metadata. A follow-up
// without a cwd — a new task in the context or the continuation of its
// input-required task — runs in the bound workspace, also once the
// context was evicted (the binding is in the store) and its file URLs are
// checked against it; continuing the task with a different cwd is refused
// with an error and leaves the task as it was.
func TestWorkspaceFollowsContext(t *testing.T) {
	root, a, b := workspaceDirs(t)
	if err := os.WriteFile(filepath.Join(a, "in-a.txt"), []byte("file in a"), 0o600); err != nil {
		t.Fatal(err)
	}
	cb := &cwdBackend{}
	def := filepath.Join(root, "default")
	if err := os.Mkdir(def, 0o700); err != nil {
		t.Fatal(err)
	}
	e := newTestEnv(t, Config{Backend: cb, Workspace: NewWorkspace(def, []string{root})})
	last := func() string {
		cb.mu.Lock()
		defer cb.mu.Unlock()
		return cb.cwds[len(cb.cwds)-1]
	}
	first := e.send("", sendReq(withCwd(inContext(msg("x"), "follow"), a)))
	if first.Status.State != a2a.TaskStateInputRequired || last() != a {
		t.Fatalf("first message: %s in %q", first.Status.State, last())
	}
	// Continuing the input-required task without metadata.
	cont := msg("go on")
	cont.TaskID = first.ID
	got := e.send("", sendReq(cont))
	if got.ID != first.ID || got.Status.State != a2a.TaskStateInputRequired || last() != a {
		t.Errorf("continuation without a cwd: %s %q in %q, want INPUT_REQUIRED in the bound workspace", got.Status.State, statusText(got), last())
	}
	// A file URL of a follow-up without cwd is checked against the bound one.
	fm := inContext(urlMessage("file://"+filepath.Join(a, "in-a.txt"), "text/plain"), "follow")
	if got := e.send("", sendReq(fm)); got.Status.State != a2a.TaskStateInputRequired || last() != a {
		t.Errorf("file part of a follow-up without a cwd: %s %q", got.Status.State, statusText(got))
	}
	// Continuing the task in another workspace: an error, the task intact.
	before := e.getTask("", first.ID)
	other := withCwd(msg("elsewhere"), b)
	other.TaskID = first.ID
	rpcErr := e.rpcError("", "SendMessage", sendReq(other), a2a.CodeInvalidParams)
	if !strings.Contains(strings.ToLower(rpcErr.Message), "invalid workspace") || strings.Contains(rpcErr.Message, root) {
		t.Errorf("other cwd error %q, want a path-free invalid-workspace error", rpcErr.Message)
	}
	checkBadRequestField(t, rpcErr.Data, "message.metadata."+ns+".cwd")
	after := e.getTask("", first.ID)
	if after.Status.State != a2a.TaskStateInputRequired || len(after.History) != len(before.History) {
		t.Errorf("task after a refused continuation: %s, %d messages (was %d): it must stay as it was", after.Status.State, len(after.History), len(before.History))
	}
	// An unacceptable cwd on a continuation is refused the same way.
	bad := withCwd(msg("bad"), filepath.Join(root, "missing"))
	bad.TaskID = first.ID
	e.rpcError("", "SendMessage", sendReq(bad), a2a.CodeInvalidParams)
	if got := e.getTask("", first.ID); got.Status.State != a2a.TaskStateInputRequired {
		t.Errorf("task after a continuation with a bad cwd: %s", got.Status.State)
	}
	// The task still continues in its workspace.
	again := msg("and again")
	again.TaskID = first.ID
	if got := e.send("", sendReq(again)); got.Status.State != a2a.TaskStateInputRequired || last() != a {
		t.Errorf("continuation after the refusals: %s in %q", got.Status.State, last())
	}
	// After eviction the stored binding applies.
	e.hub.contexts.evictIdle(time.Now().Add(time.Hour))
	if got := e.send("", sendReq(inContext(msg("x"), "follow"))); got.Status.State != a2a.TaskStateInputRequired || last() != a {
		t.Errorf("follow-up without a cwd after eviction: %s %q in %q", got.Status.State, statusText(got), last())
	}
	// A new context without a cwd runs in the default and binds it.
	if got := e.send("", sendReq(inContext(msg("x"), "fresh"))); got.Status.State != a2a.TaskStateInputRequired || last() != def {
		t.Errorf("new context without a cwd: %s in %q, want the default", got.Status.State, last())
	}
	if got := e.send("", sendReq(withCwd(inContext(msg("x"), "fresh"), a))); got.Status.State != a2a.TaskStateFailed {
		t.Errorf("other cwd in a context bound to the default: %s, want FAILED", got.Status.State)
	}
}

func TestInvalidCwd(t *testing.T) {
	root, _, _ := workspaceDirs(t)
	outside := t.TempDir() // not under root
	file := filepath.Join(root, "file.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newTestEnv(t, Config{Workspace: NewWorkspace(root, []string{root})})
	for _, cwd := range []string{"relative/dir", filepath.Join(root, "missing"), file, outside, root + "/../" + filepath.Base(outside)} {
		task := e.send("", sendReq(withCwd(msg("x"), cwd)))
		if task.Status.State != a2a.TaskStateFailed {
			t.Errorf("cwd %q: state %s, want FAILED", cwd, task.Status.State)
			continue
		}
		txt := statusText(task)
		if !strings.Contains(strings.ToLower(txt), "invalid workspace") || strings.Contains(txt, cwd) || strings.Contains(txt, root) {
			t.Errorf("cwd %q: status %q, want an invalid-workspace message without the path", cwd, txt)
		}
	}
	// A symlink out of the root is resolved before the check.
	link := filepath.Join(root, "escape")
	if err := os.Symlink(outside, link); err == nil {
		task := e.send("", sendReq(withCwd(msg("x"), link)))
		if task.Status.State != a2a.TaskStateFailed {
			t.Errorf("symlink escaping the root: state %s, want FAILED", task.Status.State)
		}
	}
}

// sessionBackend counts turns in the context's session and records closes.
type sessionBackend struct {
	mu     sync.Mutex
	counts []int
	closed int
}

func (s *sessionBackend) RunTurn(ctx context.Context, req *backend.TurnRequest, emit backend.Emit) error {
	n, _ := req.Session.Value.(int)
	n++
	req.Session.Value = n
	s.mu.Lock()
	s.counts = append(s.counts, n)
	s.mu.Unlock()
	return emit(backend.Event{V: 1, Type: backend.EventEnd, Outcome: backend.OutcomeInputRequired, Text: fmt.Sprint("turn ", n)})
}

func (s *sessionBackend) CloseSession(*backend.Session) {
	s.mu.Lock()
	s.closed++
	s.mu.Unlock()
}

func (s *sessionBackend) snapshot() ([]int, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.counts...), s.closed
}

func TestContextSessionReused(t *testing.T) {
	sb := &sessionBackend{}
	e := newTestEnv(t, Config{Backend: sb})
	e.send("", sendReq(inContext(msg("1"), "sess")))
	e.send("", sendReq(inContext(msg("2"), "sess")))
	e.send("", sendReq(inContext(msg("3"), "other")))
	counts, _ := sb.snapshot()
	if fmt.Sprint(counts) != "[1 2 1]" {
		t.Errorf("session turn counts %v, want [1 2 1] (same context reuses its session)", counts)
	}
}

func TestIdleEviction(t *testing.T) {
	root, a, b := workspaceDirs(t)
	sb := &sessionBackend{}
	e := newTestEnv(t, Config{Backend: sb, IdleTimeout: 50 * time.Millisecond, Workspace: NewWorkspace(root, []string{root})})
	first := e.send("", sendReq(withCwd(inContext(msg("1"), "evict-me"), a)))
	if first.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("first: %s %q", first.Status.State, statusText(first))
	}
	// The janitor may start with the hub's default timeout (see
	// TestIdleTimeoutReachesRunningJanitor), so allow for its first minute.
	deadline := time.Now().Add(75 * time.Second)
	for e.hub.LiveContexts() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("context not evicted: %d live", e.hub.LiveContexts())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, closed := sb.snapshot(); closed != 1 {
		t.Errorf("CloseSession called %d times on eviction, want 1", closed)
	}
	// Tasks stay stored.
	if got := e.getTask("", first.ID); got.Status.State != a2a.TaskStateInputRequired || len(got.History) != 2 {
		t.Errorf("task after eviction: %s, %d messages", got.Status.State, len(got.History))
	}
	// The workspace binding survives eviction (it lives in the store).
	if got := e.send("", sendReq(withCwd(inContext(msg("x"), "evict-me"), b))); got.Status.State != a2a.TaskStateFailed {
		t.Errorf("other cwd after eviction: %s, want FAILED", got.Status.State)
	}
	// A follow-up in the evicted context works: a new task, a fresh session.
	next := e.send("", sendReq(withCwd(inContext(msg("2"), "evict-me"), a)))
	if next.Status.State != a2a.TaskStateInputRequired || next.ID == first.ID || next.ContextID != "evict-me" {
		t.Errorf("follow-up after eviction: %s %q id %s ctx %s", next.Status.State, statusText(next), next.ID, next.ContextID)
	}
	// Continuing the old task also works.
	m := msg("3")
	m.TaskID = first.ID
	m.Metadata = map[string]any{ns: map[string]any{"cwd": a}}
	cont := e.send("", sendReq(m))
	if cont.ID != first.ID || cont.Status.State != a2a.TaskStateInputRequired || len(cont.History) != 4 {
		t.Errorf("continuing the old task after eviction: id %s state %s history %d", cont.ID, cont.Status.State, len(cont.History))
	}
}

func TestEvictionSkipsBusyContext(t *testing.T) {
	g := newGate()
	e := newTestEnv(t, Config{Backend: g, IdleTimeout: 20 * time.Millisecond})
	task := e.send("", immediate(inContext(msg("x"), "busy")))
	g.waitStarted(t)
	time.Sleep(150 * time.Millisecond) // sleep: several idle timeouts (20ms) pass; the busy context must not be evicted
	if n := e.hub.LiveContexts(); n != 1 {
		t.Errorf("%d live contexts while a turn runs, want 1 (busy contexts are not evicted)", n)
	}
	g.release <- struct{}{}
	e.waitState("", task.ID, a2a.TaskStateInputRequired, 5*time.Second)
}

func TestConcurrentFirstMessagesBindOneWorkspace(t *testing.T) {
	// First messages racing into a new context with different cwds: the
	// workspace the context ran in is the one bound, in memory and in the
	// store alike (the store binding is what counts once it is evicted).
	root, a, b := workspaceDirs(t)
	e := newTestEnv(t, Config{Backend: &cwdBackend{}, Workspace: NewWorkspace(root, []string{root})})
	cwds := []string{a, b, a, b, a, b, a, b, a, b, a, b, a, b, a, b}
	for i := 0; i < 30; i++ {
		ctxID := fmt.Sprint("race-", i)
		var wg sync.WaitGroup
		res := make([]a2a.Task, len(cwds))
		for j, cwd := range cwds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res[j] = e.send("", sendReq(withCwd(inContext(msg("x"), ctxID), cwd)))
			}()
		}
		wg.Wait()
		ran := map[string]bool{}
		for j, cwd := range cwds {
			if res[j].Status.State == a2a.TaskStateInputRequired {
				ran[cwd] = true
			}
		}
		if len(ran) != 1 {
			t.Errorf("%s: turns ran in %d different workspaces of one context", ctxID, len(ran))
			continue
		}
		var winner string
		for cwd := range ran {
			winner = cwd
		}
		rec, err := e.st.GetContext(t.Context(), "", ctxID)
		if err != nil {
			t.Fatalf("%s: stored context: %v", ctxID, err)
		}
		if rec.Cwd != winner {
			t.Errorf("%s: turns ran in %s but the store binds the context to %s", ctxID, filepath.Base(winner), filepath.Base(rec.Cwd))
		}
		// Once evicted, the store binding is what counts.
		e.hub.contexts.evictIdle(time.Now().Add(time.Hour))
		got := e.send("", sendReq(withCwd(inContext(msg("again"), ctxID), winner)))
		if got.Status.State != a2a.TaskStateInputRequired {
			t.Errorf("%s: after eviction the context rejects the workspace it ran in: %q", ctxID, statusText(got))
		}
	}
}

func TestIdleTimeoutReachesRunningJanitor(t *testing.T) {
	// The hub's janitor starts before any service sets the idle timeout; a
	// short configured timeout must still apply promptly, not after the
	// janitor's first tick computed from the 1h default (one minute).
	st := newStore(t)
	hub, err := NewHub(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hub.Close() })
	time.Sleep(50 * time.Millisecond) // sleep: lets the janitor reach its first tick; shorter weakens, never flakes
	svc := NewService(hub, Config{IdleTimeout: 20 * time.Millisecond})
	if _, err := svc.SendMessage(context.Background(), Call{}, sendReq(inContext(msg("x"), "idle"))); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for hub.LiveContexts() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("context with a 20ms idle timeout still live after 3s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

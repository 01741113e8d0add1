package backends

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/backend"
)

// Regression tests (TURN-3): a program that stops reading its stdin must not
// pin a turn. Writes of the turn line (which carries the whole message) and
// of the per-context cancel line are bounded by the turn's context, timeout
// and grace period; the stuck process group is then terminated (SIGTERM,
// then SIGKILL) and the turn ends.

// deafScript writes its process group (its parent, the supervisor, leads
// it: OPS-7) to a file in its cwd, never reads stdin, starts
// a child in its group and ignores SIGTERM, so only SIGKILL of the group
// ends it. With hello set it first prints a text event.
func deafScript(hello bool) string {
	s := `trap '' TERM; echo $PPID > pid.tmp && mv pid.tmp pid; sleep 300 & `
	if hello {
		s += `echo '{"v":1,"type":"text","text":"hi"}'; `
	}
	return s + `while :; do sleep 1; done`
}

// waitPID reads the pid file the script writes and makes sure the group is
// killed when the test ends, even if the backend hung.
func waitPID(t *testing.T, dir string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(dir, "pid"))
		if err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatal("the agent did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func runAsync(e *Exec, ctx context.Context, req *backend.TurnRequest, rec *recorder) <-chan error {
	done := make(chan error, 1)
	go func() { done <- e.RunTurn(ctx, req, rec.emit) }()
	return done
}

func waitTurn(t *testing.T, done <-chan error, within time.Duration) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(within):
		t.Fatalf("RunTurn still blocked %v later (agent does not read stdin)", within)
		return nil
	}
}

// canceledAndGone checks a canceled turn: RunTurn returns context.Canceled
// within 3s, the process group is gone and the session holds no process.
func canceledAndGone(t *testing.T, done <-chan error, pid int, req *backend.TurnRequest) {
	t.Helper()
	if err := waitTurn(t, done, 3*time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("cancel: %v", err)
	}
	groupGone(t, pid)
	if req.Session.Value != nil {
		t.Error("the session still holds the killed process")
	}
}

// TestExecStdinNotReadCancel: a 1 MiB message to an agent that never reads
// stdin, then cancel. RunTurn returns context.Canceled within a few seconds
// and the process group is gone, in both modes.
func TestExecStdinNotReadCancel(t *testing.T) {
	for _, mode := range []string{ModePerContext, ModePerTurn} {
		t.Run(mode, func(t *testing.T) {
			e := &Exec{Argv: []string{"bash", "-c", deafScript(false)}, Mode: mode, GracePeriod: 200 * time.Millisecond}
			req := turnReq(t, strings.Repeat("x", 1<<20))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := runAsync(e, ctx, req, &recorder{})
			pid := waitPID(t, req.Cwd)
			time.Sleep(100 * time.Millisecond) // sleep: lets the write block on the full pipe; shorter weakens, never flakes
			cancel()
			canceledAndGone(t, done, pid, req)
		})
	}
}

// TestExecStdinNotReadTimeout: same, ended by the turn timeout instead: a
// transient failure with the usual message.
func TestExecStdinNotReadTimeout(t *testing.T) {
	e := &Exec{Argv: []string{"bash", "-c", deafScript(false)}, Mode: ModePerContext, GracePeriod: 200 * time.Millisecond, Timeout: 500 * time.Millisecond}
	req := turnReq(t, strings.Repeat("x", 1<<20))
	done := runAsync(e, context.Background(), req, &recorder{})
	pid := waitPID(t, req.Cwd)
	err := waitTurn(t, done, 3*time.Second)
	var te *backend.TurnError
	if !errors.As(err, &te) || te.Kind != backend.ErrorKindTransient || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("timeout: %v", err)
	}
	groupGone(t, pid)
}

// TestExecCancelLineNotRead: per context, the turn line fits in the pipe but
// leaves no room for the cancel line; the agent never reads. The cancel
// write is bounded by the grace period, then the group is killed.
func TestExecCancelLineNotRead(t *testing.T) {
	e := &Exec{Argv: []string{"bash", "-c", deafScript(true)}, Mode: ModePerContext, GracePeriod: 200 * time.Millisecond}
	req := turnReq(t, "")
	// Size the turn line to 64 KiB - 10 bytes (the default pipe capacity):
	// the write completes, the (atomic, < PIPE_BUF) cancel line cannot.
	base, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	req.Prompt = strings.Repeat("x", 65536-10-len(base)-1)
	if b, _ := json.Marshal(req); len(b)+1 != 65536-10 {
		t.Fatalf("turn line is %d bytes", len(b)+1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{}
	done := runAsync(e, ctx, req, rec)
	pid := waitPID(t, req.Cwd)
	deadline := time.Now().Add(5 * time.Second)
	for rec.text() == "" { // the loop runs: the turn line was written
		if time.Now().After(deadline) {
			t.Fatal("no output from the agent")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	canceledAndGone(t, done, pid, req)
}

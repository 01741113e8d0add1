//go:build linux

package tests

// TTY behaviour of `caddy a2a call` (CLI-1): on a terminal
// the spinner, tool progress and the summary go to stderr; piped, none of
// it appears. Ctrl-C on a terminal asks once whether to cancel the task;
// --cancel-on-interrupt cancels without asking. Pseudo-terminals come from
// /dev/ptmx through golang.org/x/sys/unix.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// clientPTY is one pseudo-terminal: the test reads and writes the master,
// the child gets the slave.
type clientPTY struct {
	master, slave *os.File
	mu            sync.Mutex
	buf           bytes.Buffer
	done          chan struct{}
}

func clientOpenPTY(t *testing.T) *clientPTY {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pts: %v", err)
	}
	p := &clientPTY{master: m, slave: s, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		b := make([]byte, 4096)
		for {
			n, err := m.Read(b)
			p.mu.Lock()
			p.buf.Write(b[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { m.Close(); s.Close() })
	return p
}

func (p *clientPTY) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.String()
}

// waitFor polls until the output matches or the timeout passes.
func (p *clientPTY) waitFor(t *testing.T, what string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if strings.Contains(p.String(), what) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("terminal never showed %q; got %q", what, p.String())
}

// clientTTYCommand runs caddy a2a with stdout/stderr (and stdin when in is
// non-nil) on pseudo-terminals.
func clientTTYCommand(t *testing.T, ctx context.Context, out, errp, in *clientPTY, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, harness.Binary(t), append([]string{"a2a"}, args...)...)
	cmd.Env = harness.Env(t.TempDir(), "TERM=xterm", "NO_COLOR=")
	cmd.Stdout, cmd.Stderr = out.slave, errp.slave
	if in != nil {
		cmd.Stdin = in.slave
	}
	return cmd
}

var (
	spinnerRE = regexp.MustCompile(`\r[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] `)
	ansiRE    = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)
)

func TestClientTTY(t *testing.T) {
	t.Parallel()
	gw := harness.StartGateway(t, "a2a {\n\tcard {\n\t\tname tty\n\t}\n\tbackend echo {\n\t\tchunks 6\n\t\tdelay 150ms\n\t}\n}")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	out, errp := clientOpenPTY(t), clientOpenPTY(t)
	cmd := clientTTYCommand(t, ctx, out, errp, nil, "call", gw.URL, "terminal test")
	if err := cmd.Run(); err != nil {
		t.Fatalf("call on a TTY: %v\nstderr: %q", err, errp.String())
	}
	out.waitFor(t, "Echo: terminal test", 5*time.Second)
	errp.waitFor(t, "input-required", 5*time.Second)
	stderr := ansiRE.ReplaceAllString(errp.String(), "")
	if !strings.Contains(errp.String(), "\x1b[") {
		t.Fatalf("no ANSI styling on the stderr terminal: %q", errp.String())
	}
	if !spinnerRE.MatchString(stderr) {
		t.Fatalf("no spinner on the stderr terminal: %q", stderr)
	}
	if !strings.Contains(stderr, "⚙ echo") {
		t.Fatalf("no tool progress line on the stderr terminal: %q", stderr)
	}
	if !regexp.MustCompile(`input-required · task [0-9a-f-]{36} · context [0-9a-f-]{36} · tokens \d+ in / \d+ out`).MatchString(stderr) {
		t.Fatalf("no summary line with state, task, context and tokens: %q", stderr)
	}
	if strings.ContainsAny(out.String(), "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏⚙") {
		t.Fatalf("decoration leaked to stdout: %q", out.String())
	}

	// The same call piped: no spinner, no progress, no decoration.
	r := clientRun(t, "", nil, "call", gw.URL, "terminal test")
	r.wantCode(t, 0)
	if spinnerRE.MatchString(r.Stderr) || strings.ContainsAny(r.Stderr+r.Stdout, "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏⚙·\x1b") || r.Stdout != "Echo: terminal test\n" {
		t.Fatalf("piped output is decorated: stdout %q stderr %q", r.Stdout, r.Stderr)
	}
}

// TestClientInterrupt checks Ctrl-C: on a TTY the client asks and cancels
// on "y"; with --cancel-on-interrupt (piped) it cancels without asking.
func TestClientInterrupt(t *testing.T) {
	t.Parallel()
	gw := harness.StartGateway(t, "a2a {\n\tcard {\n\t\tname slow\n\t}\n\tbackend echo {\n\t\tchunks 60\n\t\tdelay 150ms\n\t}\n}")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	taskOf := func(t *testing.T, before map[string]bool) string {
		t.Helper()
		for i := 0; i < 100; i++ {
			r := clientRun(t, "", nil, "task", "list", "--json", "--status", "working", gw.URL)
			var l a2a.ListTasksResponse
			if json.Unmarshal([]byte(r.Stdout), &l) == nil {
				for _, tk := range l.Tasks {
					if !before[tk.ID] {
						return tk.ID
					}
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatal("the call never created a working task")
		return ""
	}
	stateOf := func(t *testing.T, id string) a2a.TaskState {
		r := clientRun(t, "", nil, "task", "get", "--json", gw.URL, id)
		r.wantCode(t, 0)
		var tk a2a.Task
		if err := json.Unmarshal([]byte(r.Stdout), &tk); err != nil {
			t.Fatal(err)
		}
		return tk.Status.State
	}

	t.Run("tty prompt", func(t *testing.T) {
		out, errp, in := clientOpenPTY(t), clientOpenPTY(t), clientOpenPTY(t)
		cmd := clientTTYCommand(t, ctx, out, errp, in, "call", gw.URL, "interrupt me")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		id := taskOf(t, nil)
		out.waitFor(t, "Echo", 10*time.Second)
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		errp.waitFor(t, "Cancel task "+id+" on the agent? [y/N]", 10*time.Second)
		if _, err := in.master.Write([]byte("y\n")); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("after answering y: %v, want exit 1; stderr %q", err, errp.String())
		}
		errp.waitFor(t, "caddy a2a: interrupted; task "+id+" is canceled", 5*time.Second)
		if st := stateOf(t, id); st != a2a.TaskStateCanceled {
			t.Fatalf("task state %s, want canceled", st)
		}
	})

	t.Run("cancel-on-interrupt", func(t *testing.T) {
		before := map[string]bool{}
		r := clientRun(t, "", nil, "task", "list", "--json", gw.URL)
		var l a2a.ListTasksResponse
		_ = json.Unmarshal([]byte(r.Stdout), &l)
		for _, tk := range l.Tasks {
			before[tk.ID] = true
		}
		cmd := exec.CommandContext(ctx, harness.Binary(t), "a2a", "call", "--cancel-on-interrupt", gw.URL, "interrupt me too")
		cmd.Env = harness.Env(t.TempDir())
		var stderr strings.Builder
		var stdout harness.SyncBuffer
		cmd.Stderr, cmd.Stdout = &stderr, &stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		id := taskOf(t, before)
		// The client prints the turn's text once it follows the task.
		if !waitFor(t, 10*time.Second, func() bool { return strings.Contains(stdout.String(), "Echo") }) {
			t.Fatalf("the client never printed the turn's text; stdout %q", stdout.String())
		}
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || strings.Contains(stderr.String(), "[y/N]") {
			t.Fatalf("--cancel-on-interrupt: %v stderr %q", err, stderr.String())
		}
		if st := stateOf(t, id); st != a2a.TaskStateCanceled {
			t.Fatalf("task state %s, want canceled", st)
		}
	})
}

package tests

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// stdioCaddyfile is a site whose echo turns take 6 × the delay (%[3]s),
// long enough to cancel one; its port is never listened on in stdio mode.
const stdioCaddyfile = `{
	admin off
	persist_config off
	grace_period 1s
	a2a {
		data_dir %[1]s/data
		shutdown_timeout 1s
	}
}

http://127.0.0.1:%[2]d {
	a2a {
		backend echo {
			chunks 6
			delay %[3]s
		}
		card {
			name stdio-e2e
		}
	}
}
`

// stdioProc is a running `caddy a2a stdio`.
type stdioProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // stdout lines, in order
	mu     sync.Mutex
	all    []string // every stdout line
	stderr *harness.SyncBuffer
	exited chan struct{}
	err    error // the exit error, once exited
}

// startStdio runs `caddy a2a stdio --config <dir>/Caddyfile args…`.
func startStdio(t *testing.T, dir string, args ...string) *stdioProc {
	t.Helper()
	cmd := exec.Command(harness.Binary(t), append([]string{"a2a", "stdio", "--config", filepath.Join(dir, "Caddyfile")}, args...)...)
	cmd.Dir = dir
	cmd.Env = harness.Env(dir)
	p := &stdioProc{t: t, cmd: cmd, lines: make(chan string, 10000), stderr: &harness.SyncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.all = append(p.all, sc.Text())
			p.mu.Unlock()
			p.lines <- sc.Text()
		}
	}()
	go func() {
		<-readDone // Wait closes the pipe: read it all first
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("stderr of caddy a2a stdio:\n%s", p.stderr.String())
		}
	})
	return p
}

// send writes one request line.
func (p *stdioProc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("writing to stdin: %v", err)
	}
}

// stdioReply is one stdout line.
type stdioReply struct {
	rpcResponse
	Final bool `json:"final"`
}

// next returns the next stdout line, decoded.
func (p *stdioProc) next() stdioReply {
	p.t.Helper()
	select {
	case l := <-p.lines:
		var r stdioReply
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			p.t.Fatalf("stdout line is not JSON: %q", l)
		}
		return r
	case <-p.exited:
		p.t.Fatalf("caddy a2a stdio exited (%v) while a line was awaited", p.err)
	case <-time.After(30 * time.Second):
		p.t.Fatal("no stdout line within 30s")
	}
	return stdioReply{}
}

// nextFor returns the next line with the given id, collecting the other
// lines it skips into skipped.
func (p *stdioProc) nextFor(id string, skipped *[]stdioReply) stdioReply {
	p.t.Helper()
	for {
		r := p.next()
		if string(r.ID) == id {
			return r
		}
		if skipped != nil {
			*skipped = append(*skipped, r)
		}
	}
}

// closeAndWait closes stdin and waits for the exit; it returns the exit code.
func (p *stdioProc) closeAndWait(within time.Duration) int {
	p.t.Helper()
	_ = p.stdin.Close()
	return p.wait(within)
}

func (p *stdioProc) wait(within time.Duration) int {
	p.t.Helper()
	select {
	case <-p.exited:
	case <-time.After(within):
		p.t.Fatalf("caddy a2a stdio did not exit within %v", within)
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	if p.err != nil {
		p.t.Fatalf("wait: %v", p.err)
	}
	return 0
}

// wantCleanExit fails unless code (what wait or closeAndWait returned) is
// 0 and every stdout line is a JSON-RPC 2.0 object; what says when the
// exit came (" after EOF"), for the message.
func (p *stdioProc) wantCleanExit(code int, what string) {
	p.t.Helper()
	if code != 0 {
		p.t.Fatalf("exit code %d%s, want 0", code, what)
	}
	p.checkAllJSON()
}

// checkAllJSON fails unless every stdout line is a JSON-RPC 2.0 object.
func (p *stdioProc) checkAllJSON() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.all) == 0 {
		p.t.Fatal("nothing on stdout")
	}
	for _, l := range p.all {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil || string(m["jsonrpc"]) != `"2.0"` {
			p.t.Fatalf("stdout holds a line that is not a JSON-RPC 2.0 object: %q", l)
		}
	}
}

func stdioSend(id any, method, text string) string {
	idJSON, _ := json.Marshal(id)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":{"message":{"messageId":"m-%v-%d","role":"ROLE_USER","parts":[{"text":%q}]}}}`,
		idJSON, method, id, time.Now().UnixNano(), text)
}

func stdioTask(t *testing.T, r stdioReply) a2a.Task {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("error %d %s, want a task", r.Error.Code, r.Error.Message)
	}
	var res struct {
		Task *a2a.Task `json:"task"`
	}
	if json.Unmarshal(r.Result, &res) == nil && res.Task != nil {
		return *res.Task
	}
	var task a2a.Task
	if err := json.Unmarshal(r.Result, &task); err != nil || task.ID == "" {
		t.Fatalf("result is not a task: %s", r.Result)
	}
	return task
}

// streamEvent decodes a stream line's event.
func streamEvent(t *testing.T, r stdioReply) a2a.StreamResponse {
	t.Helper()
	var ev a2a.StreamResponse
	if r.Error != nil || json.Unmarshal(r.Result, &ev) != nil {
		t.Fatalf("stream line is not an event: %+v %s", r.Error, r.Result)
	}
	return ev
}

// writeStdioCaddyfile writes the test site's Caddyfile to dir, with the
// echo backend's chunk delay, and returns the site's port.
func writeStdioCaddyfile(t *testing.T, dir, delay string) int {
	t.Helper()
	port := harness.FreePort(t)
	if err := os.WriteFile(filepath.Join(dir, "Caddyfile"), fmt.Appendf(nil, stdioCaddyfile, dir, port, delay), 0o600); err != nil {
		t.Fatal(err)
	}
	return port
}

// XPORT-4: `caddy a2a stdio` serves the site's agent on stdin/stdout with
// no listener: SendMessage, GetTask, a stream with its events and final
// line, CancelTask of a running streamed task (the stream ends CANCELED),
// EOF → exit 0, nothing but JSON-RPC lines on stdout, logs on stderr, and
// the tasks persisted in the data_dir for the next run.
func TestStdioCarrier(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	port := writeStdioCaddyfile(t, dir, "400ms")
	p := startStdio(t, dir)

	p.send(stdioSend(1, a2a.MethodSendMessage, "hello stdio"))
	first := stdioTask(t, p.nextFor("1", nil))
	if first.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("SendMessage: state %s, want input-required", first.Status.State)
	}

	// Nothing listens: not on the site's port, and the process holds no
	// listening socket.
	if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
		t.Fatalf("the site's port %d is taken while stdio runs: %v", port, err)
	} else {
		_ = l.Close()
	}
	if runtime.GOOS == "linux" {
		if n := listeningSockets(t, p.cmd.Process.Pid); n > 0 {
			t.Fatalf("caddy a2a stdio holds %d listening TCP sockets, want none", n)
		}
	}

	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"get","method":"GetTask","params":{"id":%q}}`, first.ID))
	if got := stdioTask(t, p.nextFor(`"get"`, nil)); got.ID != first.ID || got.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("GetTask: %s %s, want %s input-required", got.ID, got.Status.State, first.ID)
	}

	// A stream: events with the request's id, then the final line.
	p.send(stdioSend(3, a2a.MethodSendStreamingMessage, "stream it"))
	var last a2a.StreamResponse
	events := 0
	for {
		r := p.nextFor("3", nil)
		if r.Final {
			break
		}
		last = streamEvent(t, r)
		events++
	}
	if events < 3 || last.StatusUpdate == nil || last.StatusUpdate.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("stream: %d events, last %+v; want several ending input-required", events, last)
	}

	// Cancel a running streamed task: its stream ends CANCELED, then final.
	p.send(stdioSend("slow", a2a.MethodSendStreamingMessage, "cancel me please"))
	opened := streamEvent(t, p.nextFor(`"slow"`, nil))
	if opened.Task == nil {
		t.Fatalf("first stream event %+v, want the task", opened)
	}
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"cancel","method":"CancelTask","params":{"id":%q}}`, opened.Task.ID))
	var state a2a.TaskState
	var canceled *a2a.Task
	final := false
	for !final || canceled == nil {
		r := p.next()
		switch string(r.ID) {
		case `"cancel"`:
			c := stdioTask(t, r)
			canceled = &c
		case `"slow"`:
			if r.Final {
				final = true
				continue
			}
			if ev := streamEvent(t, r); ev.StatusUpdate != nil {
				state = ev.StatusUpdate.Status.State
			}
		default:
			t.Fatalf("unexpected line id %s", r.ID)
		}
	}
	if canceled.Status.State != a2a.TaskStateCanceled || state != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask answered %s, the stream ended %s; want both CANCELED", canceled.Status.State, state)
	}

	p.wantCleanExit(p.closeAndWait(30*time.Second), " after EOF")
	if !strings.Contains(p.stderr.String(), "serving A2A JSON-RPC on stdin/stdout") {
		t.Fatalf("stderr lacks the start log line:\n%s", p.stderr.String())
	}

	// A second run (naming the site) reads the first run's tasks.
	p2 := startStdio(t, dir, "--site", fmt.Sprintf("127.0.0.1:%d", port))
	p2.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":%q}}`, first.ID))
	again := stdioTask(t, p2.nextFor("1", nil))
	if again.ID != first.ID || again.Status.State != a2a.TaskStateInputRequired || len(again.History) < 2 {
		t.Fatalf("second run GetTask: %s %s with %d history messages, want the first run's task", again.ID, again.Status.State, len(again.History))
	}
	p2.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":%q}}`, canceled.ID))
	if c := stdioTask(t, p2.nextFor("2", nil)); c.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("second run: canceled task is %s", c.Status.State)
	}
	p2.wantCleanExit(p2.closeAndWait(30*time.Second), " after EOF (second run)")
}

// XPORT-4, OPS-3: at EOF a blocking SendMessage already read is still
// answered before the exit: its turn (~12s) outlasts the grace period
// (1s) and the shutdown drain (shutdown_timeout 1s), so the answer is the
// interrupted task, and the exit code is 0.
func TestStdioEOFAnswersPendingRequest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeStdioCaddyfile(t, dir, "2s")
	p := startStdio(t, dir)
	p.send(stdioSend(1, a2a.MethodSendMessage, "answer me after EOF"))
	_ = p.stdin.Close()
	r := p.nextFor("1", nil)
	task := stdioTask(t, r)
	if task.Status.State != a2a.TaskStateFailed {
		t.Fatalf("pending SendMessage after EOF: %s, want FAILED (interrupted by the drain)", task.Status.State)
	}
	p.wantCleanExit(p.wait(30*time.Second), "")
}

// XPORT-4, OPS-3: SIGTERM is a shutdown: the open stream ends (FAILED,
// interrupted) with its final line and the process exits 0.
func TestStdioSIGTERM(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeStdioCaddyfile(t, dir, "2s")
	p := startStdio(t, dir, "--principal", "orchestrator")
	p.send(stdioSend("s", a2a.MethodSendStreamingMessage, "interrupted by a signal"))
	if ev := streamEvent(t, p.nextFor(`"s"`, nil)); ev.Task == nil {
		t.Fatalf("first event %+v, want the task", ev)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var state a2a.TaskState
	for {
		r := p.nextFor(`"s"`, nil)
		if r.Final {
			break
		}
		if ev := streamEvent(t, r); ev.StatusUpdate != nil {
			state = ev.StatusUpdate.Status.State
		}
	}
	if state != a2a.TaskStateFailed {
		t.Fatalf("stream after SIGTERM ended %s, want FAILED", state)
	}
	p.wantCleanExit(p.wait(30*time.Second), " after SIGTERM")
	if !strings.Contains(p.stderr.String(), `"principal":"orchestrator"`) {
		t.Fatalf("the turn log does not name the --principal:\n%s", p.stderr.String())
	}
}

// listeningSockets counts the TCP sockets in LISTEN state that pid holds
// (Linux: its fds' socket inodes in /proc/net/tcp{,6}).
func listeningSockets(t *testing.T, pid int) int {
	t.Helper()
	listening := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) > 9 && fields[3] == "0A" {
				listening[fields[9]] = true
			}
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatalf("reading the process's fds: %v", err)
	}
	n := 0
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err != nil {
			continue
		}
		if inode, ok := strings.CutPrefix(target, "socket:["); ok && listening[strings.TrimSuffix(inode, "]")] {
			n++
		}
	}
	return n
}

// XPORT-4, PUSH-4: stdio runs the site's push engine: a task created over
// stdio with an inline push config is delivered to the webhook.
func TestStdioPush(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recv := newPushReceiver(t)
	cfg := fmt.Sprintf(`{
	admin off
	persist_config off
	a2a {
		data_dir %s/data
	}
}

http://127.0.0.1:%d {
	a2a {
		card {
			name stdio-push
		}
		push {
			queue local-file
			allow_private_networks 127.0.0.0/8
			timeout 2s
		}
	}
}
`, dir, harness.FreePort(t))
	if err := os.WriteFile(filepath.Join(dir, "Caddyfile"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startStdio(t, dir)
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"pm1","role":"ROLE_USER","parts":[{"text":"push me"}]},"configuration":{"taskPushNotificationConfig":{"url":%q,"token":"tok-stdio"}}}}`, recv.srv.URL+"/ok"))
	task := stdioTask(t, p.nextFor("1", nil))
	h := recv.waitHits(t, "/ok", 1, 15*time.Second)[0]
	su, _ := h.Body["statusUpdate"].(map[string]any)
	if su == nil || su["taskId"] != task.ID || h.Token != "tok-stdio" {
		t.Fatalf("push delivery %+v, want the stdio task %s with its token", h, task.ID)
	}
	p.wantCleanExit(p.closeAndWait(30*time.Second), "")
}

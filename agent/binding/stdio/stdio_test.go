package stdio

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/agenttest"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc"
)

// env is a Service over a real SQLite store with the echo backend, served
// by Serve on pipes.
type env struct {
	t       *testing.T
	hub     *agent.Hub
	svc     *agent.Service
	metrics *agent.Metrics
	in      *io.PipeWriter
	lines   chan string   // every output line
	done    chan struct{} // closed when Serve has returned
	err     error         // Serve's result, once done
	outEOF  chan struct{} // the output was closed after Serve returned
}

// newEnv starts Serve with opts over a fresh service whose echo backend
// has the given chunk delay.
func newEnv(t *testing.T, delay time.Duration, opts Options) *env {
	t.Helper()
	hub := agenttest.Hub(t)
	m, err := agent.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	svc := agent.NewService(hub, agent.Config{Backend: backend.EchoBackend{Chunks: 3, Delay: delay}, Metrics: m})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	e := &env{t: t, hub: hub, svc: svc, metrics: m, in: inW, lines: make(chan string, 1000), done: make(chan struct{}), outEOF: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			e.lines <- sc.Text()
		}
		close(e.outEOF)
	}()
	go func() {
		e.err = Serve(context.Background(), jsonrpc.NewDispatcher(agent.NewHandler(svc)), inR, outW, opts)
		_ = outW.Close()
		close(e.done)
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		// Turns still running (slow backends) are canceled, which ends
		// their requests.
		hub.SetDrainTimeout(0)
		go func() { _ = hub.Close() }()
		select {
		case <-e.done:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return at cleanup")
		}
	})
	return e
}

// send writes one input line.
func (e *env) send(line string) {
	e.t.Helper()
	if _, err := io.WriteString(e.in, line+"\n"); err != nil {
		e.t.Fatalf("writing a line: %v", err)
	}
}

// reply is one output line.
type reply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Final bool `json:"final"`
}

// next returns the next output line, decoded; it fails after 10s.
func (e *env) next() reply {
	e.t.Helper()
	select {
	case l := <-e.lines:
		var r reply
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			e.t.Fatalf("output line is not JSON: %q", l)
		}
		if r.JSONRPC != "2.0" {
			e.t.Fatalf("output line without jsonrpc 2.0: %q", l)
		}
		return r
	case <-time.After(10 * time.Second):
		e.t.Fatal("no output line within 10s")
	}
	return reply{}
}

// serveResult waits for Serve to return.
func (e *env) serveResult(within time.Duration) error {
	e.t.Helper()
	select {
	case <-e.done:
		return e.err
	case <-time.After(within):
		e.t.Fatalf("Serve did not return within %v", within)
	}
	return nil
}

func sendLine(id any, method, text string) string {
	idJSON, _ := json.Marshal(id)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":{"message":{"messageId":"m-%v","role":"ROLE_USER","parts":[{"text":%q}]}}}`, idJSON, method, id, text)
}

func taskOf(t *testing.T, r reply) a2a.Task {
	t.Helper()
	var res a2a.SendMessageResponse
	if err := json.Unmarshal(r.Result, &res); err != nil || res.Task == nil {
		t.Fatalf("result is not a task: %s (error %+v)", r.Result, r.Error)
	}
	return *res.Task
}

// XPORT-4: a unary request is answered by one line with its id, and is
// counted under the stdio binding label.
func TestStdioUnary(t *testing.T) {
	e := newEnv(t, 0, Options{Call: agent.Call{Principal: "alice"}})
	e.send(sendLine(1, a2a.MethodSendMessage, "hello"))
	r := e.next()
	if string(r.ID) != "1" || r.Error != nil {
		t.Fatalf("reply id %s error %+v, want id 1 and a result", r.ID, r.Error)
	}
	task := taskOf(t, r)
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("task state %s, want input-required (echo)", task.Status.State)
	}
	// The task belongs to the session's principal.
	e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"g","method":"GetTask","params":{"id":%q}}`, task.ID))
	if g := e.next(); string(g.ID) != `"g"` || g.Error != nil {
		t.Fatalf("GetTask: id %s error %+v", g.ID, g.Error)
	}
	if _, err := e.svc.GetTask(t.Context(), agent.Call{Principal: "bob", Version: "1.0"}, &a2a.GetTaskRequest{ID: task.ID}); err == nil {
		t.Fatal("another principal can read the stdio session's task")
	}
	if got := agenttest.Requests(t, e.metrics, agent.BindingStdio, a2a.MethodSendMessage, "ok"); got != 1 {
		t.Fatalf("caddy_a2a_requests_total{binding=stdio,method=SendMessage,outcome=ok} = %v, want 1", got)
	}
}

// XPORT-4: the events of a stream are responses with the request's id; the
// stream ends with a final line after the terminal-or-interrupted event.
func TestStdioStreamEndsWithFinalLine(t *testing.T) {
	e := newEnv(t, 0, Options{})
	e.send(sendLine("s1", a2a.MethodSendStreamingMessage, "stream me"))
	var events []a2a.StreamResponse
	for {
		r := e.next()
		if string(r.ID) != `"s1"` {
			t.Fatalf("stream line with id %s, want \"s1\"", r.ID)
		}
		if r.Final {
			if r.Result != nil || r.Error != nil {
				t.Fatalf("final line carries a result or error: %+v", r)
			}
			break
		}
		var ev a2a.StreamResponse
		if err := json.Unmarshal(r.Result, &ev); err != nil {
			t.Fatalf("event: %v (%s)", err, r.Result)
		}
		events = append(events, ev)
	}
	if len(events) < 3 || events[0].Task == nil {
		t.Fatalf("got %d events (first %+v), want a Task first and then updates", len(events), events)
	}
	last := events[len(events)-1]
	if last.StatusUpdate == nil || last.StatusUpdate.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("last event %+v, want a status update to input-required", last)
	}
}

// XPORT-4: a line that is not JSON gets a parse error, a JSON value that is
// not a request object an Invalid Request; both with a null id, and the
// session goes on.
func TestStdioBadLines(t *testing.T) {
	e := newEnv(t, 0, Options{})
	e.send(`{"jsonrpc":"2.0","id":1,`)
	if r := e.next(); r.Error == nil || r.Error.Code != a2a.CodeParseError || string(r.ID) != "null" {
		t.Fatalf("bad JSON: %+v id %s, want -32700 with id null", r.Error, r.ID)
	}
	e.send(`42`)
	if r := e.next(); r.Error == nil || r.Error.Code != a2a.CodeInvalidRequest || string(r.ID) != "null" {
		t.Fatalf("non-object: %+v id %s, want -32600 with id null", r.Error, r.ID)
	}
	e.send("   ") // blank lines are skipped
	e.send(`{"jsonrpc":"2.0","id":7,"method":"NoSuchMethod"}`)
	if r := e.next(); r.Error == nil || r.Error.Code != a2a.CodeMethodNotFound || string(r.ID) != "7" {
		t.Fatalf("unknown method: %+v id %s, want -32601 with id 7", r.Error, r.ID)
	}
}

// XPORT-4: a line over the limit is refused with Invalid Request and the
// next line is read normally.
func TestStdioOverlongLine(t *testing.T) {
	e := newEnv(t, 0, Options{MaxLineBytes: 1024})
	e.send(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"` + strings.Repeat("x", 200<<10) + `"}}`)
	r := e.next()
	if r.Error == nil || r.Error.Code != a2a.CodeInvalidRequest || !strings.Contains(r.Error.Message, "1024") {
		t.Fatalf("over-long line: %+v, want -32600 naming the limit", r.Error)
	}
	e.send(sendLine(2, a2a.MethodSendMessage, "after"))
	if r := e.next(); string(r.ID) != "2" || r.Error != nil {
		t.Fatalf("after the over-long line: id %s error %+v", r.ID, r.Error)
	}
	// A line of exactly the limit is read.
	pad := `{"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":"`
	tail := `"}}`
	e.send(pad + strings.Repeat("y", 1024-len(pad)-len(tail)) + tail)
	if r := e.next(); string(r.ID) != "3" || r.Error == nil || r.Error.Code == a2a.CodeInvalidRequest {
		t.Fatalf("line of exactly the limit: id %s error %+v, want it read (an answer for id 3 that is not Invalid Request)", r.ID, r.Error)
	}
}

// XPORT-4: at EOF the requests already read are still answered (a slow
// blocking SendMessage and an open stream) before Serve returns nil.
func TestStdioEOFDrains(t *testing.T) {
	e := newEnv(t, 100*time.Millisecond, Options{})
	e.send(sendLine(1, a2a.MethodSendMessage, "slow unary"))
	e.send(sendLine(2, a2a.MethodSendStreamingMessage, "slow stream"))
	// Close stdin at once: nothing has been answered yet.
	time.Sleep(20 * time.Millisecond) // sleep: lets Serve read both lines before EOF; shorter weakens, never flakes
	_ = e.in.Close()
	if err := e.serveResult(10 * time.Second); err != nil {
		t.Fatalf("Serve after EOF: %v, want nil", err)
	}
	<-e.outEOF
	var unary, final bool
	for len(e.lines) > 0 {
		l := <-e.lines
		var r reply
		_ = json.Unmarshal([]byte(l), &r)
		switch {
		case string(r.ID) == "1":
			unary = taskOf(t, r).Status.State == a2a.TaskStateInputRequired
		case string(r.ID) == "2" && r.Final:
			final = true
		}
	}
	if !unary || !final {
		t.Fatalf("after EOF: unary answered=%v, stream final line=%v; want both", unary, final)
	}
}

// XPORT-4, OPS-3: when the grace is over, Shutdown stops the service; the
// open stream ends with the interrupted task and its final line.
func TestStdioGraceThenShutdown(t *testing.T) {
	var e *env
	shut := make(chan struct{})
	e = newEnv(t, time.Hour, Options{Grace: 100 * time.Millisecond, Shutdown: func() {
		close(shut)
		e.hub.SetDrainTimeout(0)
		_ = e.hub.Close()
	}})
	e.send(sendLine("long", a2a.MethodSendStreamingMessage, "never ends"))
	if r := e.next(); r.Error != nil {
		t.Fatalf("stream open: %+v", r.Error)
	}
	_ = e.in.Close()
	start := time.Now()
	if err := e.serveResult(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case <-shut:
	default:
		t.Fatal("Shutdown was not called")
	}
	if took := time.Since(start); took < 90*time.Millisecond {
		t.Fatalf("Serve returned after %v, before the grace period", took)
	}
	<-e.outEOF
	var state a2a.TaskState
	var final bool
	for len(e.lines) > 0 {
		var r reply
		_ = json.Unmarshal([]byte(<-e.lines), &r)
		if r.Final {
			final = true
			continue
		}
		var ev a2a.StreamResponse
		_ = json.Unmarshal(r.Result, &ev)
		if ev.StatusUpdate != nil {
			state = ev.StatusUpdate.Status.State
		}
	}
	if state != a2a.TaskStateFailed || !final {
		t.Fatalf("stream after shutdown: last state %s, final line %v; want FAILED and a final line", state, final)
	}
}

// XPORT-4: while MaxInFlight requests run, reading pauses: the next line
// runs once the open stream has ended, and is answered then, not refused.
func TestStdioInFlightBound(t *testing.T) {
	e := newEnv(t, 100*time.Millisecond, Options{MaxInFlight: 1})
	e.send(sendLine("a", a2a.MethodSendStreamingMessage, "holds the slot"))
	if r := e.next(); string(r.ID) != `"a"` || r.Error != nil {
		t.Fatalf("first stream: %s %+v", r.ID, r.Error)
	}
	e.send(`{"jsonrpc":"2.0","id":"b","method":"GetTask","params":{"id":"x"}}`)
	final := false
	for {
		r := e.next()
		if string(r.ID) == `"a"` {
			final = final || r.Final
			continue
		}
		if string(r.ID) != `"b"` || r.Error == nil || r.Error.Code != a2a.CodeTaskNotFound {
			t.Fatalf("second request: id %s error %+v, want TaskNotFound for b", r.ID, r.Error)
		}
		if !final {
			t.Fatal("the second request was answered while the first held the only slot")
		}
		break
	}
}

// readLine keeps lines up to the limit, trims them and reports longer ones.
func TestReadLine(t *testing.T) {
	in := "short\r\n" + strings.Repeat("z", 100) + "\n" + "  spaced  \n" + "last"
	br := bufio.NewReaderSize(strings.NewReader(in), 16)
	want := []struct {
		line    string
		tooLong bool
	}{{"short", false}, {"", true}, {"spaced", false}, {"last", false}}
	for i, w := range want {
		b, tooLong, err := readLine(br, 10)
		if string(b) != w.line || tooLong != w.tooLong {
			t.Fatalf("line %d: %q tooLong=%v, want %q %v", i, b, tooLong, w.line, w.tooLong)
		}
		if i == len(want)-1 {
			if err != io.EOF {
				t.Fatalf("last line: err %v, want EOF", err)
			}
		} else if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
	}
}

package tests

// End-to-end protocol tests over the built binary (RPC-1…RPC-13): a real
// Caddyfile with the global `a2a { data_dir … }` block and a site running
// the echo backend, spoken to over plain HTTP.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// protoFastEcho answers at once; protoSlowEcho runs about 1.5 s (5 chunks,
// 300 ms apart) so that it can be canceled or subscribed to while it runs.
const (
	protoFastEcho = "backend echo"
	protoSlowEcho = "backend echo {\n\t\t\tdelay 300ms\n\t\t\tchunks 5\n\t\t}"
)

// protoGateway is one caddy process with an explicit data directory, so
// that durability tests can stop, kill and restart it on the same data;
// t is the current (sub)test, for failures.
type protoGateway struct {
	*harness.Gateway
	t      *testing.T
	parent *testing.T
}

// protoStart starts a gateway running backend (a line of the site's a2a
// block, e.g. "backend echo") on a new data directory.
func protoStart(t *testing.T, backend string) *protoGateway {
	t.Helper()
	return protoStartWith(t, protoOpts{backend: backend})
}

// protoOpts configure protoStartWith.
type protoOpts struct {
	backend string
	dataDir string        // "" = a new temp dir
	grace   time.Duration // Caddy's grace_period; 0 = 1s
}

func protoStartWith(t *testing.T, o protoOpts) *protoGateway {
	t.Helper()
	dataDir := o.dataDir
	if dataDir == "" {
		dataDir = "{{DIR}}/data"
	}
	g := &protoGateway{t: t, parent: t}
	g.Gateway = harness.StartGatewayWith(t, protoSite(o.backend), harness.Options{
		Global: "a2a {\n\tdata_dir " + dataDir + "\n}", GracePeriod: o.grace, StartTimeout: 20 * time.Second})
	t.Cleanup(g.stop) // before the harness's own stop: a slow stop is an error
	return g
}

// protoSite is the site's a2a block with backend.
func protoSite(backend string) string {
	return `a2a {
		` + echoCard("proto-agent", "Echo agent for the protocol end-to-end tests.") + `
		` + backend + `
	}`
}

// echoCard is the card block of an echo agent named name (version 1.0.0,
// one skill "echo", text/plain output) with description.
func echoCard(name, description string) string {
	return `card {
			name ` + name + `
			description "` + description + `"
			version 1.0.0
			skill echo {
				name Echo
				description "Echoes the prompt back."
				tags echo test
			}
			output_modes text/plain
		}`
}

// writeConfig rewrites the Caddyfile with backend; it applies at the next
// start.
func (g *protoGateway) writeConfig(backend string) { g.Rewrite(protoSite(backend)) }

// start starts the stopped or killed process again, waiting for /health.
func (g *protoGateway) start() {
	g.t = g.parent
	g.Start()
}

// stop sends SIGINT (graceful) and waits; SIGKILL after 15s.
func (g *protoGateway) stop() {
	if !g.StopWithin(15 * time.Second) {
		g.parent.Errorf("caddy did not stop within 15s of SIGINT")
	}
}

// kill simulates a crash: SIGKILL to the process group.
func (g *protoGateway) kill() { g.Kill() }

// ---------------------------------------------------------------- client

type protoRPCError struct {
	Code    int              `json:"code"`
	Message string           `json:"message"`
	Data    []map[string]any `json:"data"`
}

type protoReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *protoRPCError  `json:"error"`
}

type protoMessage struct {
	MessageID string           `json:"messageId"`
	ContextID string           `json:"contextId,omitempty"`
	TaskID    string           `json:"taskId,omitempty"`
	Role      string           `json:"role"`
	Parts     []map[string]any `json:"parts"`
}

type protoStatus struct {
	State     string        `json:"state"`
	Message   *protoMessage `json:"message"`
	Timestamp string        `json:"timestamp"`
}

type protoTask struct {
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    protoStatus    `json:"status"`
	History   []protoMessage `json:"history"`
}

type protoEvent struct {
	Task         *protoTask `json:"task"`
	StatusUpdate *struct {
		TaskID    string         `json:"taskId"`
		ContextID string         `json:"contextId"`
		Status    protoStatus    `json:"status"`
		Metadata  map[string]any `json:"metadata"`
	} `json:"statusUpdate"`
	ArtifactUpdate json.RawMessage `json:"artifactUpdate"`
	Message        *protoMessage   `json:"message"`
}

func (ev protoEvent) state() string {
	switch {
	case ev.Task != nil:
		return ev.Task.Status.State
	case ev.StatusUpdate != nil:
		return ev.StatusUpdate.Status.State
	}
	return ""
}

func (m *protoMessage) text() string {
	if m == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range m.Parts {
		if s, ok := p["text"].(string); ok {
			b.WriteString(s)
		}
	}
	return b.String()
}

var protoSeq struct {
	sync.Mutex
	n int
}

func protoID() string {
	protoSeq.Lock()
	defer protoSeq.Unlock()
	protoSeq.n++
	return fmt.Sprintf("e2e-%d-%d", time.Now().UnixNano(), protoSeq.n)
}

func protoMsg(text, contextID, taskID string) map[string]any {
	m := map[string]any{"messageId": protoID(), "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
	if contextID != "" {
		m["contextId"] = contextID
	}
	if taskID != "" {
		m["taskId"] = taskID
	}
	return m
}

func (g *protoGateway) request(method, path string, body []byte, hdr map[string]string) (*http.Response, []byte) {
	g.t.Helper()
	r := harness.At(g.URL+path).Do(g.t, method, string(body), harness.Headers(hdr))
	return r.Response, r.Raw
}

func (g *protoGateway) rpc(method string, params any) protoReply {
	g.t.Helper()
	resp, b := g.request("POST", "/", []byte(harness.Envelope(method, params)), nil)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		g.t.Fatalf("%s: HTTP %d %q %s", method, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var rep protoReply
	if err := json.Unmarshal(b, &rep); err != nil || rep.JSONRPC != "2.0" || string(rep.ID) != "1" {
		g.t.Fatalf("%s: not a JSON-RPC response for id 1: %v %s", method, err, b)
	}
	return rep
}

func (g *protoGateway) result(method string, params, out any) {
	g.t.Helper()
	rep := g.rpc(method, params)
	if rep.Error != nil {
		g.t.Fatalf("%s: error %d %q", method, rep.Error.Code, rep.Error.Message)
	}
	if err := json.Unmarshal(rep.Result, out); err != nil {
		g.t.Fatalf("%s: %v: %s", method, err, rep.Result)
	}
}

func (g *protoGateway) rpcErr(method string, params any, code int, reason string) {
	g.t.Helper()
	rep := g.rpc(method, params)
	if rep.Error == nil || rep.Error.Code != code {
		g.t.Errorf("%s %v: %+v %s, want error %d", method, params, rep.Error, rep.Result, code)
		return
	}
	if len(rep.Error.Data) == 0 || rep.Error.Data[0]["@type"] != "type.googleapis.com/google.rpc.ErrorInfo" ||
		rep.Error.Data[0]["reason"] != reason || rep.Error.Data[0]["domain"] != "a2a-protocol.org" {
		g.t.Errorf("%s: error data %v, want an ErrorInfo with reason %s", method, rep.Error.Data, reason)
	}
}

func (g *protoGateway) send(params map[string]any) protoTask {
	g.t.Helper()
	var res struct {
		Task *protoTask `json:"task"`
	}
	g.result("SendMessage", params, &res)
	if res.Task == nil {
		g.t.Fatal("SendMessage: no task in the result")
	}
	return *res.Task
}

func (g *protoGateway) getTask(id string) protoTask {
	g.t.Helper()
	var task protoTask
	g.result("GetTask", map[string]any{"id": id}, &task)
	return task
}

func (g *protoGateway) waitState(id, state string, d time.Duration) protoTask {
	g.t.Helper()
	var task protoTask
	b, _ := json.Marshal(harness.WaitState(g.t, g.URL, id, state, d))
	if err := json.Unmarshal(b, &task); err != nil {
		g.t.Fatalf("GetTask %s: %v: %s", id, err, b)
	}
	return task
}

// protoSSE is an open event stream of StreamResponse events.
type protoSSE struct {
	*harness.Stream
	t   *testing.T
	rpc bool
}

// stream opens an HTTP+JSON stream (a REST route).
func (g *protoGateway) stream(method, path string, body []byte) *protoSSE {
	g.t.Helper()
	return &protoSSE{Stream: harness.At(g.URL+path).StreamHTTP(g.t, method, string(body)), t: g.t}
}

// rpcStream opens a JSON-RPC stream with id "s1".
func (g *protoGateway) rpcStream(method string, params any) *protoSSE {
	g.t.Helper()
	return &protoSSE{Stream: harness.At(g.URL).Stream(g.t, method, params, harness.ID("s1")), t: g.t, rpc: true}
}

func (s *protoSSE) close() { s.Close() }

// streamTask starts SendStreamingMessage of a new message with text and
// returns the stream and its first event, which must be the Task.
func (g *protoGateway) streamTask(text string) (*protoSSE, *protoTask) {
	g.t.Helper()
	s := g.rpcStream("SendStreamingMessage", map[string]any{"message": protoMsg(text, "", "")})
	ev, ok := s.next()
	if !ok || ev.Task == nil {
		g.t.Fatal("no Task event")
	}
	return s, ev.Task
}

// decode checks one event (a JSON-RPC event answers id "s1" without an
// error) and decodes its StreamResponse.
func (s *protoSSE) decode(ev harness.Event) protoEvent {
	s.t.Helper()
	if s.rpc && (string(ev.ID) != `"s1"` || ev.Error != nil) {
		s.t.Fatalf("stream event: id %s error %+v", ev.ID, ev.Error)
	}
	var out protoEvent
	if err := json.Unmarshal(ev.Data, &out); err != nil {
		s.t.Fatalf("event is not a StreamResponse: %v: %s", err, ev.Data)
	}
	return out
}

// next returns the next event, or false at the end of the stream.
func (s *protoSSE) next() (protoEvent, bool) {
	s.t.Helper()
	ev, ok := s.NextEvent(60 * time.Second)
	if !ok {
		return protoEvent{}, false
	}
	return s.decode(ev), true
}

// rest reads the stream to its end; it fails the test when the stream has
// not ended within d.
func (s *protoSSE) rest(d time.Duration) []protoEvent {
	s.t.Helper()
	var out []protoEvent
	for _, ev := range s.RestEvents(d) {
		out = append(out, s.decode(ev))
	}
	return out
}

func (s *protoSSE) all() []protoEvent { return s.rest(60 * time.Second) }

func protoStates(evs []protoEvent) string {
	var s []string
	for _, ev := range evs {
		s = append(s, strings.TrimPrefix(ev.state(), "TASK_STATE_"))
	}
	return strings.Join(s, ",")
}

// ---------------------------------------------------------------- tests

func TestProtocolEndToEnd(t *testing.T) {
	t.Parallel()
	g := protoStart(t, protoFastEcho)

	var first protoTask
	t.Run("SendMessage", func(t *testing.T) {
		g.t = t
		first = g.send(map[string]any{"message": protoMsg("hello e2e", "", "")})
		if first.Status.State != "TASK_STATE_INPUT_REQUIRED" || first.Status.Message.text() != "Echo: hello e2e" {
			t.Errorf("SendMessage: %s %q", first.Status.State, first.Status.Message.text())
		}
		if len(first.History) != 2 || first.History[0].Role != "ROLE_USER" || first.History[1].Role != "ROLE_AGENT" {
			t.Errorf("history %+v", first.History)
		}
		if first.ContextID == "" || first.Status.Timestamp == "" {
			t.Errorf("task lacks contextId or timestamp: %+v", first)
		}
	})
	if first.ID == "" {
		t.Fatal("no task")
	}

	t.Run("SendStreamingMessage", func(t *testing.T) {
		g.t = t
		s := g.rpcStream("SendStreamingMessage", map[string]any{"message": protoMsg("stream e2e", first.ContextID, "")})
		evs := s.all()
		if len(evs) < 4 || evs[0].Task == nil || evs[0].state() != "TASK_STATE_SUBMITTED" {
			t.Fatalf("stream states %s", protoStates(evs))
		}
		if evs[1].state() != "TASK_STATE_WORKING" {
			t.Errorf("second event %s, want WORKING", evs[1].state())
		}
		last := evs[len(evs)-1]
		if last.state() != "TASK_STATE_INPUT_REQUIRED" || last.StatusUpdate == nil || last.StatusUpdate.Status.Message.text() != "Echo: stream e2e" {
			t.Errorf("last event %+v", last)
		}
		var tool, final bool
		var chunks strings.Builder
		for _, ev := range evs[1 : len(evs)-1] {
			if ev.StatusUpdate == nil {
				continue
			}
			ns, _ := ev.StatusUpdate.Metadata["iac_code"].(map[string]any)
			if _, ok := ns["tool"]; ok {
				tool = true
			}
			if af, ok := ns["assistantFinal"].(map[string]any); ok && af["complete"] == true {
				final = true
				continue
			}
			chunks.WriteString(ev.StatusUpdate.Status.Message.text())
		}
		if !tool {
			t.Error("no tool trace metadata (tool_trace is the default)")
		}
		if !final {
			t.Error("no assistantFinal update")
		}
		if chunks.String() != "Echo: stream e2e" {
			t.Errorf("chunks %q", chunks.String())
		}
		if evs[0].Task.ContextID != first.ContextID || evs[0].Task.ID == first.ID {
			t.Errorf("follow-up in the context: task %s ctx %s", evs[0].Task.ID, evs[0].Task.ContextID)
		}
	})

	t.Run("GetTask", func(t *testing.T) {
		g.t = t
		task := g.getTask(first.ID)
		if task.ID != first.ID || task.Status.State != "TASK_STATE_INPUT_REQUIRED" || len(task.History) != 2 {
			t.Errorf("GetTask: %+v", task)
		}
		var one protoTask
		g.result("GetTask", map[string]any{"id": first.ID, "historyLength": 1}, &one)
		if len(one.History) != 1 {
			t.Errorf("historyLength 1: %d messages", len(one.History))
		}
		g.rpcErr("GetTask", map[string]any{"id": "no-such-task"}, -32001, "TASK_NOT_FOUND")
	})

	t.Run("ListTasks", func(t *testing.T) {
		g.t = t
		var res struct {
			Tasks         []protoTask `json:"tasks"`
			NextPageToken *string     `json:"nextPageToken"`
			PageSize      int         `json:"pageSize"`
			TotalSize     int         `json:"totalSize"`
		}
		g.result("ListTasks", map[string]any{"contextId": first.ContextID}, &res)
		if res.TotalSize != 2 || len(res.Tasks) != 2 || res.NextPageToken == nil || *res.NextPageToken != "" || res.PageSize != 50 {
			t.Errorf("ListTasks: total %d, %d tasks, token %v, pageSize %d", res.TotalSize, len(res.Tasks), res.NextPageToken, res.PageSize)
		}
		g.result("ListTasks", map[string]any{"pageSize": 1}, &res)
		if len(res.Tasks) != 1 || *res.NextPageToken == "" {
			t.Fatalf("page 1: %d tasks, token %q", len(res.Tasks), *res.NextPageToken)
		}
		firstPage := res.Tasks[0].ID
		g.result("ListTasks", map[string]any{"pageSize": 1, "pageToken": *res.NextPageToken}, &res)
		if len(res.Tasks) != 1 || res.Tasks[0].ID == firstPage {
			t.Errorf("page 2: %+v", res.Tasks)
		}
	})

	t.Run("REST", func(t *testing.T) {
		g.t = t
		body, _ := json.Marshal(map[string]any{"message": protoMsg("rest e2e", "", "")})
		resp, b := g.request("POST", "/message:send", body, nil)
		var res struct {
			Task *protoTask `json:"task"`
		}
		if resp.StatusCode != 200 || json.Unmarshal(b, &res) != nil || res.Task == nil || res.Task.Status.Message.text() != "Echo: rest e2e" {
			t.Fatalf("POST /message:send: %d %s", resp.StatusCode, b)
		}
		resp, b = g.request("GET", "/tasks/"+res.Task.ID+"?historyLength=1", nil, nil)
		var got protoTask
		if resp.StatusCode != 200 || json.Unmarshal(b, &got) != nil || got.ID != res.Task.ID || len(got.History) != 1 {
			t.Errorf("GET /tasks/{id}: %d %s", resp.StatusCode, b)
		}
		resp, b = g.request("GET", "/tasks/missing-task", nil, nil)
		var re struct {
			Error struct {
				Code    int              `json:"code"`
				Status  string           `json:"status"`
				Details []map[string]any `json:"details"`
			} `json:"error"`
		}
		if resp.StatusCode != 404 || json.Unmarshal(b, &re) != nil || re.Error.Code != 404 || re.Error.Status != "NOT_FOUND" ||
			len(re.Error.Details) == 0 || re.Error.Details[0]["reason"] != "TASK_NOT_FOUND" {
			t.Errorf("GET unknown task: %d %s", resp.StatusCode, b)
		}
		// A new message (a resent messageId is a new task too: RPC-18 is opt-in).
		body, _ = json.Marshal(map[string]any{"message": protoMsg("rest e2e", "", "")})
		s := g.stream("POST", "/message:stream", body)
		evs := s.all()
		if len(evs) < 3 || evs[0].Task == nil || evs[len(evs)-1].state() != "TASK_STATE_INPUT_REQUIRED" {
			t.Errorf("REST stream: %s", protoStates(evs))
		}
	})

	t.Run("Errors", func(t *testing.T) {
		g.t = t
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`)
		_, b := g.request("POST", "/", body, map[string]string{"A2A-Version": ""})
		if !strings.Contains(string(b), `"code":-32009`) || !strings.Contains(string(b), "VERSION_NOT_SUPPORTED") {
			t.Errorf("no A2A-Version: %s", b)
		}
		_, b = g.request("POST", "/", []byte(`{"jsonrpc":"2.0","id":1,`), nil)
		if !strings.Contains(string(b), `"code":-32700`) {
			t.Errorf("parse error: %s", b)
		}
		resp, b := g.request("POST", "/", []byte(`{"jsonrpc":"2.0","method":"ListTasks"}`), nil)
		if resp.StatusCode != 204 || len(b) != 0 {
			t.Errorf("notification: %d %q", resp.StatusCode, b)
		}
		g.rpcErr("CreateTaskPushNotificationConfig", map[string]any{"taskId": first.ID, "url": "https://example.com/h"}, -32003, "PUSH_NOTIFICATION_NOT_SUPPORTED")
		g.rpcErr("SendMessage", map[string]any{"message": protoMsg("x", "bad context!", "")}, -32602, "INVALID_PARAMS")
	})
}

func TestProtocolCancelAndSubscribe(t *testing.T) {
	t.Parallel()
	g := protoStart(t, protoSlowEcho)

	t.Run("CancelRunning", func(t *testing.T) {
		g.t = t
		s, task := g.streamTask("cancel me please")
		id := task.ID
		// The turn is running (5 chunks 300ms apart: 1.5s of WORKING).
		if !waitFor(t, 10*time.Second, func() bool { return g.getTask(id).Status.State == "TASK_STATE_WORKING" }) {
			t.Fatalf("state before cancel %s, want WORKING", g.getTask(id).Status.State)
		}
		start := time.Now()
		var c protoTask
		g.result("CancelTask", map[string]any{"id": id}, &c)
		if c.Status.State != "TASK_STATE_CANCELED" || c.Status.Message.text() != "Task canceled." {
			t.Errorf("CancelTask: %s %q", c.Status.State, c.Status.Message.text())
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("CancelTask took %v", took)
		}
		rest := s.all()
		if len(rest) == 0 || rest[len(rest)-1].state() != "TASK_STATE_CANCELED" {
			t.Errorf("stream after cancel: %s", protoStates(rest))
		}
		if got := g.getTask(id); got.Status.State != "TASK_STATE_CANCELED" {
			t.Errorf("GetTask after cancel: %s", got.Status.State)
		}
		// Canceling again is idempotent (A2A 1.0 §3.3.1): the canceled task.
		var again protoTask
		g.result("CancelTask", map[string]any{"id": id}, &again)
		if again.ID != id || again.Status.State != "TASK_STATE_CANCELED" {
			t.Errorf("second CancelTask: %s %s", again.ID, again.Status.State)
		}
		// The context takes new messages.
		next := g.send(map[string]any{"message": protoMsg("after cancel", task.ContextID, "")})
		if next.Status.State != "TASK_STATE_INPUT_REQUIRED" {
			t.Errorf("new message after cancel: %s %q", next.Status.State, next.Status.Message.text())
		}
	})

	t.Run("CancelREST", func(t *testing.T) {
		g.t = t
		task := g.send(map[string]any{"message": protoMsg("cancel via rest", "", ""), "configuration": map[string]any{"returnImmediately": true}})
		if task.Status.State != "TASK_STATE_SUBMITTED" {
			t.Errorf("returnImmediately: %s", task.Status.State)
		}
		g.waitState(task.ID, "TASK_STATE_WORKING", 5*time.Second)
		resp, b := g.request("POST", "/tasks/"+task.ID+":cancel", nil, nil)
		if resp.StatusCode != 200 || !strings.Contains(string(b), "TASK_STATE_CANCELED") {
			t.Errorf("POST :cancel: %d %s", resp.StatusCode, b)
		}
	})

	t.Run("SubscribeRunning", func(t *testing.T) {
		g.t = t
		task := g.send(map[string]any{"message": protoMsg("subscribe to me", "", ""), "configuration": map[string]any{"returnImmediately": true}})
		g.waitState(task.ID, "TASK_STATE_WORKING", 5*time.Second)
		s := g.rpcStream("SubscribeToTask", map[string]any{"id": task.ID})
		evs := s.all()
		if len(evs) < 3 || evs[0].Task == nil || evs[0].Task.ID != task.ID {
			t.Fatalf("subscription: %s", protoStates(evs))
		}
		if evs[len(evs)-1].state() != "TASK_STATE_INPUT_REQUIRED" {
			t.Errorf("subscription end: %s", protoStates(evs))
		}
		// Subscribing again to the now input-required task: the Task, then
		// the stream waits for a follow-up (RPC-11; tests/subscribe_test.go).
		s2 := g.stream("POST", "/tasks/"+task.ID+":subscribe", nil)
		if ev, ok := s2.next(); !ok || ev.Task == nil || ev.state() != "TASK_STATE_INPUT_REQUIRED" {
			t.Errorf("subscribe to input-required: first event %+v", ev)
		}
		s2.close()
	})

	t.Run("SubscribeTerminal", func(t *testing.T) {
		g.t = t
		task := g.send(map[string]any{"message": protoMsg("", "", "")})
		if task.Status.State != "TASK_STATE_FAILED" {
			t.Fatalf("empty message: %s", task.Status.State)
		}
		r := harness.At(g.URL).Call(t, "SubscribeToTask", map[string]any{"id": task.ID}, harness.ID(3))
		resp, b := r.Response, r.Raw
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || !strings.Contains(string(b), `"code":-32004`) {
			t.Errorf("subscribe to terminal: %q %s", resp.Header.Get("Content-Type"), b)
		}
	})

	t.Run("DisconnectDoesNotCancel", func(t *testing.T) {
		g.t = t
		s, task := g.streamTask("keep going")
		s.close()
		got := g.waitState(task.ID, "TASK_STATE_INPUT_REQUIRED", 10*time.Second)
		if got.Status.Message.text() != "Echo: keep going" {
			t.Errorf("answer %q", got.Status.Message.text())
		}
	})

	t.Run("BusyContext", func(t *testing.T) {
		g.t = t
		task := g.send(map[string]any{"message": protoMsg("long running turn", "", ""), "configuration": map[string]any{"returnImmediately": true}})
		g.waitState(task.ID, "TASK_STATE_WORKING", 5*time.Second)
		second := g.send(map[string]any{"message": protoMsg("me too", task.ContextID, "")})
		if second.Status.State != "TASK_STATE_FAILED" || second.Status.Message.text() != "Task is already working." {
			t.Errorf("second message in a busy context: %s %q", second.Status.State, second.Status.Message.text())
		}
		g.waitState(task.ID, "TASK_STATE_INPUT_REQUIRED", 10*time.Second)
	})
}

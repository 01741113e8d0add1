package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// principalHeader carries the test principal to the handler wrapper, in place
// of the auth middleware that sets it in production.
const principalHeader = "X-Test-Principal"

// ns is the default metadata namespace.
const ns = "iac_code"

// TransportConfig is the transport settings a test gives the HTTP
// bindings: a subset of httpx.TransportConfig (the bindings live in
// agent/binding, which imports this package; bindings_hook_test.go, in
// package agent_test, installs NewHTTPHandler).
type TransportConfig struct {
	// KeepAlive is the interval of SSE keep-alive comments (0 = default).
	KeepAlive time.Duration
	// MaxBodyBytes bounds request bodies (0 = default).
	MaxBodyBytes int64
	// LegacyV03 also serves A2A 0.3 JSON-RPC calls (the jsonrpc03 compat),
	// counted in Metrics.
	LegacyV03 bool
	Metrics   *Metrics
}

// HTTPHandler is the HTTP bindings of a Service (binding.Handler over
// NewHandler(svc)).
type HTTPHandler interface {
	// Serve answers r when its path belongs to an A2A binding.
	Serve(w http.ResponseWriter, r *http.Request, principal string) bool
	// Service returns the service behind the handler.
	Service() *Service
}

// NewHTTPHandler returns the HTTP bindings of svc (behind NewHandler's
// interceptors) with the transport settings tc; set by
// bindings_hook_test.go.
var NewHTTPHandler func(svc *Service, tc TransportConfig) HTTPHandler

// testEnv is one agent endpoint over a real SQLite store, served by an
// httptest server.
type testEnv struct {
	t   *testing.T
	st  *store.SQLite
	hub *Hub
	svc *Service
	h   HTTPHandler
	srv *httptest.Server
}

// newTestEnv starts an endpoint with cfg. Cleanup cancels running turns,
// closes the server and then the store.
func newTestEnv(t *testing.T, cfg Config) *testEnv {
	t.Helper()
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatalf("OpenSQLite: %v", err)
	}
	return newTestEnvOn(t, st, cfg, true)
}

// newTestEnvLegacy starts an endpoint with cfg that also serves A2A 0.3
// JSON-RPC calls (legacy_v03), counted in cfg.Metrics.
func newTestEnvLegacy(t *testing.T, cfg Config) *testEnv {
	t.Helper()
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatalf("OpenSQLite: %v", err)
	}
	return newTestEnvTransport(t, st, cfg, TransportConfig{LegacyV03: true, Metrics: cfg.Metrics}, true)
}

// newTestEnvOn starts an endpoint over an existing store; closeStore says
// whether cleanup closes it.
func newTestEnvOn(t *testing.T, st *store.SQLite, cfg Config, closeStore bool) *testEnv {
	t.Helper()
	return newTestEnvTransport(t, st, cfg, TransportConfig{}, closeStore)
}

// newTestEnvWith starts an endpoint with cfg whose HTTP bindings have the
// transport settings tc.
func newTestEnvWith(t *testing.T, cfg Config, tc TransportConfig) *testEnv {
	t.Helper()
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatalf("OpenSQLite: %v", err)
	}
	return newTestEnvTransport(t, st, cfg, tc, true)
}

// newTestEnvTransport is newTestEnvOn with transport settings tc.
func newTestEnvTransport(t *testing.T, st *store.SQLite, cfg Config, tc TransportConfig, closeStore bool) *testEnv {
	t.Helper()
	hub, err := NewHub(context.Background(), st)
	if err != nil {
		t.Fatalf("NewHub: %v", err)
	}
	e := serveTestEnv(t, hub, NewService(hub, cfg), tc, func() {
		if closeStore {
			_ = st.Close()
		}
	})
	e.st = st
	return e
}

// serveTestEnv serves svc (on hub) over its HTTP bindings with tc on an
// httptest server. Cleanup closes the connections, the hub, the server,
// then runs closeStore.
func serveTestEnv(t *testing.T, hub *Hub, svc *Service, tc TransportConfig, closeStore func()) *testEnv {
	t.Helper()
	h := NewHTTPHandler(svc, tc)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.Serve(w, r, r.Header.Get(principalHeader)) {
			http.Error(w, "not an A2A route", http.StatusTeapot)
		}
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		_ = hub.Close()
		srv.Close()
		closeStore()
	})
	return &testEnv{t: t, hub: hub, svc: svc, h: h, srv: srv}
}

// ---------------------------------------------------------------- JSON-RPC

type rpcErrorT struct {
	Code    int              `json:"code"`
	Message string           `json:"message"`
	Data    []map[string]any `json:"data"`
}

type rpcReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcErrorT      `json:"error"`
}

// httpReply is a raw HTTP answer.
type httpReply struct {
	status int
	header http.Header
	body   []byte
}

func v1Headers(principal string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("A2A-Version", "1.0")
	if principal != "" {
		h.Set(principalHeader, principal)
	}
	return h
}

// do sends a request and reads the whole answer.
func (e *testEnv) do(method, path string, body []byte, hdr http.Header) httpReply {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatalf("new request: %v", err)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("%s %s: reading body: %v", method, path, err)
	}
	return httpReply{status: resp.StatusCode, header: resp.Header, body: b}
}

// rawRPC posts body to / with hdr and decodes one JSON-RPC response.
func (e *testEnv) rawRPC(body string, hdr http.Header) (httpReply, rpcReply) {
	e.t.Helper()
	hr := e.do(http.MethodPost, "/", []byte(body), hdr)
	var rep rpcReply
	if hr.status != http.StatusOK {
		e.t.Fatalf("POST / %s: HTTP %d %s", trunc(body), hr.status, hr.body)
	}
	if err := json.Unmarshal(hr.body, &rep); err != nil {
		e.t.Fatalf("POST / %s: response is not one JSON-RPC object: %v: %s", trunc(body), err, hr.body)
	}
	if rep.JSONRPC != "2.0" {
		e.t.Errorf("response jsonrpc = %q, want 2.0: %s", rep.JSONRPC, hr.body)
	}
	return hr, rep
}

var rpcSeq struct {
	sync.Mutex
	n int
}

func nextRPCID() int {
	rpcSeq.Lock()
	defer rpcSeq.Unlock()
	rpcSeq.n++
	return rpcSeq.n
}

func rpcBody(id any, method string, params any) string {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != nil {
		m["id"] = id
	}
	if params != nil {
		m["params"] = params
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// call makes one JSON-RPC call as principal and checks the id is echoed.
func (e *testEnv) call(principal, method string, params any) rpcReply {
	e.t.Helper()
	id := nextRPCID()
	_, rep := e.rawRPC(rpcBody(id, method, params), v1Headers(principal))
	if string(rep.ID) != fmt.Sprint(id) {
		e.t.Errorf("%s: response id = %s, want %d", method, rep.ID, id)
	}
	return rep
}

// result calls method and decodes its result into out, failing on an error.
func (e *testEnv) result(principal, method string, params, out any) {
	e.t.Helper()
	rep := e.call(principal, method, params)
	if rep.Error != nil {
		e.t.Fatalf("%s: unexpected error %d %q %v", method, rep.Error.Code, rep.Error.Message, rep.Error.Data)
	}
	if out != nil {
		if err := json.Unmarshal(rep.Result, out); err != nil {
			e.t.Fatalf("%s: decoding result: %v: %s", method, err, rep.Result)
		}
	}
}

// rpcError calls method and returns its error, failing unless its code is code.
func (e *testEnv) rpcError(principal, method string, params any, code int) *rpcErrorT {
	e.t.Helper()
	rep := e.call(principal, method, params)
	if rep.Error == nil {
		e.t.Fatalf("%s %s: got result %s, want error %d", method, trunc(mustJSON(params)), rep.Result, code)
		return nil
	}
	if rep.Error.Code != code {
		e.t.Fatalf("%s %s: error code %d (%q), want %d", method, trunc(mustJSON(params)), rep.Error.Code, rep.Error.Message, code)
	}
	checkErrorInfo(e.t, rep.Error.Data, reasonOf(code))
	return rep.Error
}

// checkErrorInfo asserts data[0] is an a2a-protocol.org ErrorInfo with reason.
func checkErrorInfo(t *testing.T, data []map[string]any, reason string) map[string]any {
	t.Helper()
	if len(data) == 0 {
		t.Errorf("error has no data array; want an ErrorInfo with reason %s", reason)
		return nil
	}
	info := data[0]
	if info["@type"] != "type.googleapis.com/google.rpc.ErrorInfo" {
		t.Errorf("data[0][@type] = %v, want type.googleapis.com/google.rpc.ErrorInfo", info["@type"])
	}
	if info["domain"] != "a2a-protocol.org" {
		t.Errorf("data[0].domain = %v, want a2a-protocol.org", info["domain"])
	}
	if reason != "" && info["reason"] != reason {
		t.Errorf("data[0].reason = %v, want %s", info["reason"], reason)
	}
	return info
}

// badRequestField returns the fields named by a google.rpc.BadRequest entry.
func badRequestFields(data []map[string]any) []string {
	var out []string
	for _, d := range data {
		if d["@type"] != "type.googleapis.com/google.rpc.BadRequest" {
			continue
		}
		fv, _ := d["fieldViolations"].([]any)
		for _, v := range fv {
			if m, ok := v.(map[string]any); ok {
				if f, ok := m["field"].(string); ok {
					out = append(out, f)
				}
			}
		}
	}
	return out
}

func checkBadRequestField(t *testing.T, data []map[string]any, field string) {
	t.Helper()
	fields := badRequestFields(data)
	for _, f := range fields {
		if f == field {
			return
		}
	}
	t.Errorf("BadRequest fieldViolations name %v, want %q (data %v)", fields, field, data)
}

func reasonOf(code int) string {
	return (&a2a.Error{Code: code}).Reason()
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func trunc(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// ---------------------------------------------------------------- messages

// msg builds a user text message.
func msg(text string) *a2a.Message {
	return &a2a.Message{MessageID: newID(), Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart(text)}}
}

func inContext(m *a2a.Message, contextID string) *a2a.Message {
	m.ContextID = contextID
	return m
}

func withCwd(m *a2a.Message, cwd string) *a2a.Message {
	m.Metadata = map[string]any{ns: map[string]any{"cwd": cwd}}
	return m
}

func sendReq(m *a2a.Message) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: m}
}

func i32(n int32) *int32 { return &n }

// send runs SendMessage (blocking unless req says otherwise) and returns the task.
func (e *testEnv) send(principal string, req *a2a.SendMessageRequest) a2a.Task {
	e.t.Helper()
	var res a2a.SendMessageResponse
	e.result(principal, a2a.MethodSendMessage, req, &res)
	if res.Task == nil {
		e.t.Fatalf("SendMessage: result has no task")
	}
	return *res.Task
}

// sendRaw runs SendMessage and returns the raw result JSON.
func (e *testEnv) sendRaw(principal string, req any) json.RawMessage {
	e.t.Helper()
	rep := e.call(principal, a2a.MethodSendMessage, req)
	if rep.Error != nil {
		e.t.Fatalf("SendMessage: unexpected error %d %q", rep.Error.Code, rep.Error.Message)
	}
	return rep.Result
}

func (e *testEnv) getTask(principal, id string) a2a.Task {
	e.t.Helper()
	var t a2a.Task
	e.result(principal, a2a.MethodGetTask, map[string]any{"id": id}, &t)
	return t
}

// waitState polls GetTask until the task is in state, or fails after d.
func (e *testEnv) waitState(principal, id string, state a2a.TaskState, d time.Duration) a2a.Task {
	e.t.Helper()
	deadline := time.Now().Add(d)
	for {
		t := e.getTask(principal, id)
		if t.Status.State == state {
			return t
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("task %s: state %s after %v, want %s", id, t.Status.State, d, state)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func statusText(t a2a.Task) string {
	if t.Status.Message == nil {
		return ""
	}
	return messageText(*t.Status.Message)
}

func messageText(m a2a.Message) string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Text != nil {
			b.WriteString(*p.Text)
		}
	}
	return b.String()
}

// ---------------------------------------------------------------- SSE

// sseStream reads a text/event-stream response event by event.
type sseStream struct {
	t        *testing.T
	resp     *http.Response
	br       *bufio.Reader
	cancel   context.CancelFunc
	mu       sync.Mutex
	comments []string
}

// openStream posts a streaming call and checks the answer is an SSE stream.
func (e *testEnv) openStream(path string, body string, hdr http.Header) *sseStream {
	e.t.Helper()
	s, resp := e.tryStream(http.MethodPost, path, body, hdr)
	if s == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		e.t.Fatalf("POST %s %s: HTTP %d Content-Type %q, want an event stream: %s", path, trunc(body), resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	return s
}

// tryStream sends a request; it returns a stream when the answer is
// text/event-stream, else nil and the response (body unread).
func (e *testEnv) tryStream(method, path, body string, hdr http.Header) (*sseStream, *http.Response) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.srv.URL+path, rd)
	if err != nil {
		cancel()
		e.t.Fatalf("new request: %v", err)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		cancel()
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		e.t.Cleanup(cancel)
		return nil, resp
	}
	s := &sseStream{t: e.t, resp: resp, br: bufio.NewReader(resp.Body), cancel: cancel}
	e.t.Cleanup(s.close)
	return s, resp
}

// rpcStream opens a JSON-RPC streaming call as principal.
func (e *testEnv) rpcStream(principal, method string, params any, id any) *sseStream {
	e.t.Helper()
	return e.openStream("/", rpcBody(id, method, params), v1Headers(principal))
}

func (s *sseStream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// next returns the next event's data (data lines joined by "\n"); ok is
// false at the end of the stream. Comment lines are recorded.
func (s *sseStream) next() (string, bool) {
	var data []string
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			if len(data) > 0 {
				return strings.Join(data, "\n"), true
			}
			return "", false
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if len(data) > 0 {
				return strings.Join(data, "\n"), true
			}
		case strings.HasPrefix(line, ":"):
			s.mu.Lock()
			s.comments = append(s.comments, line)
			s.mu.Unlock()
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		default:
			// id:, event:, retry: are tolerated.
		}
	}
}

func (s *sseStream) commentLines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.comments...)
}

// rpcEvent decodes a JSON-RPC stream event and checks its id.
func (s *sseStream) rpcEvent(data string, wantID string) a2a.StreamResponse {
	s.t.Helper()
	if strings.Contains(data, "\n") {
		s.t.Errorf("event spans several data lines: %q", data)
	}
	var rep rpcReply
	if err := json.Unmarshal([]byte(data), &rep); err != nil {
		s.t.Fatalf("data line is not JSON: %v: %s", err, data)
	}
	if rep.JSONRPC != "2.0" {
		s.t.Errorf("event jsonrpc = %q: %s", rep.JSONRPC, data)
	}
	if string(rep.ID) != wantID {
		s.t.Errorf("event id = %s, want %s", rep.ID, wantID)
	}
	if rep.Error != nil {
		s.t.Fatalf("stream carried an error: %+v", rep.Error)
	}
	return decodeStreamResponse(s.t, rep.Result)
}

func decodeStreamResponse(t *testing.T, raw []byte) a2a.StreamResponse {
	t.Helper()
	var sr a2a.StreamResponse
	if err := json.Unmarshal(raw, &sr); err != nil {
		t.Fatalf("result is not a StreamResponse: %v: %s", err, raw)
	}
	n := 0
	for _, set := range []bool{sr.Task != nil, sr.Message != nil, sr.StatusUpdate != nil, sr.ArtifactUpdate != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		t.Errorf("StreamResponse sets %d members, want exactly 1: %s", n, raw)
	}
	return sr
}

// rpcAll reads every remaining JSON-RPC event of the stream.
func (s *sseStream) rpcAll(wantID string) []a2a.StreamResponse {
	s.t.Helper()
	var out []a2a.StreamResponse
	for {
		d, ok := s.next()
		if !ok {
			return out
		}
		out = append(out, s.rpcEvent(d, wantID))
	}
}

// restAll reads every remaining REST stream event (bare StreamResponses).
func (s *sseStream) restAll() []a2a.StreamResponse {
	s.t.Helper()
	var out []a2a.StreamResponse
	for {
		d, ok := s.next()
		if !ok {
			return out
		}
		out = append(out, decodeStreamResponse(s.t, []byte(d)))
	}
}

func eventState(ev a2a.StreamResponse) a2a.TaskState {
	switch {
	case ev.Task != nil:
		return ev.Task.Status.State
	case ev.StatusUpdate != nil:
		return ev.StatusUpdate.Status.State
	}
	return ""
}

// ---------------------------------------------------------------- backends

// gateBackend emits one text chunk, reports the turn as started, then
// blocks until released (or canceled) and ends input-required.
type gateBackend struct {
	started chan string   // task id of each started turn
	release chan struct{} // one value releases one turn
	mu      sync.Mutex
	prompts []string
	sawCtx  []context.Context
}

func newGate() *gateBackend {
	return &gateBackend{started: make(chan string, 64), release: make(chan struct{}, 64)}
}

func (g *gateBackend) RunTurn(ctx context.Context, req *backend.TurnRequest, emit backend.Emit) error {
	g.mu.Lock()
	g.prompts = append(g.prompts, req.Prompt)
	g.mu.Unlock()
	if err := emit(backend.Event{V: 1, Type: backend.EventText, Text: "working on it"}); err != nil {
		return err
	}
	g.started <- req.TaskID
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-g.release:
	}
	return emit(backend.Event{V: 1, Type: backend.EventEnd, Outcome: backend.OutcomeInputRequired, Text: "done: " + req.Prompt})
}

func (g *gateBackend) waitStarted(t *testing.T) string {
	t.Helper()
	select {
	case id := <-g.started:
		return id
	case <-time.After(10 * time.Second):
		t.Fatal("backend turn did not start")
		return ""
	}
}

// scriptBackend emits fixed events.
type scriptBackend struct {
	events []backend.Event
	err    error
}

func (b scriptBackend) RunTurn(ctx context.Context, req *backend.TurnRequest, emit backend.Emit) error {
	for _, ev := range b.events {
		if err := emit(ev); err != nil {
			return err
		}
	}
	return b.err
}

// newStore opens a store closed at cleanup (after any env built on it).
func newStore(t *testing.T) *store.SQLite {
	t.Helper()
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatalf("OpenSQLite: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// blockedIn waits up to 10s until some goroutine's stack holds the agent
// function fn (as "(*convContext).acquire"), and reports whether one did:
// the event "a call now waits there", seen without a guessed sleep. It
// does not call t, so goroutines may use it.
func blockedIn(fn string) bool { return stacksUntil(fn, true) }

// noneIn waits up to 10s until no goroutine's stack holds the agent
// function fn, and reports whether that happened: with "(*Service).execute"
// the event "every turn goroutine has ended", its last write included.
func noneIn(fn string) bool { return stacksUntil(fn, false) }

// stacksUntil polls every goroutine's stack for up to 10s until whether
// one holds the agent function fn equals present.
func stacksUntil(fn string, present bool) bool {
	want := []byte("caddy-a2a/agent." + fn + "(")
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		n := runtime.Stack(buf, true)
		if n == len(buf) {
			buf = make([]byte, 2*len(buf))
			continue
		}
		if bytes.Contains(buf[:n], want) == present {
			return true
		}
	}
	return false
}

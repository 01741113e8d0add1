package tests

// `backend a2a` (TURN-9): the built gateway, auth on, in front of the
// official JS SDK reference server (tests/interop/js/server.mjs) behind a
// recording proxy that demands the gateway's upstream credential.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/client"
	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

const (
	a2aCardSecret    = "front-card-signing-secret-0123456789"
	a2aGatewayToken  = "gw-client-token"
	a2aUpstreamToken = "upstream-secret"
)

// upstreamCall is one JSON-RPC request the upstream got.
type upstreamCall struct {
	Method, ContextID, TaskID, ID string
}

// recordingProxy fronts an upstream A2A server: it requires the bearer
// token, rewrites the card's URLs to its own and records every call.
type recordingProxy struct {
	srv   *httptest.Server
	mu    sync.Mutex
	calls []upstreamCall
}

func newRecordingProxy(t *testing.T, upstream string) *recordingProxy {
	t.Helper()
	target, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	p := &recordingProxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+a2aUpstreamToken {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if strings.HasSuffix(r.URL.Path, "agent-card.json") {
			resp, err := http.Get(upstream + r.URL.Path)
			if err != nil {
				w.WriteHeader(http.StatusBadGateway)
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(bytes.ReplaceAll(b, []byte(upstream), []byte(p.srv.URL)))
			return
		}
		body, _ := io.ReadAll(r.Body)
		var env struct {
			Method string `json:"method"`
			Params struct {
				ID      string `json:"id"`
				Message struct {
					ContextID string `json:"contextId"`
					TaskID    string `json:"taskId"`
				} `json:"message"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &env)
		p.mu.Lock()
		p.calls = append(p.calls, upstreamCall{Method: env.Method, ContextID: env.Params.Message.ContextID, TaskID: env.Params.Message.TaskID, ID: env.Params.ID})
		p.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// sends returns the recorded calls of a method.
func (p *recordingProxy) sends(method string) []upstreamCall {
	return lockedFilter(&p.mu, &p.calls, func(c upstreamCall) bool { return c.Method == method })
}

func startA2AFront(t *testing.T, upstreamURL, token string, extra ...string) *harness.Gateway {
	t.Helper()
	return harness.StartGatewayWith(t, `a2a {
	card {
		name front
		skill own {
			name Own
			description "A configured skill."
			tags own
		}
		sign hs256 {
			kid front-1
			secret `+a2aCardSecret+`
		}
	}
	auth {
		bearer `+a2aGatewayToken+`
	}
	`+strings.Join(extra, "\n")+`
	backend a2a `+upstreamURL+` {
		bearer `+token+`
		timeout 1m
	}
}`, harness.Options{
		Global:       "storage file_system {{DIR}}/storage\na2a {\n\tdata_dir {{DIR}}/data\n}",
		StartTimeout: 30 * time.Second,
	})
}

func a2aSend(t *testing.T, gw *harness.Gateway, text, contextID string, immediate bool) map[string]any {
	t.Helper()
	msg := map[string]any{"messageId": a2aMsgID(), "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
	if contextID != "" {
		msg["contextId"] = contextID
	}
	params := map[string]any{"message": msg}
	if immediate {
		params["configuration"] = map[string]any{"returnImmediately": true}
	}
	return harness.At(gw.URL, harness.Bearer(a2aGatewayToken)).SendTask(t, params)
}

var a2aIDs atomic.Int64

func a2aMsgID() string { return fmt.Sprintf("msg-%d-%d", time.Now().UnixNano(), a2aIDs.Add(1)) }

func taskState(task map[string]any) string {
	st, _ := task["status"].(map[string]any)
	s, _ := st["state"].(string)
	return s
}

func statusText(task map[string]any) string {
	st, _ := task["status"].(map[string]any)
	m, _ := st["message"].(map[string]any)
	parts, _ := m["parts"].([]any)
	var b strings.Builder
	for _, p := range parts {
		if pm, ok := p.(map[string]any); ok {
			s, _ := pm["text"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

func TestBackendA2AUpstreamJS(t *testing.T) {
	t.Parallel()
	js := clientStartJSServer(t)
	proxy := newRecordingProxy(t, js)
	gw := startA2AFront(t, proxy.srv.URL, a2aUpstreamToken)

	// send: the upstream's answer, artifact and final state (TURN-9).
	first := a2aSend(t, gw, "hello upstream", "", false)
	if taskState(first) != "TASK_STATE_COMPLETED" || statusText(first) != "JS echo: hello upstream" {
		t.Fatalf("send through the gateway: %s %q", taskState(first), statusText(first))
	}
	arts, _ := first["artifacts"].([]any)
	if len(arts) != 1 || arts[0].(map[string]any)["artifactId"] != "answer" {
		t.Errorf("artifacts %v, want the upstream's answer artifact", arts)
	}
	ctxID := first["contextId"].(string)
	sends := proxy.sends("SendStreamingMessage")
	if len(sends) != 1 || sends[0].ContextID != "" {
		t.Fatalf("upstream calls %v, want one SendStreamingMessage without a context", sends)
	}

	// stream: the upstream's word chunks arrive as WORKING updates.
	msg := map[string]any{"messageId": a2aMsgID(), "role": "ROLE_USER", "contextId": ctxID, "parts": []any{map[string]any{"text": "stream me please"}}}
	events := harness.At(gw.URL, harness.Bearer(a2aGatewayToken)).Stream(t, "SendStreamingMessage", map[string]any{"message": msg}).Rest(30 * time.Second)
	working, final := 0, ""
	for _, ev := range events {
		if su, ok := ev["statusUpdate"].(map[string]any); ok {
			st := su["status"].(map[string]any)["state"].(string)
			if st == "TASK_STATE_WORKING" && su["status"].(map[string]any)["message"] != nil {
				working++
			}
			final = st
		}
	}
	if working < 2 || final != "TASK_STATE_COMPLETED" {
		t.Errorf("stream: %d working text updates, final %s; events %v", working, final, events)
	}

	// follow-up in the same gateway context reaches the same upstream context.
	sends = proxy.sends("SendStreamingMessage")
	if len(sends) != 2 || sends[1].ContextID == "" || sends[1].ContextID == ctxID {
		t.Fatalf("upstream calls %v: the follow-up must carry the upstream's own context id", sends)
	}
	upCtx := sends[1].ContextID

	// cancel is forwarded to the upstream task.
	slow := a2aSend(t, gw, "a slow job", ctxID, true)
	a2aWaitUpstreamTask(t, gw, slow["id"])
	res, rerr := harness.At(gw.URL, harness.Bearer(a2aGatewayToken)).RPC(t, "CancelTask", map[string]any{"id": slow["id"]})
	if rerr != nil || taskState(res) != "TASK_STATE_CANCELED" {
		t.Fatalf("CancelTask: %v %v", res, rerr)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(proxy.sends("CancelTask")) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if c := proxy.sends("CancelTask"); len(c) != 1 || c[0].ID == "" || c[0].ID == slow["id"] {
		t.Errorf("upstream cancels %v, want one CancelTask of the upstream task", c)
	}

	// restart: the mapping survived, the follow-up reaches the same upstream context.
	gw.Restart()
	after := a2aSend(t, gw, "after restart", ctxID, false)
	if taskState(after) != "TASK_STATE_COMPLETED" || after["contextId"] != ctxID {
		t.Fatalf("after restart: %s in %v", taskState(after), after["contextId"])
	}
	sends = proxy.sends("SendStreamingMessage")
	if last := sends[len(sends)-1]; last.ContextID != upCtx {
		t.Errorf("after restart the upstream got context %q, want %q", last.ContextID, upCtx)
	}
	// The gateway's own ListTasks covers the upstream's tasks.
	lt, rerr := harness.At(gw.URL, harness.Bearer(a2aGatewayToken)).RPC(t, "ListTasks", map[string]any{"contextId": ctxID})
	if rerr != nil || len(lt["tasks"].([]any)) != 4 {
		t.Errorf("ListTasks: %v %v, want the 4 tasks of the context", lt["totalSize"], rerr)
	}
}

// TestBackendA2AUpstreamAuth: an upstream refusing the gateway's
// credential fails the turn with the credential message (TURN-8); an
// unreachable upstream is a transient failure.
func TestBackendA2AUpstreamAuth(t *testing.T) {
	t.Parallel()
	js := clientStartJSServer(t)
	proxy := newRecordingProxy(t, js)
	gw := startA2AFront(t, proxy.srv.URL, "wrong-secret")
	task := a2aSend(t, gw, "hello", "", false)
	if taskState(task) != "TASK_STATE_FAILED" || statusText(task) != "Authentication required. Configure credentials and retry." {
		t.Errorf("upstream 401: %s %q", taskState(task), statusText(task))
	}
	down := startA2AFront(t, fmt.Sprintf("http://127.0.0.1:%d/", closedPort(t)), a2aUpstreamToken)
	task = a2aSend(t, down, "hello", "", false)
	if taskState(task) != "TASK_STATE_INPUT_REQUIRED" || statusText(task) != "A temporary error occurred. Please retry." {
		t.Errorf("unreachable upstream: %s %q", taskState(task), statusText(task))
	}
}

// TestBackendA2AUpstream03: the gateway (auth on) in front of a plain A2A
// 0.3 agent (the JS SDK 0.3.14 server): 0.3 method names upstream, an
// input-required upstream task continued by the follow-up on the same
// gateway task, cancel forwarded as tasks/cancel, restart (TURN-9).
func TestBackendA2AUpstream03(t *testing.T) {
	t.Parallel()
	up := startJSScript(t, "server_v03.mjs")
	proxy := newRecordingProxy(t, up)
	gw := startA2AFront(t, proxy.srv.URL, a2aUpstreamToken)

	first := a2aSend(t, gw, "hello old agent", "", false)
	if taskState(first) != "TASK_STATE_INPUT_REQUIRED" || statusText(first) != "JS03 echo: hello old agent" {
		t.Fatalf("send: %s %q", taskState(first), statusText(first))
	}
	if arts, _ := first["artifacts"].([]any); len(arts) != 1 {
		t.Errorf("artifacts %v, want the upstream's answer", arts)
	}
	ctxID, taskID := first["contextId"].(string), first["id"].(string)

	// The gateway's card: the configured skill plus the upstream's, signed
	// by the gateway (TURN-9).
	raw := harness.At(gw.URL+"/.well-known/agent-card.json").Do(t, http.MethodGet, "").Raw
	var served a2a.AgentCard
	if err := json.Unmarshal(raw, &served); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, sk := range served.Skills {
		ids = append(ids, sk.ID)
	}
	if strings.Join(ids, ",") != "own,echo03" {
		t.Errorf("card skills %v, want own,echo03", ids)
	}
	if err := client.VerifyCard(context.Background(), raw, client.Trust{HS256: []client.HS256Secret{{KID: "front-1", Secret: []byte(a2aCardSecret)}}}); err != nil {
		t.Errorf("the gateway's card with merged skills does not verify: %v", err)
	}

	// The follow-up continues the same gateway task, hence the upstream task.
	res, rerr := harness.At(gw.URL, harness.Bearer(a2aGatewayToken)).RPC(t, "SendMessage", map[string]any{"message": map[string]any{
		"messageId": a2aMsgID(), "role": "ROLE_USER", "contextId": ctxID, "taskId": taskID, "parts": []any{map[string]any{"text": "more"}}}})
	if rerr != nil || taskState(res["task"].(map[string]any)) != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("follow-up: %v %v", res, rerr)
	}
	sends := proxy.sends("message/stream")
	if len(sends) != 2 || sends[0].ContextID != "" || sends[1].ContextID == "" || sends[1].TaskID == "" || sends[1].TaskID == taskID {
		t.Fatalf("upstream calls %v: the follow-up must carry the upstream context and task", sends)
	}
	upCtx := sends[1].ContextID

	done := a2aSend(t, gw, "done now", ctxID, false)
	if taskState(done) != "TASK_STATE_COMPLETED" {
		t.Errorf("completing turn: %s", taskState(done))
	}
	if s := proxy.sends("message/stream"); s[2].ContextID != upCtx || s[2].TaskID != "" {
		t.Errorf("a new gateway task in the context: upstream call %v, want context %s and no task", s[2], upCtx)
	}

	slow := a2aSend(t, gw, "a slow one", ctxID, true)
	a2aWaitUpstreamTask(t, gw, slow["id"])
	if res, rerr := harness.At(gw.URL, harness.Bearer(a2aGatewayToken)).RPC(t, "CancelTask", map[string]any{"id": slow["id"]}); rerr != nil || taskState(res) != "TASK_STATE_CANCELED" {
		t.Fatalf("CancelTask: %v %v", res, rerr)
	}
	if !waitFor(t, 10*time.Second, func() bool { return len(proxy.sends("tasks/cancel")) == 1 }) {
		t.Errorf("upstream calls %v: no tasks/cancel", proxy.sends("message/stream"))
	}

	gw.Restart()
	again := a2aSend(t, gw, "after restart", ctxID, false)
	s := proxy.sends("message/stream")
	if taskState(again) != "TASK_STATE_INPUT_REQUIRED" || s[len(s)-1].ContextID != upCtx {
		t.Errorf("after restart: %s, upstream context %q want %q", taskState(again), s[len(s)-1].ContextID, upCtx)
	}
}

// TestBackendA2AAdapt: the Caddyfile options of `backend a2a` (TURN-9) and
// legacy_v03 (RPC-2) adapt and validate; bad ones are refused.
func TestBackendA2AAdapt(t *testing.T) {
	t.Parallel()
	adapt := func(site string) (string, error) { return adaptA2A(t, site) }
	out, err := adapt(`legacy_v03
backend a2a https://up.example/ {
	header X-Up {env.K}
	bearer {env.T}
	timeout 1m
	card_ttl 30s
	verify_upstream_card https://up.example/jwks.json {
		hs256 k1 0123456789abcdef0123456789abcdef
		allow_jku https://up.example
	}
}`)
	if err != nil {
		t.Fatalf("adapt: %v\n%s", err, out)
	}
	for _, want := range []string{`"legacy_v03":true`, `"backend":"a2a"`, `"url":"https://up.example/"`, `"headers":{"X-Up":["{env.K}"]}`, `"bearer":"{env.T}"`,
		`"card_ttl":30000000000`, `"jwks_urls":["https://up.example/jwks.json"]`, `"allow_jku":["https://up.example"]`, `"hs256":{"k1":"0123456789abcdef0123456789abcdef"}`} {
		if !strings.Contains(out, want) {
			t.Errorf("adapted JSON lacks %s:\n%s", want, out)
		}
	}
	for site, msg := range map[string]string{
		"backend a2a ftp://x/":                                "must be an absolute http(s) URL",
		"backend a2a https://u:p@x/":                          "must not hold credentials",
		"backend a2a https://x/ {\n\tverify_upstream_card\n}": "needs at least one key",
		"backend a2a https://x/ {\n\tnope 1\n}":               `unknown option "nope"`,
		"legacy_v03 on":                                       "wrong argument count",
	} {
		if out, err := adapt(site); err == nil || !strings.Contains(out, msg) {
			t.Errorf("%q: %v, want an error with %q\n%s", site, err, msg, out)
		}
	}
}

// TestBackendA2APushForPlainUpstream: the gateway delivers a push
// notification for a task whose upstream (a plain 0.3 agent) has no push
// at all (TURN-9, PUSH-1).
func TestBackendA2APushForPlainUpstream(t *testing.T) {
	t.Parallel()
	up := startJSScript(t, "server_v03.mjs")
	proxy := newRecordingProxy(t, up)
	hits := make(chan map[string]any, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body)
		hits <- body
	}))
	defer hook.Close()
	gw := startA2AFront(t, proxy.srv.URL, a2aUpstreamToken, "push {\n\t\tallow_private_networks 127.0.0.0/8\n\t}")
	res, rerr := harness.At(gw.URL, harness.Bearer(a2aGatewayToken)).RPC(t, "SendMessage", map[string]any{
		"message":       map[string]any{"messageId": a2aMsgID(), "role": "ROLE_USER", "parts": []any{map[string]any{"text": "done and push"}}},
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": hook.URL + "/cb"}},
	})
	if rerr != nil {
		t.Fatalf("SendMessage: %v", rerr)
	}
	id := res["task"].(map[string]any)["id"]
	select {
	case body := <-hits:
		task, _ := body["task"].(map[string]any)
		su, _ := body["statusUpdate"].(map[string]any)
		if (task == nil || task["id"] != id) && (su == nil || su["taskId"] != id) {
			t.Errorf("push body %v, want the gateway task %v", body, id)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no push delivery for the upstream-backed task")
	}
}

// a2aWaitUpstreamTask waits until the gateway task id has relayed a text
// update of its upstream task: the upstream's events carry its task id,
// so from then on the gateway knows which upstream task to cancel.
func a2aWaitUpstreamTask(t *testing.T, gw *harness.Gateway, id any) {
	t.Helper()
	if !waitFor(t, 10*time.Second, func() bool {
		res, _ := harness.At(gw.URL, harness.Bearer(a2aGatewayToken)).RPC(t, "GetTask", map[string]any{"id": id})
		st, _ := res["status"].(map[string]any)
		return taskState(res) == "TASK_STATE_WORKING" && st["message"] != nil
	}) {
		t.Fatal("the slow task never relayed an upstream update")
	}
}

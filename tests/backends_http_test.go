package tests

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// End-to-end tests of the http (TURN-4) and openai (TURN-5) backends
// against real local upstream servers, and of TURN-8's sanitised endings.

type bkUpstream struct {
	mu       sync.Mutex
	requests []map[string]any
	headers  []http.Header
	canceled chan struct{}
}

func (u *bkUpstream) last() (map[string]any, http.Header) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.requests) == 0 {
		return nil, nil
	}
	return u.requests[len(u.requests)-1], u.headers[len(u.headers)-1]
}

// record decodes the JSON request body (at most limit bytes) and keeps it
// with the headers; a body that is not JSON gets HTTP 400 with msg.
func (u *bkUpstream) record(w http.ResponseWriter, r *http.Request, limit int64, msg string) (map[string]any, bool) {
	var req map[string]any
	if err := json.NewDecoder(io.LimitReader(r.Body, limit)).Decode(&req); err != nil {
		http.Error(w, msg, 400)
		return nil, false
	}
	u.mu.Lock()
	u.requests = append(u.requests, req)
	u.headers = append(u.headers, r.Header.Clone())
	u.mu.Unlock()
	return req, true
}

func bkTurnUpstream(t *testing.T) (*httptest.Server, *bkUpstream) {
	up := &bkUpstream{canceled: make(chan struct{}, 1)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, ok := up.record(w, r, 1<<20, "bad request")
		if !ok {
			return
		}
		prompt, _ := req["prompt"].(string)
		flush := func() { http.NewResponseController(w).Flush() }
		switch {
		case strings.Contains(prompt, "ndjson"):
			w.Header().Set("Content-Type", "application/x-ndjson")
			for _, l := range []string{
				`{"v":1,"type":"text","text":"nd "}`,
				`{"v":1,"type":"tool","status":"started","toolUseId":"x","name":"search"}`,
				`{"v":1,"type":"text","text":"json"}`,
				`{"v":1,"type":"usage","inputTokens":1,"outputTokens":2,"totalTokens":3}`,
				`{"v":1,"type":"end","outcome":"input_required","text":"nd json"}`,
			} {
				fmt.Fprintln(w, l)
				flush()
			}
		case strings.Contains(prompt, "sse"):
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, ": comment\n\n")
			fmt.Fprint(w, "event: turn\ndata: {\"v\":1,\"type\":\"text\",\n")
			fmt.Fprint(w, "data: \"text\":\"via \"}\n\n")
			flush()
			fmt.Fprint(w, "data: {\"v\":1,\"type\":\"text\",\"text\":\"sse\"}\n\n")
			fmt.Fprint(w, "data: {\"v\":1,\"type\":\"end\",\"outcome\":\"completed\"}\n\n")
		case strings.Contains(prompt, "status429"):
			http.Error(w, "slow down, secret-upstream-detail", 429)
		case strings.Contains(prompt, "status401"):
			http.Error(w, "bad key secret-upstream-detail", 401)
		case strings.Contains(prompt, "status500"):
			http.Error(w, "stack trace secret-upstream-detail", 500)
		case strings.Contains(prompt, "status404"):
			http.Error(w, "secret-upstream-detail", 404)
		case strings.Contains(prompt, "hang"):
			w.Header().Set("Content-Type", "application/x-ndjson")
			fmt.Fprintln(w, `{"v":1,"type":"text","text":"pid 4242 hanging"}`)
			flush()
			<-r.Context().Done()
			up.canceled <- struct{}{}
		case strings.Contains(prompt, "garbage"):
			w.Header().Set("Content-Type", "application/x-ndjson")
			fmt.Fprintln(w, `<html>oops</html>`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, up
}

func TestBackendsHTTP(t *testing.T) {
	t.Parallel()
	srv, up := bkTurnUpstream(t)
	gw := harness.StartGatewayWith(t, `a2a {
	card {
		name http-agent
	}
	backend http `+srv.URL+`/turn {
		header X-Upstream-Key {env.BK_UPSTREAM_KEY}
		transport http {
			dial_timeout 2s
		}
		timeout 10s
	}
}`, harness.Options{Env: []string{"BK_UPSTREAM_KEY=up-secret"}})

	send := func(text string, md map[string]any) (string, string) {
		res, rpcErr := harness.At(gw.URL).RPC(t, "SendMessage", map[string]any{"message": bkMessage(text, "", md)})
		if rpcErr != nil {
			t.Fatalf("SendMessage %q: %v", text, rpcErr)
		}
		return bkStr(res, "task", "status", "state"), bkStr(res, "task", "status", "message", "parts", 0, "text")
	}

	// NDJSON, streamed: the chunks and the end text arrive.
	events := harness.At(gw.URL).Stream(t, "SendStreamingMessage", map[string]any{"message": bkMessage("ndjson please", "", map[string]any{"iac_code": map[string]any{"api_key": "per-request-secret"}})}).Rest(20 * time.Second)
	var chunks []string
	for _, ev := range events {
		if bkState(ev) == "TASK_STATE_WORKING" && bkGet(ev, "statusUpdate", "metadata") == nil {
			if txt := bkStr(ev, "statusUpdate", "status", "message", "parts", 0, "text"); txt != "" {
				chunks = append(chunks, txt)
			}
		}
	}
	if state, text := bkFinalText(events); state != "TASK_STATE_INPUT_REQUIRED" || text != "nd json" || strings.Join(chunks, "|") != "nd |json" {
		t.Errorf("ndjson turn: %s %q chunks %q", state, text, chunks)
	}
	req, hdr := up.last()
	if req["v"] != float64(1) || req["type"] != "turn" || bkStr(req, "taskId") == "" || bkStr(req, "contextId") == "" || bkStr(req, "messageId") == "" || bkStr(req, "cwd") == "" || req["prompt"] != "ndjson please" {
		t.Errorf("turn request = %v", req)
	}
	if hdr.Get("X-Upstream-Key") != "up-secret" || !strings.Contains(hdr.Get("Accept"), "application/x-ndjson") {
		t.Errorf("upstream headers = %v", hdr)
	}
	if bkGet(req, "credentials", "api_key") != "per-request-secret" {
		t.Errorf("per-request credential did not reach the backend: %v", req["credentials"])
	}
	if b, _ := json.Marshal(req["message"]); strings.Contains(string(b), "per-request-secret") {
		t.Errorf("credential left in the message handed to the backend: %s", b)
	}

	// SSE, multi-line data, comments and event names.
	if state, text := send("sse please", nil); state != "TASK_STATE_COMPLETED" || text != "via sse" {
		t.Errorf("sse turn: %s %q", state, text)
	}

	// TURN-8: upstream statuses become sanitised outcomes.
	for _, tc := range []struct{ prompt, state, text string }{
		{"status429", "TASK_STATE_INPUT_REQUIRED", "A temporary error occurred. Please retry."},
		{"status500", "TASK_STATE_INPUT_REQUIRED", "A temporary error occurred. Please retry."},
		{"status401", "TASK_STATE_FAILED", "Authentication required. Configure credentials and retry."},
		{"status404", "TASK_STATE_FAILED", "correlation id"},
	} {
		state, text := send(tc.prompt, nil)
		if state != tc.state || !strings.Contains(text, tc.text) || strings.Contains(text, "secret") {
			t.Errorf("%s: %s %q, want %s %q", tc.prompt, state, text, tc.state, tc.text)
		}
	}
	// Output that is not the turn-event protocol: InvalidAgentResponseError
	// on a blocking send, without the upstream's body (A2A 1.0 §3.3).
	if _, rpcErr := harness.At(gw.URL).RPC(t, "SendMessage", map[string]any{"message": bkMessage("garbage", "", nil)}); rpcErr == nil || rpcErr["code"] != float64(-32006) || !strings.Contains(bkStr(rpcErr, "message"), "correlation id") || strings.Contains(bkStr(rpcErr, "message"), "oops") {
		t.Errorf("garbage answered %v", rpcErr)
	}
	if out := gw.Output(); strings.Contains(out, "secret-upstream-detail") || strings.Contains(out, "up-secret") || strings.Contains(out, "per-request-secret") {
		t.Errorf("an upstream body or a secret reached the log")
	}

	// Cancel aborts the upstream request.
	stream := harness.At(gw.URL).Stream(t, "SendStreamingMessage", map[string]any{"message": bkMessage("hang", "", nil)})
	taskID, _ := bkWaitWorkingPID(t, stream)
	if _, rpcErr := harness.At(gw.URL).RPC(t, "CancelTask", map[string]any{"id": taskID}); rpcErr != nil {
		t.Fatalf("CancelTask: %v", rpcErr)
	}
	select {
	case <-up.canceled:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream request was not aborted by the cancel")
	}
	if state, _ := bkFinalText(stream.Rest(10 * time.Second)); state != "TASK_STATE_CANCELED" {
		t.Errorf("canceled turn ended %s", state)
	}
}

// bkOpenAIServer speaks the OpenAI streaming chat-completions wire format.
func bkOpenAIServer(t *testing.T) (*httptest.Server, *bkUpstream) {
	up := &bkUpstream{canceled: make(chan struct{}, 1)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Method != "POST" {
			http.NotFound(w, r)
			return
		}
		req, ok := up.record(w, r, 32<<20, "bad json")
		if !ok {
			return
		}
		if r.Header.Get("Authorization") != "Bearer sk-test-key" && r.Header.Get("Authorization") != "Bearer sk-request-key" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided: sk-wrong","type":"invalid_request_error","code":"invalid_api_key"}}`)
			return
		}
		msgs, _ := req["messages"].([]any)
		lastUser, _ := bkGet(msgs[len(msgs)-1], "content").(string)
		if strings.Contains(lastUser, "overloaded") {
			w.WriteHeader(503)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta string, extra string) {
			fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"test-model\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", delta, extra)
			http.NewResponseController(w).Flush()
		}
		chunk(`{"role":"assistant","content":""}`, "null")
		chunk(`{"reasoning_content":"Thinking about it."}`, "null")
		chunk(`{"content":"Hel"}`, "null")
		chunk(fmt.Sprintf(`{"content":"lo (%d messages)"}`, len(msgs)), "null")
		chunk(`{}`, `"stop"`)
		fmt.Fprint(w, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"test-model\",\"choices\":[],\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":7,\"total_tokens\":18}}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, up
}

func TestBackendsOpenAI(t *testing.T) {
	t.Parallel()
	srv, up := bkOpenAIServer(t)
	gw := harness.StartGatewayWith(t, `a2a {
	card {
		name llm
	}
	thinking_exposure tool_trace raw_thinking
	backend openai `+srv.URL+`/v1 {
		model test-model
		api_key {env.BK_OPENAI_KEY}
		system "You are terse."
		max_messages 4
		vision
	}
}`, harness.Options{Env: []string{"BK_OPENAI_KEY=sk-test-key"}})

	ctxID := fmt.Sprintf("bk-llm-%d", time.Now().UnixNano())
	events := harness.At(gw.URL).Stream(t, "SendStreamingMessage", map[string]any{"message": bkMessage("Say hello", ctxID, nil)}).Rest(20 * time.Second)
	var thinking, usage bool
	var chunks []string
	for _, ev := range events {
		md, _ := bkGet(ev, "statusUpdate", "metadata", "iac_code").(map[string]any)
		if bkStr(md, "thinking", "text") == "Thinking about it." {
			thinking = true
		}
		if bkGet(md, "usage", "inputTokens") == float64(11) && bkGet(md, "usage", "outputTokens") == float64(7) && bkGet(md, "usage", "totalTokens") == float64(18) {
			usage = true
		}
		if md == nil && bkState(ev) == "TASK_STATE_WORKING" {
			if txt := bkStr(ev, "statusUpdate", "status", "message", "parts", 0, "text"); txt != "" {
				chunks = append(chunks, txt)
			}
		}
	}
	state, text := bkFinalText(events)
	if state != "TASK_STATE_INPUT_REQUIRED" || text != "Hello (2 messages)" || !thinking || !usage || strings.Join(chunks, "|") != "Hel|lo (2 messages)" {
		t.Errorf("first turn: %s %q thinking=%v usage=%v chunks=%q", state, text, thinking, usage, chunks)
	}
	req, hdr := up.last()
	if req["stream"] != true || bkGet(req, "stream_options", "include_usage") != true || req["model"] != "test-model" || hdr.Get("Authorization") != "Bearer sk-test-key" {
		t.Errorf("request = %v, auth %q", req, hdr.Get("Authorization"))
	}
	if bkStr(req, "messages", 0, "role") != "system" || bkStr(req, "messages", 1, "content") != "Say hello" {
		t.Errorf("messages = %v", req["messages"])
	}

	send := func(text string, md map[string]any) (string, string) {
		res, rpcErr := harness.At(gw.URL).RPC(t, "SendMessage", map[string]any{"message": bkMessage(text, ctxID, md)})
		if rpcErr != nil {
			t.Fatalf("SendMessage %q: %v", text, rpcErr)
		}
		return bkStr(res, "task", "status", "state"), bkStr(res, "task", "status", "message", "parts", 0, "text")
	}
	// The conversation is kept: system + user + assistant + user.
	if _, text := send("And again", nil); text != "Hello (4 messages)" {
		t.Errorf("second turn saw %q, want the kept conversation", text)
	}
	req, _ = up.last()
	if bkStr(req, "messages", 2, "role") != "assistant" || bkStr(req, "messages", 2, "content") != "Hello (2 messages)" {
		t.Errorf("second request messages = %v", req["messages"])
	}
	// It survives a restart (persisted with the context) and is trimmed to
	// max_messages 4: system + 4 kept + the new user message.
	gw.Restart()
	if _, text := send("After restart", nil); text != "Hello (6 messages)" {
		t.Errorf("turn after restart saw %q", text)
	}
	if _, text := send("Once more", nil); text != "Hello (6 messages)" {
		t.Errorf("trimmed turn saw %q", text)
	}
	req, _ = up.last()
	if bkStr(req, "messages", 1, "content") != "And again" || bkStr(req, "messages", 3, "content") != "After restart" {
		t.Errorf("trim kept the wrong messages: %v", req["messages"])
	}

	// Vision: an image part goes to the model as a data URL.
	img := []byte("\x89PNG\r\n\x1a\nfakeimage")
	msg := bkMessage("What is in the picture?", ctxID, nil)
	msg["parts"] = append(msg["parts"].([]any), map[string]any{"raw": base64.StdEncoding.EncodeToString(img), "mediaType": "image/png", "filename": "cat.png"})
	if res, rpcErr := harness.At(gw.URL).RPC(t, "SendMessage", map[string]any{"message": msg}); rpcErr != nil || bkStr(res, "task", "status", "state") != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("vision turn: %v %v", rpcErr, res)
	}
	req, _ = up.last()
	msgs := req["messages"].([]any)
	content := bkGet(msgs[len(msgs)-1], "content")
	if bkStr(content, 0, "type") != "text" || bkStr(content, 1, "image_url", "url") != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(img) {
		t.Errorf("vision content = %v", content)
	}

	// A per-request key overrides the configured one and is not stored.
	if state, _ := send("with my key", map[string]any{"iac_code": map[string]any{"api_key": "sk-request-key"}}); state != "TASK_STATE_INPUT_REQUIRED" {
		t.Errorf("per-request key turn ended %s", state)
	}
	if _, hdr := up.last(); hdr.Get("Authorization") != "Bearer sk-request-key" {
		t.Errorf("per-request key not used: %q", hdr.Get("Authorization"))
	}
	// Rejected key → FAILED auth; 503 → transient.
	if state, text := send("with a bad key", map[string]any{"iac_code": map[string]any{"api_key": "sk-wrong"}}); state != "TASK_STATE_FAILED" || text != "Authentication required. Configure credentials and retry." {
		t.Errorf("bad key turn: %s %q", state, text)
	}
	if state, text := send("overloaded", nil); state != "TASK_STATE_INPUT_REQUIRED" || text != "A temporary error occurred. Please retry." {
		t.Errorf("503 turn: %s %q", state, text)
	}
	if out := gw.Output(); strings.Contains(out, "sk-test-key") || strings.Contains(out, "sk-request-key") || strings.Contains(out, "sk-wrong") {
		t.Error("an API key reached the log")
	}
}

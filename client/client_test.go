package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

func TestCardURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:1":                      "http://h:1/.well-known/agent-card.json",
		"https://h/base/":                 "https://h/base/.well-known/agent-card.json",
		"http://u:p@h/x/card.json?q=1":    "http://h/x/card.json?q=1",
		"http://h/.well-known/agent.json": "http://h/.well-known/agent.json",
	} {
		got, err := CardURL(in)
		if err != nil || got != want {
			t.Errorf("CardURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "h:1", "ftp://h", "http://"} {
		if _, err := CardURL(bad); classify(err) != "usage" {
			t.Errorf("CardURL(%q) = %v, want a usage error", bad, err)
		}
	}
}

func TestSelectInterface(t *testing.T) {
	card := &a2a.AgentCard{SupportedInterfaces: []a2a.AgentInterface{
		{URL: "h:443", ProtocolBinding: "GRPC", ProtocolVersion: "1.0"},
		{URL: "http://h/old", ProtocolBinding: "JSONRPC", ProtocolVersion: "0.3"},
		{URL: "http://h/rest", ProtocolBinding: "HTTP+JSON", ProtocolVersion: "1.0"},
		{URL: "http://h/rpc", ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"},
	}}
	in, err := SelectInterface(card, "")
	if err != nil || in.URL != "http://h/rest" {
		t.Fatalf("auto: %+v %v (want the first usable, HTTP+JSON)", in, err)
	}
	if in, _ := SelectInterface(card, "jsonrpc"); in.URL != "http://h/rpc" {
		t.Fatalf("forced jsonrpc: %+v", in)
	}
	card.SupportedInterfaces = card.SupportedInterfaces[:2]
	if _, err := SelectInterface(card, ""); err == nil || classify(err) != "transport" || !strings.Contains(err.Error(), "GRPC@1.0") {
		t.Fatalf("no usable interface: %v", err)
	}
}

func TestAuthFromEnv(t *testing.T) {
	env := map[string]string{"IACCODE_A2A_HTTP_TOKEN": "t", "IACCODE_A2A_API_KEY_HEADER": "X-Key"}
	a := AuthFromEnv(Auth{}, func(k string) string { return env[k] })
	h := http.Header{}
	a.apply(h)
	if h.Get("Authorization") != "Bearer t" || a.APIKeyHeader != "X-Key" {
		t.Fatalf("env auth: %v %+v", h, a)
	}
	// An explicit credential replaces the environment's.
	a = AuthFromEnv(Auth{BasicUser: "u", BasicPassword: "p"}, func(k string) string { return env[k] })
	h = http.Header{}
	a.apply(h)
	if h.Get("Authorization") != "Basic dTpw" {
		t.Fatalf("basic: %v", h)
	}
}

func TestBuildMessage(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "a.json")
	bin := filepath.Join(dir, "blob")
	os.WriteFile(js, []byte(`{"x":1}`), 0o600)
	os.WriteFile(bin, []byte{0, 1, 2, 0xff}, 0o600)
	m, err := BuildMessage(MessageInput{Text: "hi", Files: []string{js, bin}, Cwd: "rel", Namespace: "ns", ContextID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Parts) != 3 || m.Parts[1].Text == nil || m.Parts[1].MediaType != "application/json" || m.Parts[2].Kind() != "raw" || m.Parts[2].MediaType != "application/octet-stream" {
		t.Fatalf("parts: %+v", m.Parts)
	}
	cwd, _ := m.Metadata["ns"].(map[string]any)["cwd"].(string)
	if !filepath.IsAbs(cwd) || filepath.Base(cwd) != "rel" || m.ContextID != "c" || m.Role != a2a.RoleUser || m.MessageID == "" {
		t.Fatalf("message: %+v", m)
	}
	if _, err := BuildMessage(MessageInput{}); classify(err) != "usage" {
		t.Fatalf("empty message: %v", err)
	}
}

// TestClientErrorsMapping checks JSON-RPC and REST error bodies become
// protocol errors (exit 3) carrying the A2A code, and 401 an auth error.
func TestClientErrorsMapping(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == WellKnownCardPath:
			json.NewEncoder(w).Encode(a2a.AgentCard{Name: "x", SupportedInterfaces: []a2a.AgentInterface{
				{URL: "http://" + r.Host + "/rpc", ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"},
				{URL: "http://" + r.Host + "/rest", ProtocolBinding: "HTTP+JSON", ProtocolVersion: "1.0"}}})
		case r.Header.Get("A2A-Version") != "1.0":
			w.WriteHeader(400)
		case r.URL.Path == "/rpc":
			w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","metadata":{"taskId":"t9"}}]}}`))
		case strings.HasPrefix(r.URL.Path, "/rest/tasks/t9"):
			w.WriteHeader(400)
			w.Write([]byte(`{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"nope","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_CANCELABLE"}]}}`))
		default:
			w.Header().Set("WWW-Authenticate", `Bearer realm="a2a"`)
			w.WriteHeader(401)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	c, err := Dial(ctx, srv.URL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetTask(ctx, "t9", -1)
	if e := A2AError(err); e == nil || e.Code != a2a.CodeTaskNotFound || classify(err) != "transport" || !strings.Contains(err.Error(), "TASK_NOT_FOUND: Task not found (task t9)") {
		t.Fatalf("jsonrpc error: %v", err)
	}
	c, _ = Dial(ctx, srv.URL, Options{Binding: BindingREST})
	_, err = c.CancelTask(ctx, "t9")
	if e := A2AError(err); e == nil || e.Code != a2a.CodeTaskNotCancelable {
		t.Fatalf("rest error: %v", err)
	}
	_, err = c.ListTasks(ctx, &a2a.ListTasksRequest{})
	var ce *Error
	if !errors.As(err, &ce) || ce.Kind != KindAuth || !strings.Contains(err.Error(), "asks for Bearer") {
		t.Fatalf("401: %v", err)
	}
}

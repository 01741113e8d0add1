package jsonrpc03_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/agenttest"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc03"
	rpc "github.com/caddy-a2a/caddy-a2a/internal/jsonrpc"
)

// TestTranslate (RPC-2): a 0.3 method name becomes its 1.0 call, served
// as 1.0; a 1.0 method name is not the compat's; untranslatable params are
// an error of the 1.0 method.
func TestTranslate(t *testing.T) {
	c := jsonrpc03.New(nil, "")
	params := json.RawMessage(`{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}}`)
	ac, call, ok, err := c.Translate(agent.Call{}, rpc.Call{Method: "message/send", Params: params})
	if !ok || err != nil {
		t.Fatalf("Translate(message/send) = %v %v", ok, err)
	}
	if call.Method != a2a.MethodSendMessage || ac.Version != a2a.ProtocolVersion {
		t.Errorf("translated to %q, version %q", call.Method, ac.Version)
	}
	if !strings.Contains(string(call.Params), `"ROLE_USER"`) {
		t.Errorf("params not translated to 1.0: %s", call.Params)
	}
	if _, _, ok, _ := c.Translate(agent.Call{}, rpc.Call{Method: a2a.MethodSendMessage}); ok {
		t.Error("a 1.0 method name was taken as 0.3")
	}
	_, call, ok, err = c.Translate(agent.Call{}, rpc.Call{Method: "tasks/get", Params: json.RawMessage(`{"id":7}`)})
	if !ok || err == nil || call.Method != a2a.MethodGetTask {
		t.Errorf("Translate(bad tasks/get) = %q %v %v, want the 1.0 method and an error", call.Method, ok, err)
	}
}

// TestLegacyPushAndEvents (RPC-2): through the compat's handler, the push
// configs a 0.3 caller creates (on their own, or inline with a message)
// are marked Legacy, so their deliveries carry 0.3 payloads; a 1.0 caller's
// are not; events carry their 0.3 rendering.
func TestLegacyPushAndEvents(t *testing.T) {
	svc, _ := agenttest.Service(t, agent.Config{Backend: backend.EchoBackend{}})
	rec := &recorder{Handler: agent.NewHandler(svc)}
	c := jsonrpc03.New(nil, "")
	h := c.Handler(rec)
	call := agent.Call{Version: "1.0"}
	text := "hi"
	cfg := &a2a.TaskPushNotificationConfig{URL: "https://example.com/hook"}
	req := &a2a.SendMessageRequest{
		Message:       &a2a.Message{MessageID: "m1", Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}},
		Configuration: &a2a.SendMessageConfiguration{TaskPushNotificationConfig: cfg},
	}
	st, _ := h.SendStreamingMessage(t.Context(), call, req)
	if !cfg.Legacy {
		t.Error("the inline push config of a 0.3 send is not marked Legacy")
	}
	if st != nil {
		ev, ok := c.Stream(st).Next(t.Context())
		if !ok || ev.Legacy == nil {
			t.Errorf("first event %+v has no 0.3 rendering", ev)
		}
		st.Close()
	}
	created := &a2a.TaskPushNotificationConfig{TaskID: "t", URL: "https://example.com/hook"}
	_, _ = h.CreateTaskPushNotificationConfig(t.Context(), call, created)
	if !rec.created || !created.Legacy {
		t.Error("a 0.3 caller's push config is not marked Legacy")
	}
	plain := &a2a.TaskPushNotificationConfig{TaskID: "t", URL: "https://example.com/hook"}
	_, _ = rec.Handler.CreateTaskPushNotificationConfig(t.Context(), call, plain)
	if plain.Legacy {
		t.Error("a 1.0 caller's push config is marked Legacy")
	}
}

// recorder notes that a config reached the handler behind the compat.
type recorder struct {
	agent.Handler
	created bool
}

func (r *recorder) CreateTaskPushNotificationConfig(ctx context.Context, call agent.Call, req *a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	r.created = true
	return r.Handler.CreateTaskPushNotificationConfig(ctx, call, req)
}

// TestDispatcherWithCompat: the dispatcher serves 0.3 method names only
// with the compat, and answers them in 0.3 form.
func TestDispatcherWithCompat(t *testing.T) {
	svc, _ := agenttest.Service(t, agent.Config{Backend: backend.EchoBackend{}})
	d := jsonrpc.NewDispatcher(agent.NewHandler(svc))
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m2","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`)
	out := d.Handle(t.Context(), agent.Call{}, msg)
	if !strings.Contains(string(out.Response), `"code":-32009`) {
		t.Errorf("without the compat: %s, want VersionNotSupportedError", out.Response)
	}
	out = d.WithCompat(jsonrpc03.New(nil, "")).Handle(t.Context(), agent.Call{}, msg)
	if !strings.Contains(string(out.Response), `"kind":"task"`) || !strings.Contains(string(out.Response), `"state":"input-required"`) {
		t.Errorf("with the compat: %s, want a 0.3 task", out.Response)
	}
}

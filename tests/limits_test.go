package tests

import (
	"net/http"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// TestLimitsE2E: limits blocks of the Caddyfile (AUTH-6) on the built
// binary — an authorization table of principal × method on JSON-RPC and
// REST, a rate limit with 429 + Retry-After — and the A2A request
// variables read by Caddy's own header handler.
func TestLimitsE2E(t *testing.T) {
	t.Parallel()
	gw := harness.StartGatewayWith(t, `
	header >X-A2A-Method {http.vars.a2a.method}
	header >X-A2A-Task {http.vars.a2a.task_id}
	header >X-A2A-Context {http.vars.a2a.context_id}
	header >X-A2A-Principal {http.vars.a2a.principal}
	a2a {`+cardBlock+`
		auth {
			principal admin bearer admin-token
			principal monitor bearer monitor-token
			principal bot bearer bot-token
		}
		limits monitor {
			allow_methods GetTask ListTasks
		}
		limits admin {
			max_turns 10
		}
		limits * {
			rate 2/s burst 2
		}
	}`, harness.Options{})
	u := gw.URL + "/"

	// admin has a block of its own: "*" does not apply; every method.
	res, rerr := harness.At(u, harness.Bearer("admin-token")).RPC(t, "SendMessage", map[string]any{"message": map[string]any{"messageId": "m-1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hi"}}}})
	if rerr != nil {
		t.Fatalf("admin SendMessage: %v", rerr)
	}
	task, _ := res["task"].(map[string]any)
	taskID, _ := task["id"].(string)
	if taskID == "" {
		t.Fatalf("no task in %v", res)
	}

	table := []struct {
		token, method string
		want          int
	}{
		{"monitor-token", "GetTask", http.StatusOK},
		{"monitor-token", "ListTasks", http.StatusOK},
		{"monitor-token", "SendMessage", http.StatusForbidden},
		{"monitor-token", "CancelTask", http.StatusForbidden},
		{"monitor-token", "CreateTaskPushNotificationConfig", http.StatusForbidden},
		{"admin-token", "GetTask", http.StatusOK},
	}
	for _, c := range table {
		r := harness.At(u, harness.Bearer(c.token)).Call(t, c.method, map[string]any{"id": taskID, "taskId": taskID})
		if r.StatusCode != c.want {
			t.Errorf("%s %s: HTTP %d %s, want %d", c.token, c.method, r.StatusCode, r.Raw, c.want)
		}
		if c.want == http.StatusForbidden {
			if reasonIn(r.Error) != "PERMISSION_DENIED" {
				t.Errorf("%s %s: error %v, want reason PERMISSION_DENIED", c.token, c.method, r.Error)
			}
		}
	}
	// REST: monitor may read the task list but not send.
	if r := harness.At(gw.URL+"/message:send").Do(t, "POST", `{"message":{"messageId":"m-2","role":"ROLE_USER","parts":[{"text":"x"}]}}`, harness.Bearer("monitor-token"), harness.Header("A2A-Version", "1.0"), harness.Header("Content-Type", "application/json")); r.StatusCode != http.StatusForbidden {
		t.Errorf("REST send as monitor: HTTP %d %s, want 403", r.StatusCode, r.Raw)
	}

	// Request variables: the admin's GetTask names its method, task,
	// context and principal in the deferred response headers.
	r := harness.At(u, harness.Bearer("admin-token")).Call(t, "GetTask", map[string]any{"id": taskID})
	if r.Header.Get("X-A2A-Method") != "GetTask" || r.Header.Get("X-A2A-Task") != taskID || r.Header.Get("X-A2A-Context") == "" || r.Header.Get("X-A2A-Principal") != "admin" {
		t.Errorf("request variables in headers: method %q task %q context %q principal %q", r.Header.Get("X-A2A-Method"), r.Header.Get("X-A2A-Task"), r.Header.Get("X-A2A-Context"), r.Header.Get("X-A2A-Principal"))
	}

	// bot: rate 2/s burst 2 → a quick burst of 6 has refusals with Retry-After.
	limited := 0
	for i := 0; i < 6; i++ {
		r := harness.At(u, harness.Bearer("bot-token")).Call(t, "ListTasks", map[string]any{})
		if r.StatusCode == http.StatusTooManyRequests {
			limited++
			if r.Header.Get("Retry-After") == "" || reasonIn(r.Error) != "RESOURCE_EXHAUSTED" {
				t.Errorf("429 without Retry-After or reason: %v %s", r.Header, r.Raw)
			}
		} else if r.StatusCode != http.StatusOK {
			t.Errorf("bot ListTasks: HTTP %d %s", r.StatusCode, r.Raw)
		}
	}
	if limited == 0 {
		t.Error("a burst of 6 at rate 2/s burst 2 was never refused")
	}
}

// reasonIn returns the ErrorInfo reason of a JSON-RPC error object.
func reasonIn(e map[string]any) string {
	details, _ := e["data"].([]any)
	for _, d := range details {
		if m, ok := d.(map[string]any); ok && m["@type"] == "type.googleapis.com/google.rpc.ErrorInfo" {
			s, _ := m["reason"].(string)
			return s
		}
	}
	return ""
}

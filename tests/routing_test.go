package tests

import (
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// TestUnknownPathNotFound: a path no handler of an a2a site serves is 404
// with a JSON error body (not Caddy's empty 200); a handler placed after
// a2a in the site still answers its own paths; a tenant prefix the site
// does not serve is 404 TASK_NOT_FOUND (TURN-10).
func TestUnknownPathNotFound(t *testing.T) {
	t.Parallel()
	gw := harness.StartGateway(t, `http://{{ADDR}} {
	a2a {
		card {
			name routing
		}
	}
	respond /other "other handler" 200
}`)
	for _, c := range []struct{ method, path string }{
		{"GET", "/nope"},
		{"GET", "/"},
		{"POST", "/v2/unknown"},
		{"GET", "/tasks/x/y/z"},
		{"GET", "/.well-known/nothing"},
	} {
		resp, b := do(t, c.method, gw.URL+c.path, nil)
		if resp.StatusCode != 404 || resp.Header.Get("Content-Type") != "application/json" ||
			string(b) != `{"error":{"code":404,"status":"NOT_FOUND","message":"Not found"}}` {
			t.Errorf("%s %s: %d %q %s", c.method, c.path, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
	}
	resp, body := do(t, "GET", gw.URL+"/other", nil)
	if resp.StatusCode != 200 || string(body) != "other handler" {
		t.Fatalf("/other: %d %q", resp.StatusCode, body)
	}
	resp, body = do(t, "GET", gw.URL+"/health", nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), "healthy") {
		t.Fatalf("/health: %d %q", resp.StatusCode, body)
	}

	// A task made without a tenant is not reachable under one.
	res, rerr := harness.At(gw.URL).RPC(t, "SendMessage", map[string]any{"message": map[string]any{"role": "ROLE_USER", "messageId": "m1", "parts": []any{map[string]any{"text": "hi"}}}})
	task, _ := res["task"].(map[string]any)
	if rerr != nil || task == nil {
		t.Fatalf("SendMessage: %v %v", res, rerr)
	}
	id, _ := task["id"].(string)
	resp, body = do(t, "GET", gw.URL+"/acme/tasks/"+id, map[string]string{"A2A-Version": "1.0"})
	if resp.StatusCode != 404 || !strings.Contains(string(body), "TASK_NOT_FOUND") || strings.Contains(string(body), id+`","contextId`) {
		t.Fatalf("GET /acme/tasks/{id}: %d %s", resp.StatusCode, body)
	}
	_, rerr = harness.At(gw.URL).RPC(t, "GetTask", map[string]any{"tenant": "acme", "id": id})
	if rerr == nil || rerr["code"] != float64(-32001) {
		t.Fatalf("GetTask with tenant acme: %v", rerr)
	}
	resp, body = do(t, "GET", gw.URL+"/tasks/"+id, map[string]string{"A2A-Version": "1.0"})
	if resp.StatusCode != 200 || !strings.Contains(string(body), id) {
		t.Fatalf("GET /tasks/{id}: %d %s", resp.StatusCode, body)
	}
}

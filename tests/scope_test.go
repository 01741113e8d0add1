package tests

import (
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// scopeSites serves two agents from one process and one data directory:
// agent-a on 127.0.0.1 and agent-b on localhost, each with its own token
// for its default principal. extra goes into both a2a blocks.
func scopeSites(extra string) string {
	site := func(host, name, token string) string {
		return `http://` + host + ` {
	a2a {
		card {
			name ` + name + `
			description "Scope test agent serving one of two sites."
			skill echo {
				name Echo
				description "Echoes the prompt back to the caller."
				tags echo
			}
		}
		auth {
			bearer ` + token + `
			no_env
		}
		backend echo
` + extra + `	}
}
`
	}
	return site("{{ADDR}}", "agent-a", "tok-a") + site("localhost:{{PORT}}", "agent-b", "tok-b")
}

// scopeCall sends one JSON-RPC call to host with token and decodes the reply.
func scopeCall(t *testing.T, g *harness.Gateway, host, token, method string, params any) map[string]any {
	t.Helper()
	return harness.At("http://"+host+":"+strings.TrimPrefix(g.Addr, "127.0.0.1:")+"/", harness.Bearer(token)).Call(t, method, params).JSON(t)
}

// TestOwnerScopeSeparatesSites: two sites on one data directory whose
// callers share a principal name ("default") never see each other's tasks
// (AUTH-4), unless they are given the same owner_scope.
func TestOwnerScopeSeparatesSites(t *testing.T) {
	t.Parallel()
	send := map[string]any{"message": map[string]any{"messageId": "m1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hello"}}}}

	t.Run("default scopes", func(t *testing.T) {
		g := harness.StartGatewayWith(t, scopeSites(""), harness.Options{Global: "a2a {\n\tdata_dir {{DIR}}/data\n}"})
		res := scopeCall(t, g, "127.0.0.1", "tok-a", "SendMessage", send)
		task, _ := res["result"].(map[string]any)["task"].(map[string]any)
		id, _ := task["id"].(string)
		if id == "" {
			t.Fatalf("no task from site A: %v", res)
		}
		got := scopeCall(t, g, "localhost", "tok-b", "GetTask", map[string]any{"id": id})
		if e, _ := got["error"].(map[string]any); e == nil || e["code"] != float64(-32001) {
			t.Fatalf("site B read site A's task: %v", got)
		}
		list := scopeCall(t, g, "localhost", "tok-b", "ListTasks", map[string]any{})
		if n := list["result"].(map[string]any)["totalSize"]; n != float64(0) {
			t.Fatalf("site B lists %v tasks, want 0: %v", n, list)
		}
		own := scopeCall(t, g, "127.0.0.1", "tok-a", "GetTask", map[string]any{"id": id})
		if own["result"] == nil {
			t.Fatalf("site A cannot read its own task: %v", own)
		}
	})

	t.Run("shared scope", func(t *testing.T) {
		g := harness.StartGatewayWith(t, scopeSites("\t\towner_scope shared\n"), harness.Options{Global: "a2a {\n\tdata_dir {{DIR}}/data\n}"})
		res := scopeCall(t, g, "127.0.0.1", "tok-a", "SendMessage", send)
		id, _ := res["result"].(map[string]any)["task"].(map[string]any)["id"].(string)
		got := scopeCall(t, g, "localhost", "tok-b", "GetTask", map[string]any{"id": id})
		if got["result"] == nil {
			t.Fatalf("with one owner_scope, site B should read the task: %v", got)
		}
	})
}

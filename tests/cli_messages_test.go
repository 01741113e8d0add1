package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// cliAgentScript is the README's bash agent, with a pause before its end
// so that a subscriber joins a running task.
const cliAgentScript = `#!/usr/bin/env bash
while IFS= read -r line; do
	case "$line" in *'"type":"cancel"'*) printf '%s\n' '{"v":1,"type":"end","outcome":"canceled"}'; continue ;; esac
	printf '%s\n' '{"v":1,"type":"text","text":"Working on it…"}'
	sleep 1.5
	printf '%s\n' '{"v":1,"type":"end","outcome":"input_required","text":"Done."}'
done
`

// TestCLIMessages (issue 28.4): the CLI says what an auth refusal was and
// suggests --token only when none was given; an exec agent's end text is
// printed once by call and task subscribe; tasks and task are one command.
func TestCLIMessages(t *testing.T) {
	t.Parallel()
	script := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(script, []byte(cliAgentScript), 0o755); err != nil {
		t.Fatal(err)
	}
	gw := harness.StartGateway(t, `a2a {
	card {
		name cli-messages
	}
	auth {
		principal admin bearer admin-token
		principal monitor bearer monitor-token
	}
	limits monitor {
		allow_methods GetTask ListTasks
	}
	backend exec `+script+`
}`)
	for _, c := range []struct {
		name      string
		args      []string
		want, not []string
	}{
		{"wrong token", []string{"call", "--token", "nope", gw.URL, "hi"}, []string{"HTTP 401", "the credential was rejected"}, []string{"--token"}},
		{"no token", []string{"call", gw.URL, "hi"}, []string{"HTTP 401", "no credential was sent", "pass --token"}, []string{"rejected"}},
		{"limits", []string{"call", "--token", "monitor-token", gw.URL, "hi"}, []string{"HTTP 403", "not allowed by the agent's limits", "This caller may not use SendStreamingMessage"}, []string{"--token"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := clientRun(t, "", nil, c.args...)
			r.wantCode(t, 3)
			for _, w := range c.want {
				if !strings.Contains(r.Stderr, w) {
					t.Errorf("stderr %q lacks %q", r.Stderr, w)
				}
			}
			for _, n := range c.not {
				if strings.Contains(r.Stderr, n) {
					t.Errorf("stderr %q has %q", r.Stderr, n)
				}
			}
		})
	}

	r := clientRun(t, "", nil, "call", "--token", "admin-token", gw.URL, "hi")
	r.wantCode(t, 0)
	if r.Stdout != "Working on it…Done.\n" {
		t.Errorf("call printed %q, want the text once", r.Stdout)
	}

	task := harness.At(gw.URL+"/", harness.Bearer("admin-token")).SendTask(t, map[string]any{
		"message":       map[string]any{"messageId": "m-sub", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hi"}}},
		"configuration": map[string]any{"returnImmediately": true},
	})
	id, _ := task["id"].(string)
	r = clientRun(t, "", nil, "task", "subscribe", "--token", "admin-token", gw.URL, id)
	r.wantCode(t, 0)
	if strings.Count(r.Stdout, "Done.") != 1 {
		t.Errorf("task subscribe printed %q, want Done. once", r.Stdout)
	}

	r = clientRun(t, "", nil, "tasks", "list", "--token", "admin-token", gw.URL)
	r.wantCode(t, 0)
	if !strings.Contains(r.Stdout, id) {
		t.Errorf("tasks list printed %q, want task %s", r.Stdout, id)
	}
}

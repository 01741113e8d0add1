package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// TestExampleA2AGoWithToken (CARD-4, CARD-5): Caddyfile.example with its
// bearer token line and its security_requirements_form a2a-go line
// uncommented (nothing else changed) is usable from the official Go SDK:
// a2a-go discovers the card, sends and streams with the token.
func TestExampleA2AGoWithToken(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join(harness.RepoRoot(), "Caddyfile.example"))
	if err != nil {
		t.Fatal(err)
	}
	cfgText := string(src)
	for _, line := range []string{"# security_requirements_form a2a-go", "# bearer {env.IACCODE_A2A_HTTP_TOKEN}"} {
		if strings.Count(cfgText, line) != 1 {
			t.Fatalf("Caddyfile.example has %d lines %q, want one", strings.Count(cfgText, line), line)
		}
		cfgText = strings.Replace(cfgText, line, strings.TrimPrefix(line, "# "), 1)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(cfg, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	port := harness.FreePort(t)
	out := exampleRun(t, dir, cfg, harness.Env(dir, fmt.Sprintf("A2A_ADDR=127.0.0.1:%d", port),
		"A2A_DATA_DIR="+filepath.Join(dir, "data"), "A2A_ADMIN=off", "IACCODE_A2A_HTTP_TOKEN="+gosdkToken), port)
	defer func() {
		if t.Failed() {
			t.Logf("output:\n%s", out.String())
		}
	}()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, binding := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON} {
		t.Run(string(binding), func(t *testing.T) {
			client, card := gosdkClient(t, ctx, base, binding)
			if card.Name != "iac-code" || len(card.SecurityRequirements) == 0 {
				t.Fatalf("a2a-go read card %q with requirements %v", card.Name, card.SecurityRequirements)
			}
			if _, err := client.SendMessage(ctx, &a2a.SendMessageRequest{
				Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("no token")),
			}); err == nil {
				t.Error("SendMessage without the token succeeded: auth is not on")
			}
			authed := gosdkSession(ctx)
			res, err := client.SendMessage(authed, &a2a.SendMessageRequest{
				Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Create a VPC")),
			})
			if err != nil {
				t.Fatalf("SendMessage with the token: %v", err)
			}
			task, ok := res.(*a2a.Task)
			if !ok {
				t.Fatalf("SendMessage result is %T", res)
			}
			interopGoCheckTurnDone(t, task, "Create a VPC")
			var events []a2a.Event
			for ev, err := range client.SendStreamingMessage(authed, &a2a.SendMessageRequest{
				Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Review this template")),
			}) {
				if err != nil {
					t.Fatalf("stream error after %d events: %v", len(events), err)
				}
				events = append(events, ev)
			}
			interopGoCheckStream(t, events, "Review this template", a2a.TaskStateInputRequired)
		})
	}
}

package tests

// Issue 30, AUTH-8 with AUTH-7: scopes in authorization with tokens the
// real OpenID provider (tests/internal/idp) issues by the client
// credentials grant — not hand-signed ones. The gateway discovers the
// provider (`jwt { oidc_issuer … }`), limits the callers whose token grants
// a2a.read to GetTask/ListTasks, refuses a message for a skill whose
// requires_scopes the token lacks (naming the scope), and lists on the
// extended card only the skills the token may use. The official Go SDK
// (a2a-go) is one of the clients; `caddy a2a card validate --probe`
// passes against the gateway.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
	"github.com/caddy-a2a/caddy-a2a/tests/internal/idp"
)

// identityScopesSite is an OIDC site with a scope rule and a skill that
// requires deploy:write.
func identityScopesSite(issuer string) string {
	return `a2a {
	card {
		name scoped-agent
		description "An agent whose methods and skills need scopes."
		security_requirements_form a2a-go
		skill chat {
			name Chat
			description "Talks about the stack."
			tags chat
		}
		skill deploy {
			name Deploy
			description "Deploys the generated stack."
			tags ops
			requires_scopes deploy:write
		}
	}
	auth {
		no_env
		jwt {
			oidc_issuer ` + issuer + `
			audience caddy-a2a
			allow_private_networks 127.0.0.1
		}
	}
	limits scope:a2a.read {
		allow_methods GetTask ListTasks
	}
	backend echo
}`
}

// TestIdentityScopesWithProviderTokens (AUTH-7, AUTH-8): scope-based
// allow/deny, per-skill scopes and the filtered extended card with tokens
// of the real OpenID provider.
func TestIdentityScopesWithProviderTokens(t *testing.T) {
	t.Parallel()
	p := idp.Start(t, oidcAgent)
	gw := oidcStart(t, identityScopesSite(p.Issuer))
	// One service client, tokens with different scopes: the principal is
	// the same (sub = client id), so the reader token sees the writer's task.
	reader := p.Token(t, oidcAgent.ID, oidcAgent.Secret, "a2a.read")
	writer := p.Token(t, oidcAgent.ID, oidcAgent.Secret, "a2a.write")
	deployer := p.Token(t, oidcAgent.ID, oidcAgent.Secret, "a2a.write", "deploy:write")

	call := func(tok, method string, params any) (int, map[string]any, map[string]any) {
		t.Helper()
		r := harness.At(gw.URL, harness.Bearer(tok)).Call(t, method, params)
		var doc struct {
			Error map[string]any `json:"error"`
		}
		_ = json.Unmarshal(r.Raw, &doc)
		return r.StatusCode, r.Result, doc.Error
	}
	denied := func(name string, status int, rerr map[string]any) {
		t.Helper()
		if status != http.StatusForbidden || rerr == nil || rerr["code"] != float64(-32050) {
			t.Errorf("%s: HTTP %d %v, want 403 PERMISSION_DENIED (-32050)", name, status, rerr)
		}
	}

	// a2a.read may not send; a broader scope may.
	status, _, rerr := call(reader, "SendMessage", scopesMessage(""))
	denied("a2a.read SendMessage", status, rerr)
	status, res, rerr := call(writer, "SendMessage", scopesMessage(""))
	if status != http.StatusOK || rerr != nil {
		t.Fatalf("a2a.write SendMessage: HTTP %d %v", status, rerr)
	}
	task, _ := res["task"].(map[string]any)
	taskID, _ := task["id"].(string)
	if taskID == "" {
		t.Fatalf("a2a.write SendMessage: no task in %v", res)
	}
	// a2a.read may read it, with the official Go SDK.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	card, err := agentcard.DefaultResolver.Resolve(ctx, gw.URL)
	if err != nil {
		t.Fatalf("a2a-go cannot read the card: %v", err)
	}
	store := a2aclient.NewInMemoryCredentialsStore()
	store.Set("reader", "bearerAuth", a2aclient.AuthCredential(reader))
	store.Set("writer", "bearerAuth", a2aclient.AuthCredential(writer))
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithCallInterceptors(&a2aclient.AuthInterceptor{Service: store}))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Destroy() }()
	rctx := a2aclient.AttachSessionID(ctx, "reader")
	got, err := client.GetTask(rctx, &a2a.GetTaskRequest{ID: a2a.TaskID(taskID)})
	if err != nil || string(got.ID) != taskID {
		t.Fatalf("a2a-go GetTask with a2a.read: %v, %v", got, err)
	}
	list, err := client.ListTasks(rctx, &a2a.ListTasksRequest{})
	if err != nil || len(list.Tasks) != 1 {
		t.Fatalf("a2a-go ListTasks with a2a.read: %v, %v", list, err)
	}
	msg := &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("read-only send"))}
	if _, err := client.SendMessage(rctx, msg); err == nil || !errorsIsPermissionDenied(err) {
		t.Errorf("a2a-go SendMessage with a2a.read: %v, want permission denied", err)
	}
	if _, err := client.SendMessage(a2aclient.AttachSessionID(ctx, "writer"), msg); err != nil {
		t.Errorf("a2a-go SendMessage with a2a.write: %v", err)
	}

	// The deploy skill needs deploy:write; the refusal names it.
	status, _, rerr = call(writer, "SendMessage", scopesMessage("deploy"))
	denied("deploy without deploy:write", status, rerr)
	if b, _ := json.Marshal(rerr); !strings.Contains(b2s(rerr["message"]), "deploy:write") || !strings.Contains(string(b), `"missingScopes":"deploy:write"`) {
		t.Errorf("skill refusal %s, want it to name deploy:write", b)
	}
	if status, _, rerr := call(deployer, "SendMessage", scopesMessage("deploy")); status != http.StatusOK || rerr != nil {
		t.Errorf("deploy with deploy:write: HTTP %d %v", status, rerr)
	}
	if status, _, rerr := call(writer, "SendMessage", scopesMessage("chat")); status != http.StatusOK || rerr != nil {
		t.Errorf("chat (no scope needed): HTTP %d %v", status, rerr)
	}

	// The extended card lists only the permitted skills.
	for _, c := range []struct {
		name, tok string
		want      []string
	}{{"a2a.write", writer, []string{"chat"}}, {"a2a.write deploy:write", deployer, []string{"chat", "deploy"}}} {
		r := harness.At(gw.URL, harness.Bearer(c.tok)).Call(t, "GetExtendedAgentCard", map[string]any{})
		var ids []string
		skills, _ := r.Result["skills"].([]any)
		for _, s := range skills {
			if m, ok := s.(map[string]any); ok {
				ids = append(ids, b2s(m["id"]))
			}
		}
		if r.StatusCode != http.StatusOK || !slices.Equal(ids, c.want) {
			t.Errorf("extended card for %s: HTTP %d skills %v, want %v: %s", c.name, r.StatusCode, ids, c.want, r.Raw)
		}
	}

	// AUTH-7/AUTH-8 done-when: card validate --probe passes on this gateway.
	out, err := harness.Run(t, gw.Dir, "a2a", "card", "validate", "--probe", gw.URL, "-H", "Authorization: Bearer "+deployer)
	if err != nil || !strings.Contains(out, "ok: no errors") {
		t.Errorf("card validate --probe: %v\n%s", err, out)
	}
}

// b2s is v as a string ("" when it is none).
func b2s(v any) string { s, _ := v.(string); return s }

// errorsIsPermissionDenied reports whether an a2a-go error is A2A's
// PERMISSION_DENIED: its sentinel, or the HTTP 403 the JSON-RPC transport
// of a2a-go v2.3.1 reports without reading the error body.
func errorsIsPermissionDenied(err error) bool {
	return errors.Is(err, a2a.ErrUnauthorized) || strings.Contains(err.Error(), "403 Forbidden")
}

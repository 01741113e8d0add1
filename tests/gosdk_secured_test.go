package tests

// CARD-4: the official Go SDK (a2a-go v2.3.1, pinned in go.mod) against a
// gateway with bearer auth. Its card resolver reads securityRequirements
// only in its own form (scopes as bare arrays, a2a-go issue 430), so a card
// in the spec's ProtoJSON form cannot be discovered; the card option
// `security_requirements_form a2a-go` serves the form it reads.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// gosdkToken is the bearer token of the secured gateways.
const gosdkToken = "gosdk-secret-token-0123456789"

// gosdkParseError is how a2a-go v2.3.1 fails on a ProtoJSON card with auth.
const gosdkParseError = "card parsing failed: json: cannot unmarshal object into Go struct field AgentCard.securityRequirements.schemes"

// gosdkSecuredSite is a site with bearer auth, gRPC and a card signed with
// HS256; form is the root card's security_requirements_form line ("" for
// none). Agent "planner" inherits the form, agent "strict" sets protojson.
// The root's echo turns take about 1 s (10 chunks, 100 ms apart), long
// enough to cancel one.
func gosdkSecuredSite(form string) string {
	return `a2a {
	card {
		name secured-agent
		description "A test agent behind bearer auth for the a2a-go tests."
		` + form + `
		skill echo {
			name Echo
			description "Echoes the prompt back to the caller."
			tags echo test
		}
		sign hs256 {
			kid hs-1
			secret "` + strings.Repeat("s", 32) + `"
		}
	}
	auth {
		no_env
		bearer ` + gosdkToken + `
	}
	grpc
	backend echo {
		chunks 10
		delay 100ms
	}
	agent planner {
		card {
			name planner
		}
		backend echo
	}
	agent strict {
		card {
			name strict
			security_requirements_form protojson
		}
		backend echo
	}
}`
}

// gosdkStartSecured starts gosdkSecuredSite(form) with h2c for gRPC.
func gosdkStartSecured(t *testing.T, form string) *harness.Gateway {
	t.Helper()
	return harness.StartGatewayWith(t, gosdkSecuredSite(form), harness.Options{
		Global:       "storage file_system {{DIR}}/storage\na2a {\n\tdata_dir {{DIR}}/data\n}\nservers {\n\tprotocols h1 h2c\n}",
		StartTimeout: 30 * time.Second,
	})
}

// gosdkClient resolves the card at base with a2a-go's resolver and creates
// a client for binding whose AuthInterceptor sends the token for the
// card's bearerAuth requirement (the SDK's own auth path, which works only
// when it could read securityRequirements). Calls need gosdkSession(ctx).
func gosdkClient(t *testing.T, ctx context.Context, base string, binding a2a.TransportProtocol) (*a2aclient.Client, *a2a.AgentCard) {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(ctx, base)
	if err != nil {
		t.Fatalf("a2a-go cannot discover the card at %s: %v", base, err)
	}
	store := a2aclient.NewInMemoryCredentialsStore()
	store.Set("s1", "bearerAuth", gosdkToken)
	client, err := a2aclient.NewFromCard(ctx, card,
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{binding}}),
		a2aclient.WithCallInterceptors(&a2aclient.AuthInterceptor{Service: store}),
		interopGRPCTransport(&interopGateway{}))
	if err != nil {
		t.Fatalf("NewFromCard(%s): %v", binding, err)
	}
	t.Cleanup(func() { _ = client.Destroy() })
	return client, card
}

// gosdkSession attaches the credentials session of gosdkClient.
func gosdkSession(ctx context.Context) context.Context { return a2aclient.AttachSessionID(ctx, "s1") }

// TestGoSDKSecuredCard (CARD-4, CARD-6, CARD-8, TURN-10): with
// `security_requirements_form a2a-go` the official Go SDK discovers the
// signed card of a site with bearer auth, reads its requirements and uses
// the site with the token over JSON-RPC, HTTP+JSON and gRPC: send, stream,
// get, cancel mid-turn and the extended card. An `agent` block inherits
// the form; one that sets protojson is not readable by a2a-go. `card
// validate` warns that the form is not the spec's, with no error.
func TestGoSDKSecuredCard(t *testing.T) {
	t.Parallel()
	gw := gosdkStartSecured(t, "security_requirements_form a2a-go")
	raw := string(harness.At(gw.URL+"/.well-known/agent-card.json").Do(t, "GET", "").Raw)
	if !strings.Contains(raw, `"securityRequirements":[{"schemes":{"bearerAuth":[]}}]`) || !strings.Contains(raw, `"signatures":[`) {
		t.Fatalf("root card is not the signed a2a-go form:\n%s", raw)
	}
	for _, binding := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON, a2a.TransportProtocolGRPC} {
		t.Run(string(binding), func(t *testing.T) { gosdkScenario(t, gw.URL, binding) })
	}

	t.Run("AgentInheritsForm", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		client, card := gosdkClient(t, ctx, gw.URL+"/planner", a2a.TransportProtocolJSONRPC)
		if card.Name != "planner" || len(card.SecurityRequirements) != 1 {
			t.Errorf("planner card: name %q, requirements %v", card.Name, card.SecurityRequirements)
		}
		res, err := client.SendMessage(gosdkSession(ctx), &a2a.SendMessageRequest{
			Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello planner")),
		})
		if err != nil {
			t.Fatalf("SendMessage to planner: %v", err)
		}
		if task, ok := res.(*a2a.Task); !ok {
			t.Errorf("planner result is %T", res)
		} else {
			interopGoCheckTurnDone(t, task, "hello planner")
		}
	})

	t.Run("AgentOverridesForm", func(t *testing.T) {
		_, err := agentcard.DefaultResolver.Resolve(context.Background(), gw.URL+"/strict")
		if err == nil || !strings.Contains(err.Error(), gosdkParseError) {
			t.Errorf("a2a-go on the protojson agent card: %v, want %q", err, gosdkParseError)
		}
	})

	t.Run("Validate", func(t *testing.T) {
		out, err := harness.Run(t, gw.Dir, "a2a", "card", "validate", gw.URL)
		if err != nil || !strings.Contains(out, "the a2a-go <= v2.3.1 compatibility form") || strings.Contains(out, "error ") {
			t.Errorf("card validate on the a2a-go form: %v\n%s", err, out)
		}
	})

	// Our own client reads the a2a-go form too (discovery, then a call).
	t.Run("OwnClient", func(t *testing.T) {
		r := clientRun(t, "", nil, "call", "--token", gosdkToken, gw.URL+"/planner", "hello from our client")
		if r.Code != 0 || !strings.Contains(r.Stdout, "Echo: hello from our client") {
			t.Errorf("caddy a2a call on the a2a-go form card: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
		}
	})
}

// gosdkScenario is send, stream, get, cancel and the extended card through
// a2a-go over binding, with the token; a call without it is refused.
func gosdkScenario(t *testing.T, base string, binding a2a.TransportProtocol) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client, card := gosdkClient(t, ctx, base, binding)
	if len(card.SecurityRequirements) != 1 {
		t.Fatalf("a2a-go read requirements %v, want one (bearerAuth)", card.SecurityRequirements)
	}
	if _, ok := card.SecurityRequirements[0]["bearerAuth"]; !ok {
		t.Errorf("a2a-go requirement = %v, want bearerAuth", card.SecurityRequirements[0])
	}
	if hs, ok := card.SecuritySchemes["bearerAuth"].(a2a.HTTPAuthSecurityScheme); !ok || hs.Scheme != "Bearer" {
		t.Errorf("a2a-go bearerAuth scheme = %#v", card.SecuritySchemes["bearerAuth"])
	}
	authed := gosdkSession(ctx)
	msg := func(text string) *a2a.SendMessageRequest {
		return &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))}
	}

	if _, err := client.SendMessage(ctx, msg("no token here")); err == nil {
		t.Error("SendMessage without the token succeeded")
	}

	prompt := "hello secured gateway over " + string(binding)
	var first *a2a.Task
	t.Run("SendMessage", func(t *testing.T) {
		task := interopGoSendTask(t, authed, client, "SendMessage", msg(prompt))
		first = task
		interopGoCheckTurnDone(t, task, prompt)
	})

	t.Run("SendStreamingMessage", func(t *testing.T) {
		sp := "streaming to the secured gateway " + string(binding)
		var events []a2a.Event
		for ev, err := range client.SendStreamingMessage(authed, msg(sp)) {
			if err != nil {
				t.Fatalf("stream error after %d events: %v", len(events), err)
			}
			events = append(events, ev)
		}
		interopGoCheckStream(t, events, sp, a2a.TaskStateInputRequired)
	})

	t.Run("GetTask", func(t *testing.T) {
		if first == nil {
			t.Skip("no task from SendMessage")
		}
		task, err := client.GetTask(authed, &a2a.GetTaskRequest{ID: first.ID})
		if err != nil {
			t.Fatalf("GetTask: %v", err)
		}
		if task.ID != first.ID {
			t.Errorf("GetTask returned %s, want %s", task.ID, first.ID)
		}
		interopGoCheckTurnDone(t, task, prompt)
	})

	t.Run("CancelTask", func(t *testing.T) { gosdkCancel(t, authed, client, binding) })

	t.Run("GetExtendedAgentCard", func(t *testing.T) {
		ext, err := client.GetExtendedAgentCard(authed, &a2a.GetExtendedAgentCardRequest{})
		if err != nil {
			t.Fatalf("GetExtendedAgentCard: %v", err)
		}
		runtime := false
		for _, e := range ext.Capabilities.Extensions {
			runtime = runtime || e.URI == "urn:caddy-a2a:gateway-runtime:v1"
		}
		if !runtime || len(ext.SecurityRequirements) != 1 {
			t.Errorf("extended card: runtime extension %v, requirements %v", runtime, ext.SecurityRequirements)
		}
	})
}

// gosdkCancel streams a slow turn, cancels it once it produced text, and
// checks the task ends CANCELED.
func gosdkCancel(t *testing.T, ctx context.Context, client *a2aclient.Client, binding a2a.TransportProtocol) {
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	s := interopGoStream(t, sctx, client, "cancel this long running turn ("+string(binding)+")")
	task, canceled := s.cancelRunning(ctx, client)
	if canceled.Status.State != a2a.TaskStateCanceled {
		t.Errorf("CancelTask returned state %s, want %s", canceled.Status.State, a2a.TaskStateCanceled)
	}
	s.rest()
	got, err := client.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Errorf("GetTask after cancel: %v, state %v", err, got)
	}
}

// TestGoSDKSecuredCardNeedsTheOption (CARD-4): without the option the card
// of a site with auth is ProtoJSON, as A2A 1.0 specifies, and a2a-go
// v2.3.1 cannot discover it (the failure of a2a-go issue 430); `card
// validate` says so and names the option.
func TestGoSDKSecuredCardNeedsTheOption(t *testing.T) {
	t.Parallel()
	gw := gosdkStartSecured(t, "")
	raw := string(harness.At(gw.URL+"/.well-known/agent-card.json").Do(t, "GET", "").Raw)
	if !strings.Contains(raw, `"securityRequirements":[{"schemes":{"bearerAuth":{"list":[]}}}]`) {
		t.Fatalf("default card is not ProtoJSON:\n%s", raw)
	}
	for _, base := range []string{gw.URL, gw.URL + "/planner"} {
		_, err := agentcard.DefaultResolver.Resolve(context.Background(), base)
		if err == nil || !strings.Contains(err.Error(), gosdkParseError) {
			t.Errorf("a2a-go on the default card at %s: %v, want %q", base, err, gosdkParseError)
		}
	}
	out, err := harness.Run(t, gw.Dir, "a2a", "card", "validate", gw.URL)
	if err != nil || !strings.Contains(out, "a2a-go (the official Go SDK) up to v2.3.1 cannot read this card") ||
		!strings.Contains(out, "security_requirements_form a2a-go") {
		t.Errorf("card validate on the default card: %v\n%s", err, out)
	}
}

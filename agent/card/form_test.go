package card

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	goa2a "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/jws"
)

// securedRuntime is a runtime with every auth scheme and the optional card
// features on, so a2a-go has the whole card to parse.
func securedRuntime() Runtime {
	return Runtime{
		BaseURL: "https://agent.example/", Bearer: true, BearerJWT: true, Basic: true, APIKey: true,
		PushNotifications: true, ThinkingTypes: []string{"tool_trace"}, EventLogSize: 64, LegacyV03: true,
		Bindings:   []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC},
		Interfaces: []Interface{{Path: "/ws", Binding: a2a.BindingWebSocket, WebSocket: true}},
		Tenant:     "planner",
		UpstreamSkills: []a2a.AgentSkill{{ID: "up", Name: "Upstream", Description: "From the upstream agent.", Tags: []string{"x"},
			SecurityRequirements: []a2a.SecurityRequirement{{Schemes: map[string]a2a.StringList{SchemeBearer: {List: []string{"deploy:write"}}}}}}},
	}
}

func renderBody(t *testing.T, c *a2a.AgentCard) []byte {
	t.Helper()
	r, err := Render(c)
	if err != nil {
		t.Fatal(err)
	}
	return r.Body
}

// TestRequirementsFormDefaultIsProtoJSON (CARD-4): by default the
// requirements are ProtoJSON, which a2a-go v2.3.1's card parser refuses
// with the error of a2a-go issue 430.
func TestRequirementsFormDefaultIsProtoJSON(t *testing.T) {
	for _, form := range []string{"", FormProtoJSON} {
		cfg := validConfig()
		cfg.SecurityRequirementsForm = form
		body := string(renderBody(t, Build(cfg, securedRuntime())))
		for _, want := range []string{
			`"securityRequirements":[{"schemes":{"bearerAuth":{"list":[]}}},{"schemes":{"basicAuth":{"list":[]}}},{"schemes":{"apiKeyAuth":{"list":[]}}}]`,
			`"securityRequirements":[{"schemes":{"bearerAuth":{"list":["deploy:write"]}}}]`, // the upstream skill's
		} {
			if !strings.Contains(body, want) {
				t.Errorf("form %q: card lacks %s:\n%s", form, want, body)
			}
		}
		_, err := agentcard.DefaultCardParser([]byte(body))
		if err == nil || !strings.Contains(err.Error(), "cannot unmarshal object into Go struct field AgentCard.securityRequirements.schemes") {
			t.Errorf("form %q: a2a-go parser error = %v, want the a2a-go issue 430 error", form, err)
		}
	}
}

// TestRequirementsFormA2AGo (CARD-4): security_requirements_form a2a-go
// writes bare scope arrays on the card and its skills; a2a-go v2.3.1 parses
// the whole card (every scheme, binding, extension and the 0.3 dual
// members), and our own parser reads it back unchanged.
func TestRequirementsFormA2AGo(t *testing.T) {
	cfg := validConfig()
	cfg.SecurityRequirementsForm = FormA2AGo
	rt := securedRuntime()
	body := renderBody(t, Build(cfg, rt))
	for _, want := range []string{
		`"securityRequirements":[{"schemes":{"bearerAuth":[]}},{"schemes":{"basicAuth":[]}},{"schemes":{"apiKeyAuth":[]}}]`,
		`"securityRequirements":[{"schemes":{"bearerAuth":["deploy:write"]}}]`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("card lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(string(body), `"list"`) {
		t.Errorf("a2a-go form card still has a ProtoJSON list:\n%s", body)
	}
	if rt.UpstreamSkills[0].SecurityRequirements[0].Form != a2a.RequirementsProtoJSON {
		t.Error("Build changed the upstream skills it was given")
	}

	gc, err := agentcard.DefaultCardParser(body)
	if err != nil {
		t.Fatalf("a2a-go v2.3.1 cannot parse the a2a-go form card: %v\n%s", err, body)
	}
	if len(gc.SecurityRequirements) != 3 {
		t.Fatalf("a2a-go read %d requirements, want 3: %+v", len(gc.SecurityRequirements), gc.SecurityRequirements)
	}
	if _, ok := gc.SecurityRequirements[0][goa2a.SecuritySchemeName(SchemeBearer)]; !ok {
		t.Errorf("a2a-go requirement 0 = %v, want bearerAuth", gc.SecurityRequirements[0])
	}
	if hs, ok := gc.SecuritySchemes[SchemeBearer].(goa2a.HTTPAuthSecurityScheme); !ok || hs.Scheme != "Bearer" || hs.BearerFormat != "JWT" {
		t.Errorf("a2a-go bearerAuth scheme = %#v", gc.SecuritySchemes[SchemeBearer])
	}
	if ak, ok := gc.SecuritySchemes[SchemeAPIKey].(goa2a.APIKeySecurityScheme); !ok || ak.Name != "X-API-Key" {
		t.Errorf("a2a-go apiKeyAuth scheme = %#v", gc.SecuritySchemes[SchemeAPIKey])
	}
	var up *goa2a.AgentSkill
	for i := range gc.Skills {
		if gc.Skills[i].ID == "up" {
			up = &gc.Skills[i]
		}
	}
	if up == nil || len(up.SecurityRequirements) != 1 || len(up.SecurityRequirements[0][goa2a.SecuritySchemeName(SchemeBearer)]) != 1 {
		t.Errorf("a2a-go skill requirements: %+v", up)
	}
	if len(gc.SupportedInterfaces) < 4 || gc.SupportedInterfaces[0].Tenant != "planner" || !gc.Capabilities.Streaming || !gc.Capabilities.ExtendedAgentCard {
		t.Errorf("a2a-go read interfaces %+v, capabilities %+v", gc.SupportedInterfaces, gc.Capabilities)
	}

	// CARD-6: one signing payload for both forms (scopes included).
	cfg.SecurityRequirementsForm = FormProtoJSON
	spec := renderBody(t, Build(cfg, rt))
	pa, errA := jws.CanonicalCard(body)
	ps, errS := jws.CanonicalCard(spec)
	if errA != nil || errS != nil || string(pa) != string(ps) || !strings.Contains(string(ps), `"deploy:write"`) {
		t.Errorf("signing payloads of the two forms differ:\n%s\n%s", pa, ps)
	}

	var back a2a.AgentCard
	if err := json.Unmarshal(body, &back); err != nil {
		t.Fatalf("our parser cannot read the a2a-go form: %v", err)
	}
	if len(back.SecurityRequirements) != 3 || back.SecurityRequirements[0].Schemes[SchemeBearer].List == nil {
		t.Errorf("our parser read %+v", back.SecurityRequirements)
	}
	if got := back.Skills[len(back.Skills)-1].SecurityRequirements[0].Schemes[SchemeBearer].List; len(got) != 1 || got[0] != "deploy:write" {
		t.Errorf("our parser read skill scopes %v", got)
	}
}

// TestRequirementsFormValidate (CARD-4): an unknown form is a config error
// naming the valid ones.
func TestRequirementsFormValidate(t *testing.T) {
	cfg := validConfig()
	cfg.SecurityRequirementsForm = "bare"
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), `security_requirements_form: "bare" is not a form (valid: protojson, a2a-go)`) {
		t.Fatalf("Validate = %v", err)
	}
	for _, ok := range []string{"", FormProtoJSON, FormA2AGo} {
		cfg.SecurityRequirementsForm = ok
		if err := cfg.Validate(); err != nil {
			t.Errorf("form %q: %v", ok, err)
		}
	}
}

// TestRequirementsFormSignedAndExtended (CARD-4, CARD-6, CARD-8): with the
// a2a-go form a verifier of the served bytes accepts the signature; the
// extended card keeps the form, and its proto copy (gRPC) is ProtoJSON
// again with the same payload, so its signature verifies too.
func TestRequirementsFormSignedAndExtended(t *testing.T) {
	secret := strings.Repeat("k", 32)
	signers, err := jws.LoadSigners([]jws.SignKey{{Alg: "hs256", KID: "hs", Secret: secret}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := validConfig()
	cfg.SecurityRequirementsForm = FormA2AGo
	h, err := NewHandler(*cfg, Options{Signers: signers, Security: &Security{Bearer: true}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	_, body := get(t, "GET", srv.URL+WellKnownPath, nil)
	if !strings.Contains(string(body), `"securityRequirements":[{"schemes":{"bearerAuth":[]}}]`) || !strings.Contains(string(body), `"signatures":[`) {
		t.Fatalf("signed a2a-go form card:\n%s", body)
	}
	keys := &jws.KeySet{}
	if err := keys.AddSecret("hs", []byte(secret)); err != nil {
		t.Fatal(err)
	}
	v := &jws.Verifier{Keys: keys}
	if _, err := v.VerifyCard(context.Background(), body); err != nil {
		t.Errorf("the signature does not cover the served a2a-go form card: %v", err)
	}
	if _, err := agentcard.DefaultCardParser(body); err != nil {
		t.Errorf("a2a-go cannot parse the signed card: %v", err)
	}

	ext := Extend(h.CardAt("https://agent.example/"), RuntimeDetails{Store: "sqlite", Push: "disabled"})
	if err := h.Sign(ext); err != nil {
		t.Fatal(err)
	}
	eb, err := json.Marshal(ext)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(eb), `{"schemes":{"bearerAuth":[]}}`) {
		t.Errorf("extended card lost the a2a-go form:\n%s", eb)
	}
	if _, err := v.VerifyCard(context.Background(), eb); err != nil {
		t.Errorf("extended card signature: %v", err)
	}
	if _, err := agentcard.DefaultCardParser(eb); err != nil {
		t.Errorf("a2a-go cannot parse the extended card: %v", err)
	}
	pb, _ := json.Marshal(ext.WithRequirementsForm(a2a.RequirementsProtoJSON))
	if !strings.Contains(string(pb), `{"schemes":{"bearerAuth":{"list":[]}}}`) {
		t.Errorf("proto copy of the extended card: %s", pb)
	}
	// The payload is the card's ProtoJSON form either way, so the copy
	// gRPC carries keeps valid signatures.
	if _, err := v.VerifyCard(context.Background(), pb); err != nil {
		t.Errorf("the ProtoJSON copy of the signed extended card does not verify: %v", err)
	}
	p1, err1 := jws.CanonicalCard(eb)
	p2, err2 := jws.CanonicalCard(pb)
	if err1 != nil || err2 != nil || string(p1) != string(p2) {
		t.Errorf("payloads differ by form:\n%s\n%s", p1, p2)
	}
	if again, _ := json.Marshal(ext); string(again) != string(eb) {
		t.Error("WithRequirementsForm changed the card it copied")
	}
}

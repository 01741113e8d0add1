package agent

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// Test headers carrying the caller's scopes (space-separated; "|" keeps a
// whole token with spaces or commas) and claims (NAME=V1|V2) to the test
// wrapper, in place of a JWT.
const (
	scopesHeader = "X-Test-Scopes"
	claimsHeader = "X-Test-Claim"
)

// newScopeTestEnv is newTestEnv whose wrapper also puts an Identity built
// from the test headers into the request context, as caddymodule's auth
// handler does (AUTH-8).
func newScopeTestEnv(t *testing.T, cfg Config) *testEnv {
	t.Helper()
	e := newTestEnv(t, cfg)
	inner := e.h
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var id *Identity
		if v := r.Header.Values(scopesHeader); len(v) > 0 {
			id = &Identity{Scopes: v}
		}
		for _, c := range r.Header.Values(claimsHeader) {
			if id == nil {
				id = &Identity{}
			}
			if id.Claims == nil {
				id.Claims = map[string][]string{}
			}
			name, vals, _ := strings.Cut(c, "=")
			id.Claims[name] = strings.Split(vals, "|")
		}
		r = r.WithContext(WithIdentity(r.Context(), id))
		if !inner.Serve(w, r, r.Header.Get(principalHeader)) {
			http.Error(w, "not an A2A route", http.StatusTeapot)
		}
	}))
	t.Cleanup(srv.Close)
	e.srv = srv
	return e
}

// scoped returns v1 headers for principal with the scope tokens and claims.
func scoped(principal string, scopes []string, claims ...string) http.Header {
	h := v1Headers(principal)
	for _, s := range scopes {
		h.Add(scopesHeader, s)
	}
	for _, c := range claims {
		h.Add(claimsHeader, c)
	}
	return h
}

// rpcAs posts one JSON-RPC call with hdr and returns the HTTP status and
// the JSON-RPC reply.
func rpcAs(e *testEnv, hdr http.Header, method string, params any) (int, rpcReply) {
	e.t.Helper()
	hr := e.do(http.MethodPost, "/", []byte(rpcBody(nextRPCID(), method, params)), hdr)
	var rep rpcReply
	if err := json.Unmarshal(hr.body, &rep); err != nil {
		e.t.Fatalf("%s: not a JSON-RPC reply (HTTP %d): %s", method, hr.status, hr.body)
	}
	return hr.status, rep
}

// TestLimitsScopeAndClaimSelectors: limits select callers by a scope or a
// claim of their credential (AUTH-8); a rule named by the principal beats
// them; several matching selectors merge into the most permissive rule;
// `*` applies only when nothing else matches; scope tokens and claim
// values compare whole (a comma- or space-joined string selects nothing),
// and a principal named like a selector gets no rule of its own.
func TestLimitsScopeAndClaimSelectors(t *testing.T) {
	read := []string{a2a.MethodGetTask, a2a.MethodListTasks}
	e := newScopeTestEnv(t, Config{Limits: map[string]LimitRule{
		"scope:a2a.read":   {AllowMethods: read},
		"scope:a2a.write":  {AllowMethods: []string{a2a.MethodSendMessage}},
		"claim:groups=ops": {},
		"alice":            {AllowMethods: []string{a2a.MethodListTasks}},
		AnyPrincipal:       {AllowMethods: []string{a2a.MethodGetExtendedAgentCard}},
	}})
	send := sendParams("hi")
	cases := []struct {
		name   string
		hdr    http.Header
		method string
		params any
		ok     bool
	}{
		{"read scope lists", scoped("bob", []string{"a2a.read"}), a2a.MethodListTasks, map[string]any{}, true},
		{"read scope cannot send", scoped("bob", []string{"a2a.read"}), a2a.MethodSendMessage, send, false},
		{"read+write union sends", scoped("bob", []string{"a2a.read", "a2a.write"}), a2a.MethodSendMessage, send, true},
		{"read+write union lists", scoped("bob", []string{"a2a.write", "a2a.read"}), a2a.MethodListTasks, map[string]any{}, true},
		{"comma-joined token is no scope", scoped("bob", []string{"a2a.read,a2a.write"}), a2a.MethodListTasks, map[string]any{}, false},
		{"space-joined token is no scope", scoped("bob", []string{"a2a.read a2a.write"}), a2a.MethodListTasks, map[string]any{}, false},
		{"prefix is no scope", scoped("bob", []string{"a2a.read.all"}), a2a.MethodListTasks, map[string]any{}, false},
		{"scope is case-sensitive", scoped("bob", []string{"A2A.READ"}), a2a.MethodListTasks, map[string]any{}, false},
		{"no scope falls to *", scoped("bob", nil), a2a.MethodListTasks, map[string]any{}, false},
		{"principal rule beats scope", scoped("alice", []string{"a2a.write"}), a2a.MethodSendMessage, send, false},
		{"principal rule applies", scoped("alice", []string{"a2a.write"}), a2a.MethodListTasks, map[string]any{}, true},
		{"principal named like a selector", scoped("scope:a2a.write", nil), a2a.MethodSendMessage, send, false},
		{"array claim holds ops: unlimited", scoped("carol", nil, "groups=dev|ops"), a2a.MethodSendMessage, send, true},
		{"claim merged with read scope: most permissive", scoped("carol", []string{"a2a.read"}, "groups=ops"), a2a.MethodCancelTask, map[string]any{"id": "nope"}, true},
		{"claim string with comma is no match", scoped("carol", nil, "groups=dev,ops"), a2a.MethodSendMessage, send, false},
		{"other claim name is no match", scoped("carol", nil, "roles=ops"), a2a.MethodSendMessage, send, false},
	}
	for _, tc := range cases {
		status, rep := rpcAs(e, tc.hdr, tc.method, tc.params)
		denied := rep.Error != nil && rep.Error.Code == a2a.CodePermissionDenied
		if denied == tc.ok {
			t.Errorf("%s: %s gave HTTP %d %+v; want allowed=%v", tc.name, tc.method, status, rep.Error, tc.ok)
		}
		if denied && status != http.StatusForbidden {
			t.Errorf("%s: PERMISSION_DENIED with HTTP %d, want 403", tc.name, status)
		}
	}
}

// TestMergeRules: several matching selectors give the most permissive
// rule: the union of the allow-lists (an empty list allows all), the
// highest rate and burst and max_turns, none where any has none (AUTH-8).
func TestMergeRules(t *testing.T) {
	a := LimitRule{AllowMethods: []string{a2a.MethodGetTask}, Rate: 1, MaxTurns: 1}
	b := LimitRule{AllowMethods: []string{a2a.MethodSendMessage, a2a.MethodGetTask}, Rate: 10, Burst: 20, MaxTurns: 3}
	m := mergeRules([]LimitRule{a, b})
	if !slices.Equal(m.AllowMethods, []string{a2a.MethodGetTask, a2a.MethodSendMessage}) || m.Rate != 10 || m.Burst != 20 || m.MaxTurns != 3 {
		t.Errorf("merge(a, b) = %+v", m)
	}
	if len(a.AllowMethods) != 1 {
		t.Errorf("merge changed its input: %v", a.AllowMethods)
	}
	m = mergeRules([]LimitRule{a, {}})
	if m.AllowMethods != nil || m.Rate != 0 || m.MaxTurns != 0 {
		t.Errorf("merge(a, unlimited) = %+v, want unlimited", m)
	}
	m = mergeRules([]LimitRule{{Rate: 2.5}, {Rate: 1, Burst: 2}})
	if m.Rate != 2.5 || m.Burst != 3 {
		t.Errorf("merge bursts = %+v, want rate 2.5 burst 3 (the default of 2.5)", m)
	}
}

// TestLimitsSelectorRateCountsApart: a caller counts under each set of
// matching selectors apart from its `*` bucket, so a token with another
// scope set never spends (or inherits) another rule's tokens (AUTH-8).
func TestLimitsSelectorRateCountsApart(t *testing.T) {
	e := newScopeTestEnv(t, Config{Limits: map[string]LimitRule{
		"scope:a2a.read": {Rate: 0.001, Burst: 1},
		AnyPrincipal:     {Rate: 0.001, Burst: 1},
	}})
	list := map[string]any{}
	for _, step := range []struct {
		hdr  http.Header
		want int
	}{
		{scoped("bob", []string{"a2a.read"}), http.StatusOK},
		{scoped("bob", []string{"a2a.read"}), http.StatusTooManyRequests},
		{scoped("bob", nil), http.StatusOK}, // the * bucket of bob is full
		{scoped("bob", nil), http.StatusTooManyRequests},
		{scoped("eve", []string{"a2a.read"}), http.StatusOK}, // per principal
	} {
		if status, rep := rpcAs(e, step.hdr, a2a.MethodListTasks, list); status != step.want {
			t.Fatalf("ListTasks %v: HTTP %d %+v, want %d", step.hdr, status, rep.Error, step.want)
		}
	}
}

// TestValidateLimitKey: selectors must be well formed (AUTH-8).
func TestValidateLimitKey(t *testing.T) {
	for key, ok := range map[string]bool{
		"*": true, "alice": true, "scope:a2a.read": true, "scope:deploy:write": true,
		"claim:groups=ops": true, "claim:email_verified=true": true, "claim:team=Ops Team": true, "claim:url=a=b": true,
		"": false, "scope:": false, "scope:a b": false, `scope:a"b`: false, "claim:groups": false,
		"claim:=x": false, "claim:g=": false, "claim:a b=c": false, "claim:g=a\x01": false,
	} {
		if err := ValidateLimitKey(key); (err == nil) != ok {
			t.Errorf("ValidateLimitKey(%q) = %v, want ok=%v", key, err, ok)
		}
	}
}

// skillCard is an extended card with a free skill and one that requires
// scopes.
func skillCard() *a2a.AgentCard {
	return &a2a.AgentCard{Name: "x", Skills: []a2a.AgentSkill{
		{ID: "chat", Name: "Chat", Description: "talk", Tags: []string{"t"}},
		{ID: "deploy", Name: "Deploy", Description: "ship", Tags: []string{"t"}},
	}, Signatures: []a2a.AgentCardSignature{{Protected: "p", Signature: "s"}}}
}

// skillSend is SendMessage params whose message names skill in its
// metadata.iac_code.skill.
func skillSend(skill any) map[string]any {
	p := sendParams("go")
	p["message"].(map[string]any)["metadata"] = map[string]any{"iac_code": map[string]any{SkillMetadataKey: skill}}
	return p
}

// TestSkillRequiresScopes: a message whose skill hint names a skill the
// caller lacks scopes for is refused with PERMISSION_DENIED naming the
// missing scopes, on JSON-RPC and REST; the request-level metadata is read
// too; a caller holding the scopes, or a message naming no such skill,
// passes; a hint that is no string is invalid params (AUTH-8).
func TestSkillRequiresScopes(t *testing.T) {
	e := newScopeTestEnv(t, Config{SkillScopes: map[string][]string{"deploy": {"deploy:write", "deploy:prod"}}})
	status, rep := rpcAs(e, scoped("bob", []string{"deploy:write"}), a2a.MethodSendMessage, skillSend("deploy"))
	if status != http.StatusForbidden || rep.Error == nil || rep.Error.Code != a2a.CodePermissionDenied {
		t.Fatalf("deploy without deploy:prod: HTTP %d %+v, want 403 PERMISSION_DENIED", status, rep.Error)
	}
	info := checkErrorInfo(t, rep.Error.Data, "PERMISSION_DENIED")
	if md, _ := info["metadata"].(map[string]any); md["missingScopes"] != "deploy:prod" || md["skill"] != "deploy" {
		t.Errorf("ErrorInfo metadata %v, want skill deploy, missingScopes deploy:prod", info["metadata"])
	}
	if !strings.Contains(rep.Error.Message, "deploy:prod") {
		t.Errorf("message %q does not name the missing scope", rep.Error.Message)
	}
	p := sendParams("go")
	p["metadata"] = map[string]any{"iac_code": map[string]any{"skill": "deploy"}}
	if _, rep := rpcAs(e, scoped("bob", nil), a2a.MethodSendStreamingMessage, p); rep.Error == nil || rep.Error.Code != a2a.CodePermissionDenied {
		t.Errorf("request-level skill hint, streaming: %+v, want PERMISSION_DENIED", rep.Error)
	}
	hr := e.do(http.MethodPost, "/message:send", []byte(mustJSON(skillSend("deploy"))), scoped("bob", []string{"deploy:write deploy:prod"}))
	if hr.status != http.StatusForbidden || !strings.Contains(string(hr.body), "deploy:write deploy:prod") {
		t.Errorf("REST with a space-joined token: HTTP %d %s, want 403 naming both scopes", hr.status, hr.body)
	}
	if _, rep := rpcAs(e, scoped("bob", []string{"deploy:prod", "deploy:write"}), a2a.MethodSendMessage, skillSend("deploy")); rep.Error != nil {
		t.Errorf("with both scopes: %+v", rep.Error)
	}
	for _, skill := range []any{"chat", "unknown"} {
		if _, rep := rpcAs(e, scoped("bob", nil), a2a.MethodSendMessage, skillSend(skill)); rep.Error != nil {
			t.Errorf("skill %v without scopes: %+v", skill, rep.Error)
		}
	}
	if _, rep := rpcAs(e, scoped("bob", nil), a2a.MethodSendMessage, sendParams("no hint")); rep.Error != nil {
		t.Errorf("no hint: %+v", rep.Error)
	}
	if _, rep := rpcAs(e, scoped("bob", nil), a2a.MethodSendMessage, skillSend([]any{"deploy"})); rep.Error == nil || rep.Error.Code != a2a.CodeInvalidParams {
		t.Errorf("array hint: %+v, want invalid params", rep.Error)
	}
}

// TestExtendedCardSkillsFiltered: the extended card lists only the skills
// the caller may use, whether the card hook filters (UsableSkills, before
// signing) or leaves it to the interceptor (which then drops the stale
// signatures) (AUTH-8).
func TestExtendedCardSkillsFiltered(t *testing.T) {
	for _, hookFilters := range []bool{true, false} {
		cfg := Config{SkillScopes: map[string][]string{"deploy": {"deploy:write"}}, ExtendedCard: func(ctx context.Context, _ string) (*a2a.AgentCard, error) {
			if hookFilters {
				return UsableSkills(ctx, skillCard()), nil
			}
			return skillCard(), nil
		}}
		e := newScopeTestEnv(t, cfg)
		ids := func(hdr http.Header) ([]string, int) {
			_, rep := rpcAs(e, hdr, a2a.MethodGetExtendedAgentCard, map[string]any{})
			if rep.Error != nil {
				t.Fatalf("GetExtendedAgentCard: %+v", rep.Error)
			}
			var c a2a.AgentCard
			if err := json.Unmarshal(rep.Result, &c); err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, s := range c.Skills {
				out = append(out, s.ID)
			}
			return out, len(c.Signatures)
		}
		if got, sigs := ids(scoped("bob", []string{"a2a.read"})); !slices.Equal(got, []string{"chat"}) || sigs != 0 && !hookFilters {
			t.Errorf("hook filters=%v, without deploy:write: skills %v (signatures %d), want [chat] and no stale signature", hookFilters, got, sigs)
		}
		if got, sigs := ids(scoped("bob", []string{"deploy:write"})); !slices.Equal(got, []string{"chat", "deploy"}) || sigs != 1 {
			t.Errorf("hook filters=%v, with deploy:write: skills %v (signatures %d), want [chat deploy], signed", hookFilters, got, sigs)
		}
		hr := e.do(http.MethodGet, "/extendedAgentCard", nil, scoped("bob", nil))
		if hr.status != http.StatusOK || strings.Contains(string(hr.body), `"deploy"`) {
			t.Errorf("REST extended card without scopes: HTTP %d %s", hr.status, hr.body)
		}
	}
}

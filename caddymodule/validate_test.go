package caddymodule

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

// TestValidateSameForJSONAndCaddyfile (issue 27): a bad value is refused
// with the same message whether it comes from the Caddyfile (parse, which
// runs Validate) or from a JSON config (Provision, which runs Validate
// first): RPC-17 event_log_size, RPC-18 dedupe, PUSH-1/PUSH-6 push
// values, XPORT-5 redis_rpc, AUTH-4 owner_scope, the turn counts.
func TestValidateSameForJSONAndCaddyfile(t *testing.T) {
	for _, tc := range []struct {
		name, caddyfile, json, want string
	}{
		{"max_concurrent_turns", "max_concurrent_turns -1", `"max_concurrent_turns":-1`, "max_concurrent_turns: must not be negative"},
		{"history_limit", "history_limit -2", `"history_limit":-2`, "history_limit: must not be negative"},
		{"event_log_size high", "event_log_size 5000", `"event_log_size":5000`, "event_log_size: must be between 1 and 4096"},
		{"event_log_size negative", "event_log_size -1", `"event_log_size":-1`, "event_log_size: must be between 1 and 4096"},
		{"dedupe", "dedupe sometimes", `"dedupe":"sometimes"`, `dedupe: must be extension or always, not "sometimes"`},
		{"artifact_urls", "artifact_urls s3", `"artifact_urls":"s3"`, `artifact_urls: must be http or file, not "s3"`},
		{"thinking_exposure", "thinking_exposure tool_trace mind", `"thinking_exposure":["tool_trace","mind"]`, `thinking_exposure: unknown type "mind"`},
		{"owner_scope", "owner_scope a/b", `"owner_scope":"a/b"`, "owner_scope: must not contain '/'"},
		{"push max_attempts", "push {\nmax_attempts -1\n}", `"push":{"max_attempts":-1}`, "push: max_attempts must not be negative"},
		{"push workers", "push {\nworkers -3\n}", `"push":{"workers":-3}`, "push: workers must not be negative"},
		{"push max_configs_per_task", "push {\nmax_configs_per_task -1\n}", `"push":{"max_configs_per_task":-1}`, "push: max_configs_per_task must not be negative"},
		{"push retry_jitter", "push {\nretry_jitter 2\n}", `"push":{"retry_jitter":2}`, "push: retry_jitter must be between 0 and 1"},
		{"push networks", "push {\nallow_private_networks 10.0.0.0/99\n}", `"push":{"allow_private_networks":["10.0.0.0/99"]}`, "push: allow_private_networks"},
		{"push sign hs256", "push {\nsign hs256 {\nkid a\nkey_file f\n}\n}", `"push":{"sign":[{"alg":"hs256","kid":"a","key_file":"f"}]}`, `push sign "a": use es256 or eddsa`},
		{"push sign duplicate kid", "push {\nsign es256 {\nkid a\nkey_file f\n}\nsign es256 {\nkid a\nkey_file g\n}\n}", `"push":{"sign":[{"alg":"es256","kid":"a","key_file":"f"},{"alg":"es256","kid":"a","key_file":"g"}]}`, `push sign "a": duplicate kid`},
		{"push lease", "push {\nqueue redis-streams {\nredis_url redis://x\nlease_timeout_ms -5\n}\n}", `"push":{"queue":"redis-streams","redis":{"redis_url":"redis://x","lease_timeout_ms":-5}}`, "push: lease_timeout_ms must not be negative"},
		{"redis_rpc url", "redis_rpc {\ngroup g\n}", `"redis_rpc":{"group":"g"}`, "redis_rpc: url is required"},
		{"redis_rpc max_in_flight", "redis_rpc {\nurl redis://x\nmax_in_flight -1\n}", `"redis_rpc":{"url":"redis://x","max_in_flight":-1}`, "redis_rpc: max_in_flight: must not be negative"},
		{"redis_rpc reply_max_len", "redis_rpc {\nurl redis://x\nreply_max_len -1\n}", `"redis_rpc":{"url":"redis://x","reply_max_len":-1}`, "redis_rpc: reply_max_len: must not be negative"},
		{"websocket max_in_flight", "websocket {\nmax_in_flight -1\n}", `"websocket":{"max_in_flight":-1}`, "websocket: max_in_flight: must not be negative"},
		{"limits max_turns", "limits * {\nmax_turns -1\n}", `"limits":{"*":{"max_turns":-1}}`, "limits *: max_turns must not be negative"},
		{"limits burst", "limits * {\nrate 5/s burst -2\n}", `"limits":{"*":{"rate":5,"burst":-2}}`, "limits *: burst must not be negative"},
		{"limits", "limits * {\nallow_methods Bogus\n}", `"limits":{"*":{"allow_methods":["Bogus"]}}`, "limits *: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, cerr := parseBlock(t, "a2a {\ncard {\nname x\n}\n"+tc.caddyfile+"\n}")
			if cerr == nil || !strings.Contains(cerr.Error(), tc.want) {
				t.Errorf("Caddyfile: %v, want %q", cerr, tc.want)
			}
			var h AgentHandler
			if err := json.Unmarshal([]byte("{"+tc.json+"}"), &h); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
			defer cancel()
			jerr := h.Provision(ctx)
			if jerr == nil || !strings.Contains(jerr.Error(), tc.want) {
				t.Fatalf("JSON: %v, want %q", jerr, tc.want)
			}
			if cerr != nil && !strings.HasPrefix(cerr.Error(), jerr.Error()+",") {
				t.Errorf("the messages differ:\nCaddyfile: %v\nJSON:      %v", cerr, jerr)
			}
		})
	}
}

// TestCaddyfileCountZero: a JSON config leaves a count unset with 0, which
// the Caddyfile cannot say, so an explicit 0 there is refused.
func TestCaddyfileCountZero(t *testing.T) {
	for _, opt := range []string{"max_concurrent_turns 0", "history_limit 0", "event_log_size 0", "push {\nworkers 0\n}", "redis_rpc {\nurl redis://x\nmax_in_flight 0\n}", "websocket {\nmax_in_flight 0\n}", "limits * {\nmax_turns 0\n}"} {
		if _, err := parseBlock(t, "a2a {\ncard {\nname x\n}\n"+opt+"\n}"); err == nil || !strings.Contains(err.Error(), "must be") {
			t.Errorf("%q: %v, want a refusal", opt, err)
		}
	}
}

// TestAppValidateSameForJSONAndCaddyfile (issue 27, SCALE-2): the global
// a2a option's bad values get the message a JSON app config gets.
func TestAppValidateSameForJSONAndCaddyfile(t *testing.T) {
	for _, tc := range []struct {
		name, caddyfile, json, want string
	}{
		{"durability", "durability sometimes", `"durability":"sometimes"`, `durability: must be full or normal, not "sometimes"`},
		{"store url", "store redis {\nkey_prefix x\n}", `"store":"redis","redis":{"key_prefix":"x"}`, "store redis: url is required"},
		{"instance_lease", "store redis redis://x {\ninstance_lease 500ms\n}", `"store":"redis","redis":{"urls":["redis://x"],"instance_lease":"500ms"}`, "store redis: instance_lease must be at least 1s"},
		{"event_log_ttl", "store redis redis://x {\nevent_log_ttl 500ms\n}", `"store":"redis","redis":{"urls":["redis://x"],"event_log_ttl":"500ms"}`, "store redis: event_log_ttl must be at least 1s (or off)"},
		{"retention batch", "retention {\nbatch -1\n}", `"retention":{"batch":-1}`, "retention batch: must not be negative"},
		{"max_shared_blob_bytes", "store redis redis://x {\nmax_shared_blob_bytes -1\n}", `"store":"redis","redis":{"urls":["redis://x"],"max_shared_blob_bytes":-1}`, "store redis: max_shared_blob_bytes must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, cerr := adaptApp(t, "\ta2a {\n"+tc.caddyfile+"\n}")
			if cerr == nil || !strings.Contains(cerr.Error(), tc.want) {
				t.Errorf("Caddyfile: %v, want %q", cerr, tc.want)
			}
			var a App
			if err := json.Unmarshal([]byte("{"+tc.json+"}"), &a); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
			defer cancel()
			if err := a.Provision(ctx); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("JSON: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestCardValidateSameForJSONAndCaddyfile (issue 27, CARD-1): the card
// block's bad values get the message a JSON a2a_card config gets.
func TestCardValidateSameForJSONAndCaddyfile(t *testing.T) {
	for _, tc := range []struct {
		name, caddyfile, json, want string
	}{
		{"no name", "description x", `"description":"x"`, "card name: must not be empty"},
		{"sign alg", "name x\nsign rs256 {\nkid k\n}", `"name":"x","sign":[{"alg":"rs256","kid":"k"}]`, `card sign "k": alg must be hs256, es256 or eddsa`},
		{"sign no key_file", "name x\nsign es256 {\nkid k\n}", `"name":"x","sign":[{"alg":"es256","kid":"k"}]`, `card sign "k": key_file is required`},
		{"duplicate extension", "name x\nextension urn:x\nextension urn:x", `"name":"x","extensions":[{"uri":"urn:x"},{"uri":"urn:x"}]`, `duplicate extension "urn:x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, cerr := parseBlock(t, "a2a {\ncard {\n"+tc.caddyfile+"\n}\n}")
			if cerr == nil || !strings.Contains(cerr.Error(), tc.want) {
				t.Errorf("Caddyfile: %v, want %q", cerr, tc.want)
			}
			var h CardHandler
			if err := json.Unmarshal([]byte("{"+tc.json+"}"), &h); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
			defer cancel()
			err := h.Provision(ctx)
			if err == nil {
				err = h.Validate()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("JSON: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestAuthValidateSameForJSONAndCaddyfile (issue 27, AUTH-3): a JWT
// clock_skew beyond its bound gets one message from the Caddyfile and
// from a JSON a2a_auth config.
func TestAuthValidateSameForJSONAndCaddyfile(t *testing.T) {
	want := "jwt clock_skew: must be between 0 and 5m0s"
	_, cerr := parseBlock(t, "a2a {\ncard {\nname x\n}\nauth {\njwt {\nsecret s\nclock_skew 1h\n}\n}\n}")
	if cerr == nil || !strings.Contains(cerr.Error(), want) {
		t.Errorf("Caddyfile: %v, want %q", cerr, want)
	}
	var h AuthHandler
	if err := json.Unmarshal([]byte(`{"jwt":{"secret":"0123456789abcdef0123456789abcdef","clock_skew":"1h"}}`), &h); err != nil {
		t.Fatal(err)
	}
	if err := h.Validate(); err == nil || err.Error() != want {
		t.Fatalf("JSON Validate: %v, want %q", err, want)
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
	defer cancel()
	if err := h.Provision(ctx); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("JSON Provision: %v, want %q", err, want)
	}
}

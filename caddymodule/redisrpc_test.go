package caddymodule

import (
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
)

// TestUnmarshalRedisRPC: XPORT-5 — the redis_rpc options of the a2a
// directive (Appendix B.1 names) and their errors.
func TestUnmarshalRedisRPC(t *testing.T) {
	hs, err := parseBlock(t, `a2a {
		card {
			name x
		}
		redis_rpc {
			url redis://127.0.0.1:6379/0
			request_stream req
			response_prefix resp
			group g
			consumer c1
			claim_after 5s
			block 500ms
			max_in_flight 4
			max_payload_size 1KiB
			reply_max_len 10
			reply_ttl 1m
		}
	}`)
	if err != nil {
		t.Fatal(err)
	}
	got := *hs.agent.RedisRPC
	want := RedisRPCConfig{URL: "redis://127.0.0.1:6379/0", RequestStream: "req", ResponsePrefix: "resp", Group: "g", Consumer: "c1",
		ClaimAfter: caddy.Duration(5 * time.Second), Block: caddy.Duration(500 * time.Millisecond), MaxInFlight: 4,
		MaxPayloadSize: 1024, ReplyMaxLen: 10, ReplyTTL: caddy.Duration(time.Minute)}
	if got != want {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	for name, tc := range map[string]struct{ block, want string }{
		"no url":     {"request_stream x", "url is required"},
		"unknown":    {"url redis://h\n\t\t\tstreams x", `unknown option "streams"`},
		"duplicate":  {"url redis://h\n\t\t\turl redis://h", "duplicate url"},
		"bad count":  {"url redis://h\n\t\t\tmax_in_flight 0", "at least 1"},
		"bad length": {"url redis://h\n\t\t\tclaim_after soon", "invalid duration"},
	} {
		_, err := parseBlock(t, "a2a {\n\t\tcard {\n\t\t\tname x\n\t\t}\n\t\tredis_rpc {\n\t\t\t"+tc.block+"\n\t\t}\n\t}")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", name, err, tc.want)
		}
	}
}

// TestRedisRPCOptionsCheck: values Caddy cannot catch while parsing are
// refused at provisioning: a request stream under the reply prefix (the
// group would read its own answers), a claim_after under 1s.
func TestRedisRPCOptionsCheck(t *testing.T) {
	for name, c := range map[string]RedisRPCConfig{
		"request under prefix": {URL: "redis://h", RequestStream: "iac-code:a2a:responses:x"},
		"short claim":          {URL: "redis://h", ClaimAfter: caddy.Duration(100 * time.Millisecond)},
		"no url":               {},
	} {
		if _, err := c.options(0); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	o, err := (&RedisRPCConfig{URL: "redis://h"}).options(1234)
	if err != nil || o.MaxPayloadBytes != 1234 {
		t.Fatalf("defaults: %+v %v (payload limit defaults to max_body_size)", o, err)
	}
}

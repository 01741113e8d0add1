package caddymodule

import (
	"slices"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/card"
)

// XPORT-6: grpc_jsonrpc turns the envelope service on, makes a2a_auth
// answer gRPC-shaped, and puts grpc-jsonrpc on the card (after GRPC when
// both are on); it takes no arguments or block.
func TestUnmarshalGRPCJSONRPC(t *testing.T) {
	hs, err := parseBlock(t, "a2a {\ncard {\nname x\n}\nauth {\nbearer t\n}\ngrpc_jsonrpc\n}")
	if err != nil {
		t.Fatal(err)
	}
	if !hs.agent.GRPCJSONRPC || hs.agent.GRPC || !hs.auth.GRPC {
		t.Fatalf("grpc_jsonrpc %v, grpc %v, auth grpc-shaped %v", hs.agent.GRPCJSONRPC, hs.agent.GRPC, hs.auth.GRPC)
	}
	if b := hs.agent.cardFacts().Bindings; !slices.Equal(b, []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPCJSONRPC}) {
		t.Fatalf("bindings %v", b)
	}
	hs, err = parseBlock(t, "a2a {\ncard {\nname x\n}\ngrpc\ngrpc_jsonrpc\n}")
	if err != nil {
		t.Fatal(err)
	}
	if b := hs.agent.cardFacts().Bindings; !slices.Equal(b, []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC, a2a.BindingGRPCJSONRPC}) {
		t.Fatalf("bindings with both %v", b)
	}
	c := card.Build(&card.Config{Name: "x"}, card.Runtime{BaseURL: "https://agent.example/", Bindings: hs.agent.bindings()})
	if in := c.SupportedInterfaces[3]; in.ProtocolBinding != "grpc-jsonrpc" || in.URL != "agent.example:443" {
		t.Fatalf("card interface %+v, want grpc-jsonrpc at the gRPC target", in)
	}
	for _, bad := range []string{"grpc_jsonrpc on", "grpc_jsonrpc {\nreflection\n}"} {
		if _, err := parseBlock(t, "a2a {\ncard {\nname x\n}\n"+bad+"\n}"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Issue 31: redis_rpc advertise_url puts the Redis Streams carrier on the
// card at that URL; without it the carrier is not advertised (its url is
// an internal address); a URL with credentials, a relative one, or one in
// the global block is refused.
func TestRedisRPCAdvertiseURL(t *testing.T) {
	block := func(extra string) string {
		return "a2a {\ncard {\nname x\n}\nredis_rpc {\nurl redis://:secret@10.0.0.5:6379/0\n" + extra + "\n}\n}"
	}
	hs, err := parseBlock(t, block(""))
	if err != nil {
		t.Fatal(err)
	}
	if u := hs.agent.cardFacts().RedisStreamsURL; u != "" {
		t.Fatalf("advertised %q without advertise_url", u)
	}
	hs, err = parseBlock(t, block("advertise_url rediss://redis.example.com:6380/0"))
	if err != nil {
		t.Fatal(err)
	}
	f := hs.agent.cardFacts()
	c := card.Build(&card.Config{Name: "x"}, card.Runtime{BaseURL: "https://agent.example/", Interfaces: redisInterface(f.RedisStreamsURL)})
	last := c.SupportedInterfaces[len(c.SupportedInterfaces)-1]
	if last.ProtocolBinding != "redis-streams" || last.URL != "rediss://redis.example.com:6380/0" || last.ProtocolVersion != "1.0" {
		t.Fatalf("card interface %+v", last)
	}
	if (&CardHandler{RedisStreamsURL: "redis://other/0"}).explicitFacts().Or(f).RedisStreamsURL != "redis://other/0" {
		t.Fatal("the card's redis_streams_url does not override the derived one")
	}
	for _, bad := range []string{"advertise_url redis://user:pw@redis.example.com:6379/0", "advertise_url redis.example.com"} {
		if _, err := parseBlock(t, block(bad)); err == nil || !strings.Contains(err.Error(), "advertise_url") {
			t.Errorf("%q: err %v", bad, err)
		}
	}
	if err := (&RedisRPCConfig{URL: "redis://x", AdvertiseURL: "redis://x"}).validateAdvertise(true); err == nil {
		t.Error("advertise_url accepted in the global block")
	}
}

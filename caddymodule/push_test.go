package caddymodule

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// TestUnmarshalPush covers the push block of the a2a directive (Appendix B).
func TestUnmarshalPush(t *testing.T) {
	good := `push {
		queue redis-streams {
			redis_url redis://127.0.0.1:6379/0
			stream s
			retry_key r
			dead_stream d
			consumer_group g
			consumer_name c
			lease_timeout_ms 1000
		}
		allow_private_networks 127.0.0.0/8 10.0.0.0/8
		allow_private_networks ::1
		timeout 2s
		max_attempts 3
		retry_initial 100ms
		retry_max 1s
		retry_jitter 0.1
		workers 4
		max_configs_per_task 25
	}`
	d := caddyfile.NewTestDispenser(good)
	d.Next()
	p, err := unmarshalPush(d)
	if err != nil {
		t.Fatal(err)
	}
	if p.Queue != "redis-streams" || p.Redis.URL != "redis://127.0.0.1:6379/0" || p.Redis.LeaseTimeoutMS != 1000 || p.Redis.ConsumerGroup != "g" ||
		len(p.AllowPrivateNetworks) != 3 || p.MaxAttempts != 3 || p.Workers != 4 || p.RetryJitter != 0.1 || p.MaxConfigsPerTask != 25 {
		t.Fatalf("parsed %+v %+v", p, p.Redis)
	}
	if _, err := p.config().Settings(); err != nil {
		t.Fatal(err)
	}
	for src, want := range map[string]string{
		"push {\n queue nope\n}":                                      "unknown queue",
		"push {\n queue redis-streams {\n stream s\n }\n}":            "needs redis_url",
		"push {\n allow_private_networks not-a-cidr\n}":               "allow_private_networks",
		"push {\n max_attempts 0\n}":                                  "at least 1",
		"push {\n retry_jitter 2\n}":                                  "retry_jitter",
		"push {\n max_configs_per_task 0\n}":                          "at least 1",
		"push {\n timeout 1s\n timeout 2s\n}":                         "duplicate",
		"push {\n bogus\n}":                                           "unknown option",
		"push {\n queue redis-streams {\n redis_url x\n huh 1\n }\n}": "unknown redis-streams option",
		"push extra": "wrong argument count",
	} {
		d := caddyfile.NewTestDispenser(src)
		d.Next()
		if _, err := unmarshalPush(d); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", src, err, want)
		}
	}
}

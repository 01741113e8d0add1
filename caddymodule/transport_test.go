package caddymodule

import (
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// The http and openai backends share upstreamBlock: one URL, each option
// once (header repeatable for http), transport and timeout parsed for both.
func TestUpstreamBlock(t *testing.T) {
	var h HTTPBackend
	err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser("http http://127.0.0.1:9 {\n header X-A 1\n header X-A 2\n timeout 5s\n transport http {\n  dial_timeout 1s\n }\n}"))
	if err != nil {
		t.Fatal(err)
	}
	if h.URL != "http://127.0.0.1:9" || len(h.Headers["X-A"]) != 2 || time.Duration(h.Timeout) != 5*time.Second || !strings.Contains(string(h.TransportRaw), `"protocol":"http"`) {
		t.Fatalf("http backend parsed as %+v", h)
	}
	var o OpenAIBackend
	if err := o.UnmarshalCaddyfile(caddyfile.NewTestDispenser("openai http://127.0.0.1:9/v1 {\n model m\n timeout 2s\n}")); err != nil {
		t.Fatal(err)
	}
	if o.BaseURL != "http://127.0.0.1:9/v1" || o.Model != "m" || time.Duration(o.Timeout) != 2*time.Second {
		t.Fatalf("openai backend parsed as %+v", o)
	}
	for src, want := range map[string]string{
		"http":                                  "backend http: exactly one upstream URL is required",
		"http a b":                              "backend http: exactly one upstream URL is required",
		"http u {\n timeout 1s\n timeout 2s\n}": `backend http: duplicate option "timeout"`,
		"http u {\n bogus\n}":                   `backend http: unknown option "bogus"`,
		"openai":                                "backend openai: exactly one base URL is required",
		"openai u {\n model m\n transport http\n transport http\n}": `backend openai: duplicate option "transport"`,
		"openai u {\n model m\n bogus\n}":                           `backend openai: unknown option "bogus"`,
		"openai u {\n timeout 1s\n}":                                "backend openai: model is required",
	} {
		d := caddyfile.NewTestDispenser(src)
		var err error
		if strings.HasPrefix(src, "http") {
			err = new(HTTPBackend).UnmarshalCaddyfile(d)
		} else {
			err = new(OpenAIBackend).UnmarshalCaddyfile(d)
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", src, err, want)
		}
	}
}

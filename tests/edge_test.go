package tests

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

const cardBlock = `
	card {
		name iac-code
		description "Generates, reviews and converts IaC templates."
		version 1.2.3
		provider "Example Org" https://example.com
		skill iac_generation {
			name "IaC generation"
			description "Generate ROS and Terraform templates."
			tags iac ros
			example "Create a VPC."
		}
		input_modes text/plain application/json
		output_modes text/plain
		max_age 90s
	}
`

// do sends a plain HTTP request (no A2A-Version unless hdr has one) and
// returns the response and its body.
func do(t *testing.T, method, url string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	r := harness.At(url).Do(t, method, "", harness.Header("A2A-Version", ""), harness.Headers(hdr))
	return r.Response, r.Raw
}

func TestHealthAndCard(t *testing.T) {
	t.Parallel()
	gw := harness.StartGateway(t, "a2a {"+cardBlock+"}")

	resp, body := do(t, "GET", gw.URL+"/health", nil)
	if resp.StatusCode != 200 || string(body) != `{"status":"healthy"}` || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("health: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}

	resp, body = do(t, "GET", gw.URL+"/.well-known/agent-card.json", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("card status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/a2a+json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=90" {
		t.Errorf("Cache-Control = %q", cc)
	}
	etag := resp.Header.Get("ETag")
	if !strings.HasPrefix(etag, `"`) || !strings.HasSuffix(etag, `"`) || len(etag) < 10 {
		t.Errorf("ETag %q is not a strong tag", etag)
	}
	lm := resp.Header.Get("Last-Modified")
	lmTime, err := http.ParseTime(lm)
	if err != nil || time.Since(lmTime) > time.Minute {
		t.Errorf("Last-Modified = %q (%v)", lm, err)
	}

	var card map[string]any
	if err := json.Unmarshal(body, &card); err != nil {
		t.Fatalf("card JSON: %v\n%s", err, body)
	}
	if card["name"] != "iac-code" || card["version"] != "1.2.3" {
		t.Errorf("card identity: %v %v", card["name"], card["version"])
	}
	ifaces := card["supportedInterfaces"].([]any)
	if len(ifaces) != 2 {
		t.Fatalf("interfaces: %v", ifaces)
	}
	for i, want := range []string{"JSONRPC", "HTTP+JSON"} {
		in := ifaces[i].(map[string]any)
		if in["protocolBinding"] != want || in["url"] != gw.URL+"/" || in["protocolVersion"] != "1.0" {
			t.Errorf("interface %d = %v, want %s at %s/", i, in, want, gw.URL)
		}
	}
	if strings.Contains(string(body), "0.0.0.0") || strings.Contains(string(body), "[::]") {
		t.Error("card shows a wildcard address")
	}
	caps := card["capabilities"].(map[string]any)
	if caps["streaming"] != true || caps["pushNotifications"] != false {
		t.Errorf("capabilities = %v", caps)
	}
	if _, ok := caps["extendedAgentCard"]; ok {
		t.Error("extendedAgentCard present without auth")
	}
	if !strings.Contains(string(body), `"uri":"urn:iac-code:a2a:artifact-metadata:v1"`) {
		t.Error("artifact-metadata extension missing")
	}
	if _, ok := card["securitySchemes"]; ok {
		t.Error("securitySchemes present without auth")
	}
	skills := card["skills"].([]any)
	sk := skills[0].(map[string]any)
	if sk["id"] != "iac_generation" || len(sk["tags"].([]any)) != 2 || sk["examples"].([]any)[0] != "Create a VPC." {
		t.Errorf("skill = %v", sk)
	}
	if m := card["defaultInputModes"].([]any); len(m) != 2 || m[1] != "application/json" {
		t.Errorf("defaultInputModes = %v", m)
	}

	// same bytes and ETag again, and on the legacy path
	resp2, body2 := do(t, "GET", gw.URL+"/.well-known/agent-card.json", nil)
	if resp2.Header.Get("ETag") != etag || string(body2) != string(body) || resp2.Header.Get("Last-Modified") != lm {
		t.Error("second request differs")
	}
	resp3, body3 := do(t, "GET", gw.URL+"/.well-known/agent.json", nil)
	if resp3.StatusCode != 200 || string(body3) != string(body) || resp3.Header.Get("ETag") != etag {
		t.Error("legacy path differs")
	}

	// HEAD: same headers, no body
	resp4, body4 := do(t, "HEAD", gw.URL+"/.well-known/agent-card.json", nil)
	if resp4.StatusCode != 200 || len(body4) != 0 || resp4.Header.Get("ETag") != etag ||
		resp4.Header.Get("Content-Type") != "application/a2a+json" || resp4.Header.Get("Content-Length") != resp.Header.Get("Content-Length") {
		t.Errorf("HEAD: %d len=%d headers=%v", resp4.StatusCode, len(body4), resp4.Header)
	}

	// conditional requests
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"inm exact", map[string]string{"If-None-Match": etag}, 304},
		{"inm list", map[string]string{"If-None-Match": `"nope", ` + etag}, 304},
		{"inm star", map[string]string{"If-None-Match": "*"}, 304},
		{"inm other", map[string]string{"If-None-Match": `"nope"`}, 200},
		{"ims equal", map[string]string{"If-Modified-Since": lm}, 304},
		{"ims later", map[string]string{"If-Modified-Since": lmTime.Add(time.Hour).UTC().Format(http.TimeFormat)}, 304},
		{"ims earlier", map[string]string{"If-Modified-Since": lmTime.Add(-time.Hour).UTC().Format(http.TimeFormat)}, 200},
		{"inm wins over ims", map[string]string{"If-None-Match": `"nope"`, "If-Modified-Since": lm}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, b := do(t, "GET", gw.URL+"/.well-known/agent-card.json", tc.hdr)
			if r.StatusCode != tc.want {
				t.Fatalf("status = %d, want %d", r.StatusCode, tc.want)
			}
			if tc.want == 304 && (len(b) != 0 || r.Header.Get("ETag") != etag) {
				t.Errorf("304 with body %q or ETag %q", b, r.Header.Get("ETag"))
			}
		})
	}

	// other methods on the card path are refused
	if r, _ := do(t, "POST", gw.URL+"/.well-known/agent-card.json", nil); r.StatusCode != 405 {
		t.Errorf("POST card = %d, want 405", r.StatusCode)
	}
}

func TestCardLastModifiedStableAcrossRestart(t *testing.T) {
	t.Parallel()
	gw := harness.StartGateway(t, "a2a {"+cardBlock+"}")
	r1, _ := do(t, "GET", gw.URL+"/.well-known/agent-card.json", nil)
	time.Sleep(1100 * time.Millisecond) // sleep: Last-Modified has 1 s resolution
	gw.Restart()
	r2, _ := do(t, "GET", gw.URL+"/.well-known/agent-card.json", nil)
	if r1.Header.Get("Last-Modified") != r2.Header.Get("Last-Modified") || r1.Header.Get("ETag") != r2.Header.Get("ETag") {
		t.Errorf("after restart: Last-Modified %q -> %q, ETag %q -> %q",
			r1.Header.Get("Last-Modified"), r2.Header.Get("Last-Modified"), r1.Header.Get("ETag"), r2.Header.Get("ETag"))
	}
}

func TestCardPublicURLAndForwarded(t *testing.T) {
	t.Parallel()
	gw := harness.StartGateway(t, "a2a {"+strings.Replace(cardBlock, "max_age 90s", "public_url https://agent.example.com", 1)+"}")
	_, body := do(t, "GET", gw.URL+"/.well-known/agent-card.json", map[string]string{"X-Forwarded-Host": "evil.example"})
	if !strings.Contains(string(body), `"url":"https://agent.example.com/"`) || strings.Contains(string(body), "evil") {
		t.Errorf("public_url not used: %s", body)
	}
	// without public_url and without trusted proxies, X-Forwarded-* is ignored
	gw2 := harness.StartGateway(t, "a2a {"+cardBlock+"}")
	_, body = do(t, "GET", gw2.URL+"/.well-known/agent-card.json", map[string]string{"X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https"})
	if strings.Contains(string(body), "evil") || !strings.Contains(string(body), `"url":"`+gw2.URL+`/"`) {
		t.Errorf("untrusted forwarded headers honoured: %s", body)
	}
}

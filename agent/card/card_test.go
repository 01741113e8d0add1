package card

import (
	"crypto/tls"
	"encoding/json"
	"net/http/httptest"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

func validConfig() *Config {
	return &Config{
		Name:        "iac-code",
		Description: "Generates IaC templates.",
		Version:     "1.2.3",
		Provider:    &Provider{Organization: "Example Org", URL: "https://example.com"},
		Skills: []Skill{{
			ID: "iac_generation", Name: "IaC generation",
			Description: "Generate templates from natural language.",
			Tags:        []string{"iac", "ros"}, Examples: []string{"Create a VPC."},
		}},
		InputModes:  []string{"text/plain", "application/json"},
		OutputModes: []string{"text/plain"},
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(c *Config)
		wantErr string
	}{
		{"ok", func(c *Config) {}, ""},
		{"empty name", func(c *Config) { c.Name = " " }, "card name"},
		{"skill without tags", func(c *Config) { c.Skills[0].Tags = nil }, `skill "iac_generation" tags`},
		{"skill without name", func(c *Config) { c.Skills[0].Name = "" }, `skill "iac_generation" name`},
		{"skill without id", func(c *Config) { c.Skills[0].ID = "" }, "skills[0] id"},
		{"bad skill id", func(c *Config) { c.Skills[0].ID = "a b" }, "id: only letters"},
		{"duplicate skill", func(c *Config) { c.Skills = append(c.Skills, c.Skills[0]) }, "duplicate skill id"},
		{"bad provider url", func(c *Config) { c.Provider.URL = "ftp://x" }, "provider.url"},
		{"provider without org", func(c *Config) { c.Provider.Organization = "" }, "provider.organization"},
		{"bad doc url", func(c *Config) { c.DocumentationURL = "not a url" }, "documentation_url"},
		{"bad icon url", func(c *Config) { c.IconURL = "/icon.png" }, "icon_url"},
		{"wildcard public url", func(c *Config) { c.PublicURL = "http://0.0.0.0:8080" }, "public_url"},
		{"credentials in public url", func(c *Config) { c.PublicURL = "https://u:p@h" }, "public_url"},
		{"bad media type", func(c *Config) { c.InputModes = []string{"text"} }, "input_modes"},
		{"bad namespace", func(c *Config) { c.Namespace = "a-b" }, "namespace"},
		{"duplicate extension", func(c *Config) { c.Extensions = []Extension{{URI: "urn:x"}, {URI: "urn:x"}} }, "duplicate extension"},
		{"undeclared required", func(c *Config) { c.RequiredExtensions = []string{"urn:nope"} }, "required_extensions"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := validConfig()
			tc.mutate(c)
			err := c.Validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestBuildRuntimeFields(t *testing.T) {
	c := Build(validConfig(), Runtime{BaseURL: "https://agent.example.com"})
	if len(c.SupportedInterfaces) != 2 {
		t.Fatalf("interfaces = %d, want 2", len(c.SupportedInterfaces))
	}
	if c.SupportedInterfaces[0].ProtocolBinding != a2a.BindingJSONRPC || c.SupportedInterfaces[1].ProtocolBinding != a2a.BindingHTTPJSON {
		t.Errorf("bindings = %+v, want JSONRPC then HTTP+JSON", c.SupportedInterfaces)
	}
	for _, i := range c.SupportedInterfaces {
		if i.URL != "https://agent.example.com/" || i.ProtocolVersion != "1.0" {
			t.Errorf("interface = %+v", i)
		}
	}
	if c.Capabilities.Streaming == nil || !*c.Capabilities.Streaming {
		t.Error("streaming must be true")
	}
	if c.Capabilities.PushNotifications == nil || *c.Capabilities.PushNotifications {
		t.Error("pushNotifications must be present and false")
	}
	if c.Capabilities.ExtendedAgentCard != nil {
		t.Error("extendedAgentCard must be absent without auth")
	}
	if c.SecuritySchemes != nil || c.SecurityRequirements != nil {
		t.Error("no security without auth")
	}
	if len(c.Capabilities.Extensions) != 1 || c.Capabilities.Extensions[0].URI != ArtifactMetadataExtension {
		t.Errorf("extensions = %+v", c.Capabilities.Extensions)
	}
	if c.Capabilities.Extensions[0].Params["namespace"] != "iac_code" {
		t.Errorf("namespace param = %v", c.Capabilities.Extensions[0].Params)
	}
}

func TestBuildSecurityAndThinking(t *testing.T) {
	cfg := validConfig()
	cfg.Namespace = "acme"
	cfg.RequiredExtensions = []string{ArtifactMetadataExtension}
	c := Build(cfg, Runtime{BaseURL: "http://h:1/", Bearer: true, Basic: true, APIKey: true, APIKeyHeader: "X-Key",
		PushNotifications: true, ThinkingTypes: []string{"tool_trace"}})
	b, _ := json.Marshal(c)
	s := string(b)
	for _, want := range []string{
		`"bearerAuth":{"httpAuthSecurityScheme":{"scheme":"Bearer"}}`,
		`"basicAuth":{"httpAuthSecurityScheme":{"scheme":"Basic"}}`,
		`"apiKeyAuth":{"apiKeySecurityScheme":{"location":"header","name":"X-Key"}}`,
		`{"schemes":{"bearerAuth":{"list":[]}}}`,
		`{"schemes":{"basicAuth":{"list":[]}}}`,
		`{"schemes":{"apiKeyAuth":{"list":[]}}}`,
		`"extendedAgentCard":true`,
		`"pushNotifications":true`,
		`"uri":"urn:iac-code:a2a:thinking-exposure:v1"`,
		`"enabledTypes":["tool_trace"]`,
		`"namespace":"acme"`,
		`"required":true`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("card JSON lacks %s\n%s", want, s)
		}
	}
	if len(c.SecurityRequirements) != 3 {
		t.Errorf("requirements = %d, want 3", len(c.SecurityRequirements))
	}
}

func TestBuildExtensionRefinesBuiltin(t *testing.T) {
	cfg := validConfig()
	cfg.Extensions = []Extension{{URI: ArtifactMetadataExtension, Required: true}, {URI: "urn:other", Description: "x"}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	c := Build(cfg, Runtime{})
	if n := len(c.Capabilities.Extensions); n != 2 {
		t.Fatalf("extensions = %d, want 2 (built-in refined + other)", n)
	}
	if !c.Capabilities.Extensions[0].Required {
		t.Error("built-in extension not marked required")
	}
}

func TestRenderETagStable(t *testing.T) {
	a, err := Render(Build(validConfig(), Runtime{BaseURL: "http://a/"}))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Render(Build(validConfig(), Runtime{BaseURL: "http://a/"}))
	c, _ := Render(Build(validConfig(), Runtime{BaseURL: "http://b/"}))
	if a.ETag != b.ETag || string(a.Body) != string(b.Body) {
		t.Error("same input gave different renderings")
	}
	if a.ETag == c.ETag {
		t.Error("different bodies share an ETag")
	}
	if !strings.HasPrefix(a.ETag, `"`) || strings.HasPrefix(a.ETag, `W/`) {
		t.Errorf("ETag %s is not strong", a.ETag)
	}
	if strings.HasSuffix(string(a.Body), "\n") {
		t.Error("body ends with newline")
	}
}

func TestModTimes(t *testing.T) {
	var saved map[string]time.Time
	mt := NewModTimes(2, func() map[string]time.Time {
		return map[string]time.Time{"old": time.Unix(1000, 0).UTC()}
	}, func(m map[string]time.Time) { saved = m })
	now := time.Unix(5000, 500)
	mt.now = func() time.Time { return now }
	if got := mt.FirstSeen("old"); !got.Equal(time.Unix(1000, 0)) {
		t.Errorf("loaded entry = %v", got)
	}
	first := mt.FirstSeen("h1")
	if !first.Equal(time.Unix(5000, 0)) {
		t.Errorf("first seen = %v, want truncated now", first)
	}
	now = now.Add(time.Hour)
	if again := mt.FirstSeen("h1"); !again.Equal(first) {
		t.Errorf("second look = %v, want %v", again, first)
	}
	if _, ok := saved["h1"]; !ok {
		t.Error("persist not called with new entry")
	}
	mt.FirstSeen("h2") // evicts "old"
	if len(mt.m) != 2 {
		t.Errorf("size = %d, want bound 2", len(mt.m))
	}
	if _, ok := mt.m["old"]; ok {
		t.Error("oldest entry not evicted")
	}
}

func TestBaseURL(t *testing.T) {
	tests := []struct {
		name    string
		host    string
		tls     bool
		fwd     map[string]string
		trusted bool
		want    string
	}{
		{"plain", "127.0.0.1:8080", false, nil, false, "http://127.0.0.1:8080/"},
		{"tls", "agent.example.com", true, nil, false, "https://agent.example.com/"},
		{"wildcard v4", "0.0.0.0:8080", false, nil, false, "http://127.0.0.1:8080/"},
		{"wildcard v6", "[::]:8080", false, nil, false, "http://127.0.0.1:8080/"},
		{"v6 literal", "[::1]:9", false, nil, false, "http://[::1]:9/"},
		{"garbage host", "a/b@c:80", false, nil, false, "http://127.0.0.1:80/"},
		{"untrusted forwarded", "h:1", false, map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example"}, false, "http://h:1/"},
		{"trusted forwarded", "h:1", false, map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "pub.example, other"}, true, "https://pub.example/"},
		{"trusted bad proto", "h:1", false, map[string]string{"X-Forwarded-Proto": "gopher"}, true, "http://h:1/"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.Host = tc.host
			if tc.tls {
				r.TLS = &tls.ConnectionState{}
			} else {
				r.TLS = nil
			}
			for k, v := range tc.fwd {
				r.Header.Set(k, v)
			}
			if got := BaseURL(r, tc.trusted); got != tc.want {
				t.Errorf("BaseURL(host=%q) = %q, want %q", tc.host, got, tc.want)
			}
		})
	}
}

// TestGatewayVersion: the extended card's gatewayVersion is the caddy-a2a
// module version of the build, falling back to the card version when the
// build records none usable (CARD-8).
func TestGatewayVersion(t *testing.T) {
	const fb = "1.2.3"
	dep := func(v string, repl *debug.Module) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "caddy", Version: "(devel)"},
			Deps: []*debug.Module{{Path: "github.com/other/mod", Version: "v9.9.9"}, {Path: ModulePath, Version: v, Replace: repl}}}
	}
	cases := []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"no build info", nil, fb},
		{"main devel", &debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "(devel)"}}, fb},
		{"main tagged", &debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "v0.4.0"}}, "v0.4.0"},
		{"main vcs pseudo", &debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "v0.0.0-20260101120000-abcdef123456+dirty"}}, "v0.0.0-20260101120000-abcdef123456+dirty"},
		{"dep tagged", dep("v1.5.0", nil), "v1.5.0"},
		{"dep zero pseudo (local replace)", dep("v0.0.0-00010101000000-000000000000", &debug.Module{Path: "../caddy-a2a"}), fb},
		{"dep versioned replace", dep("v0.0.0-00010101000000-000000000000", &debug.Module{Path: "github.com/fork/caddy-a2a", Version: "v1.6.0"}), "v1.6.0"},
		{"module absent", &debug.BuildInfo{Main: debug.Module{Path: "caddy", Version: "v2.0.0"}}, fb},
	}
	for _, c := range cases {
		if got := GatewayVersion(c.bi, fb); got != c.want {
			t.Errorf("%s: GatewayVersion = %q, want %q", c.name, got, c.want)
		}
	}
}

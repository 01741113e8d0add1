package auth

import (
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func mustNew(t *testing.T, c Config, o Options) *Authenticator {
	t.Helper()
	a, _, err := New(c, o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a
}

func TestAuthenticateMatrix(t *testing.T) {
	hash, _ := bcrypt.GenerateFromPassword([]byte("hashed-pw"), bcrypt.MinCost)
	a := mustNew(t, Config{
		Token:  "tok-default",
		Basic:  &Basic{Username: "alice", Password: "pw"},
		APIKey: "key-default",
		Principals: []Principal{
			{Name: "ci", Token: "tok-ci"},
			{Name: "bob", Basic: &Basic{Username: "bob", Password: string(hash)}},
			{Name: "svc", APIKey: "key-svc"},
		},
	}, Options{})
	tests := []struct {
		name      string
		headers   map[string]string
		user, pwd string
		want      string
		ok        bool
	}{
		{"missing", nil, "", "", "", false},
		{"bearer default", map[string]string{"Authorization": "Bearer tok-default"}, "", "", "default", true},
		{"bearer lowercase scheme", map[string]string{"Authorization": "bearer tok-ci"}, "", "", "ci", true},
		{"bearer wrong", map[string]string{"Authorization": "Bearer nope"}, "", "", "", false},
		{"bearer empty", map[string]string{"Authorization": "Bearer "}, "", "", "", false},
		{"bearer key as token", map[string]string{"Authorization": "Bearer key-default"}, "", "", "", false},
		{"basic plain", nil, "alice", "pw", "default", true},
		{"basic bcrypt", nil, "bob", "hashed-pw", "bob", true},
		{"basic wrong", nil, "alice", "nope", "", false},
		{"basic unknown user", nil, "mallory", "pw", "", false},
		{"basic bcrypt wrong", nil, "bob", "nope", "", false},
		{"basic garbage", map[string]string{"Authorization": "Basic !!!"}, "", "", "", false},
		{"api key default", map[string]string{"X-API-Key": "key-default"}, "", "", "default", true},
		{"api key svc", map[string]string{"x-api-key": "key-svc"}, "", "", "svc", true},
		{"api key wrong", map[string]string{"X-API-Key": "nope"}, "", "", "", false},
		{"token in api key header", map[string]string{"X-API-Key": "tok-ci"}, "", "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", nil)
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			if tc.user != "" {
				r.SetBasicAuth(tc.user, tc.pwd)
			}
			got, ok := a.Authenticate(r)
			if ok != tc.ok || got != tc.want {
				t.Errorf("Authenticate = (%q, %v), want (%q, %v)", got, ok, tc.want, tc.ok)
			}
		})
	}
	ch := a.Challenges()
	if len(ch) != 3 || !strings.HasPrefix(ch[0], "Bearer ") || !strings.HasPrefix(ch[1], "Basic ") || !strings.Contains(ch[2], `header="X-API-Key"`) {
		t.Errorf("Challenges = %q", ch)
	}
}

func TestDisabledWithoutCredentials(t *testing.T) {
	a := mustNew(t, Config{NoEnv: true}, Options{Getenv: env(map[string]string{EnvToken: "x"})})
	if a.Enabled() {
		t.Fatal("enabled without credentials")
	}
	if _, ok := a.Authenticate(httptest.NewRequest("GET", "/", nil)); ok {
		t.Error("disabled authenticator authenticated a request")
	}
	if len(a.Challenges()) != 0 {
		t.Error("challenges without schemes")
	}
}

func TestEnvDefaults(t *testing.T) {
	e := env(map[string]string{
		EnvToken: "env-tok", EnvAPIKey: "env-key", EnvAPIKeyHeader: "X-Custom",
		EnvBasicUsername: "u", EnvBasicPassword: "p",
	})
	a := mustNew(t, Config{}, Options{Getenv: e})
	s := a.Schemes()
	if !s.Bearer || !s.Basic || !s.APIKey || s.APIKeyHeader != "X-Custom" {
		t.Fatalf("Schemes = %+v", s)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-Custom", "env-key")
	if p, ok := a.Authenticate(r); !ok || p != "default" {
		t.Errorf("env api key: (%q,%v)", p, ok)
	}
	// explicit config wins over env
	a = mustNew(t, Config{Token: "cfg-tok"}, Options{Getenv: e})
	r = httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Authorization", "Bearer env-tok")
	if _, ok := a.Authenticate(r); ok {
		t.Error("env token accepted although config sets one")
	}
	// half-set basic env: warning, no basic
	_, warns, err := New(Config{}, Options{Getenv: env(map[string]string{EnvBasicUsername: "u"})})
	if err != nil || len(warns) != 1 {
		t.Errorf("half basic env: warns=%v err=%v", warns, err)
	}
	// Schemes() agrees with New without reading values
	if s := (Config{}).Schemes(e); !s.Bearer || !s.Basic || !s.APIKey || s.APIKeyHeader != "X-Custom" {
		t.Errorf("Config.Schemes = %+v", s)
	}
	if s := (Config{NoEnv: true}).Schemes(e); s.Any() {
		t.Errorf("NoEnv Schemes = %+v", s)
	}
}

func TestPlaceholders(t *testing.T) {
	repl := func(s string) string {
		return strings.NewReplacer("{env.TOK}", "resolved-tok", "{env.EMPTY}", "").Replace(s)
	}
	a := mustNew(t, Config{Token: "{env.TOK}"}, Options{Replace: repl})
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Authorization", "Bearer resolved-tok")
	if _, ok := a.Authenticate(r); !ok {
		t.Error("resolved token rejected")
	}
	_, _, err := New(Config{Token: "{env.EMPTY}"}, Options{Replace: repl})
	if err == nil || !strings.Contains(err.Error(), "token: resolved to an empty value") {
		t.Errorf("empty placeholder: %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	secret := "s3cr3t-value"
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"token clash", Config{Token: secret, Principals: []Principal{{Name: "a", Token: secret}}}, `principal "a" token: same token as default principal`},
		{"key clash", Config{Principals: []Principal{{Name: "a", APIKey: secret}, {Name: "b", APIKey: secret}}}, `principal "b" api_key: same key as principal "a"`},
		{"basic without password", Config{Basic: &Basic{Username: "u"}}, "basic password: required"},
		{"basic without user", Config{Basic: &Basic{Password: secret}}, "basic username: must not be empty"},
		{"empty principal name", Config{Principals: []Principal{{Name: "", Token: secret}}}, "principals[0] name: must not be empty"},
		{"duplicate principal", Config{Principals: []Principal{{Name: "a", Token: "x1"}, {Name: "a", Token: "x2"}}}, "duplicate principal name"},
		{"principal without credential", Config{Principals: []Principal{{Name: "a"}}}, "no credential"},
		{"username clash", Config{Basic: &Basic{Username: "u", Password: secret}, Principals: []Principal{{Name: "a", Basic: &Basic{Username: "u", Password: "x"}}}}, "already used"},
		{"bad header", Config{APIKey: secret, APIKeyHeader: "X Bad"}, "api_key_header"},
		{"authorization header", Config{APIKey: secret, APIKeyHeader: "authorization"}, "api_key_header: must not be Authorization"},
		{"token with space", Config{Token: "a b" + secret}, "token: must not contain spaces"},
		{"default principal clash", Config{Token: "t1", Principals: []Principal{{Name: "default", Token: "t2"}}}, "duplicate principal name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := New(tc.cfg, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New err = %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("error leaks the secret: %v", err)
			}
		})
	}
}

func FuzzAuthenticate(f *testing.F) {
	a, _, err := New(Config{Token: "tok", Basic: &Basic{Username: "u", Password: "p"}, APIKey: "k"}, Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add("Bearer tok", "k")
	f.Add("Basic dTpw", "")
	f.Add("Basic", "x")
	f.Fuzz(func(t *testing.T, authz, key string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header["Authorization"] = []string{authz}
		r.Header["X-Api-Key"] = []string{key}
		a.Authenticate(r) // must not panic
	})
}

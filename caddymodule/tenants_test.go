package caddymodule

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// TURN-10: the tenant router rewrites the path of a JSON-RPC POST / whose
// params.tenant names a served agent, and hands every request on with its
// body intact.
func TestTenantRouter(t *testing.T) {
	h := &TenantRouter{Agents: []string{"planner", "shell"}, MaxBodySize: 256}
	big := `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"` + strings.Repeat("x", 300) + `","tenant":"shell"}}`
	for _, tc := range []struct {
		name, method, path, body, wantPath string
	}{
		{"tenant routed", http.MethodPost, "/", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t","tenant":"shell"}}`, "/shell/"},
		{"unknown tenant", http.MethodPost, "/", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t","tenant":"nosuch"}}`, "/"},
		{"no tenant", http.MethodPost, "/", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}`, "/"},
		{"not json", http.MethodPost, "/", `{"params":`, "/"},
		{"over the bound", http.MethodPost, "/", big, "/"},
		{"other path", http.MethodPost, "/planner/", `{"params":{"tenant":"shell"}}`, "/planner/"},
		{"GET", http.MethodGet, "/", "", "/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			var gotPath, gotBody string
			next := caddyhttp.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) error {
				gotPath = r.URL.Path
				b, _ := io.ReadAll(r.Body)
				gotBody = string(b)
				return nil
			})
			if err := h.ServeHTTP(httptest.NewRecorder(), r, next); err != nil {
				t.Fatal(err)
			}
			if gotPath != tc.wantPath {
				t.Errorf("path %q, want %q", gotPath, tc.wantPath)
			}
			if gotBody != tc.body {
				t.Errorf("body changed: %q", gotBody)
			}
		})
	}
}

package caddymodule

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// TestHealthReadiness: liveness keeps its answer; readiness of a handler
// whose app never opened a store is 503 "starting" (GET with the body,
// HEAD without); other methods are refused.
func TestHealthReadiness(t *testing.T) {
	h := &HealthHandler{}
	next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error {
		t.Fatal("health passed /health on")
		return nil
	})
	serve := func(method, target string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		if err := h.ServeHTTP(w, httptest.NewRequest(method, target, nil), next); err != nil {
			w.Code = err.(caddyhttp.HandlerError).StatusCode
		}
		return w
	}
	if w := serve(http.MethodGet, "/health"); w.Code != 200 || w.Body.String() != `{"status":"healthy"}` {
		t.Fatalf("liveness: %d %s", w.Code, w.Body)
	}
	if w := serve(http.MethodGet, "/health?ready=0"); w.Code != 200 || w.Body.String() != `{"status":"healthy"}` {
		t.Fatalf("ready=0 is liveness: %d %s", w.Code, w.Body)
	}
	h.app = func() *App { return nil } // a config without an a2a app
	if w := serve(http.MethodGet, "/health?ready=1"); w.Code != 200 || w.Body.String() != `{"status":"ready","checks":{}}` {
		t.Fatalf("readiness without an a2a app: %d %s", w.Code, w.Body)
	}
	sh := newShared(t.TempDir(), "full")
	t.Cleanup(func() { _ = sh.hub.Close() })
	h.app = func() *App { return &App{shared: sh, ready: &readyState{}} }
	want := `{"status":"unready","checks":{"store":{"ok":false,"reason":"sqlite: starting"}}}`
	if w := serve(http.MethodGet, "/health?ready=1"); w.Code != 503 || w.Body.String() != want ||
		w.Header().Get("Cache-Control") != "no-store" || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("readiness before the store opened: %d %s %v", w.Code, w.Body, w.Header())
	}
	if w := serve(http.MethodHead, "/health?ready=1"); w.Code != 503 || w.Body.Len() != 0 {
		t.Fatalf("HEAD readiness: %d %q", w.Code, w.Body)
	}
	if w := serve(http.MethodPost, "/health?ready=1"); w.Code != 405 {
		t.Fatalf("POST readiness: %d", w.Code)
	}
}

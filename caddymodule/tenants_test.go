package caddymodule

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// stallBody is a body that sends head and then blocks until closed.
type stallBody struct {
	r    io.Reader
	done chan struct{}
}

func (s *stallBody) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err == io.EOF {
		<-s.done
		return 0, io.ErrUnexpectedEOF
	}
	return n, err
}

func (s *stallBody) Close() error { return nil }

// Issue 26 item 3: a pre-read past max_body_size stops there and the
// request goes on (unrouted) without waiting for the rest of the body.
func TestTenantRouterStopsAtLimit(t *testing.T) {
	h := &TenantRouter{Agents: []string{"shell"}, held: new(atomic.Int64)}
	body := &stallBody{r: strings.NewReader(`{"params":{"message":{"text":"` + strings.Repeat("a", 70000)), done: make(chan struct{})}
	defer close(body.done)
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	r.Body = body
	w := httptest.NewRecorder()
	served := make(chan string, 1)
	go func() {
		_ = h.ServeHTTP(w, r, caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
			served <- r.URL.Path
			return nil
		}))
	}()
	select {
	case p := <-served:
		if p != "/" {
			t.Errorf("path %q", p)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the router waited for the rest of the body")
	}
	if n := h.HeldBytes(); n != 0 {
		t.Errorf("held %d after the pre-read", n)
	}
}

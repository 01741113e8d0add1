package push

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestPolicyUnmapsResolvedAddresses covers PUSH-2 for names pinned in a
// hosts file (Docker --add-host, Kubernetes hostAliases): Go's resolver
// may answer ::ffff:a.b.c.d for them, which is checked as a.b.c.d at store
// time and at dial time; a mapped literal written in the URL stays
// refused, and a mapped private answer stays refused.
func TestPolicyUnmapsResolvedAddresses(t *testing.T) {
	res := newFakeResolver(map[string][][]string{
		"pinned.example":      {{"::ffff:93.184.216.34"}},
		"pinned-loop.example": {{"::ffff:127.0.0.1"}},
		"pinned-meta.example": {{"::ffff:169.254.169.254"}},
	})
	p := &Policy{Resolver: res}
	if err := p.CheckURL(t.Context(), "https://pinned.example/hook"); err != nil {
		t.Fatalf("hosts-file answer ::ffff:93.184.216.34 refused at store time: %v", err)
	}
	for _, u := range []string{"https://pinned-loop.example/", "https://pinned-meta.example/"} {
		if err := p.CheckURL(t.Context(), u); !errors.Is(err, ErrBlocked) {
			t.Fatalf("%s (mapped private answer): %v, want refused", u, err)
		}
	}
	for _, u := range []string{"https://[::ffff:93.184.216.34]/", "https://[::ffff:5db8:d822]/"} {
		if err := p.CheckURL(t.Context(), u); !errors.Is(err, ErrBlocked) {
			t.Fatalf("mapped literal %s: %v, want refused", u, err)
		}
	}
	// Dial time: the public answer is dialled (the connection itself may
	// fail or time out here, but not by the policy); the private one is
	// refused by the policy.
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if c, err := p.DialContext(ctx, "tcp", "pinned.example:9"); errors.Is(err, ErrBlocked) {
		t.Fatalf("dial of the mapped public answer refused by the policy: %v", err)
	} else if c != nil {
		c.Close()
	}
	if _, err := p.DialContext(t.Context(), "tcp", "pinned-loop.example:80"); !errors.Is(err, ErrBlocked) {
		t.Fatalf("dial of the mapped loopback answer: %v, want refused", err)
	}
}

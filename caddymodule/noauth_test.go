package caddymodule

import "testing"

// TestLoopbackListener: which Caddy listener addresses only accept local
// connections (AUTH-6 warning).
func TestLoopbackListener(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080":       true,
		"tcp/127.0.0.1:8080":   true,
		"127.1.2.3:80":         true,
		"[::1]:8080":           true,
		"localhost:8080":       true,
		"unix//run/a2a.sock":   true,
		":8080":                false,
		"0.0.0.0:8080":         false,
		"tcp/0.0.0.0:8080":     false,
		"[::]:8080":            false,
		"192.168.1.5:8080":     false,
		"agent.example:8080":   false,
		"tcp6/[2001:db8::1]:1": false,
	} {
		if got := loopbackListener(addr); got != want {
			t.Errorf("loopbackListener(%q) = %v, want %v", addr, got, want)
		}
	}
}

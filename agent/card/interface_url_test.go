package card

import (
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// XPORT-2: the GRPC interface is a host:port gRPC target, the HTTP
// bindings keep the base URL; GRPC is listed only when it is a binding.
func TestInterfaceURLGRPC(t *testing.T) {
	for _, c := range []struct{ base, want string }{
		{"https://agent.example.com/", "agent.example.com:443"},
		{"http://127.0.0.1:8080/", "127.0.0.1:8080"},
		{"http://h/", "h:80"},
		{"https://[::1]:9443/a2a/", "[::1]:9443"},
	} {
		if got := interfaceURL(c.base, a2a.BindingGRPC); got != c.want {
			t.Errorf("interfaceURL(%q, GRPC) = %q, want %q", c.base, got, c.want)
		}
		if got := interfaceURL(c.base, a2a.BindingJSONRPC); got != c.base {
			t.Errorf("interfaceURL(%q, JSONRPC) = %q", c.base, got)
		}
	}
	c := Build(&Config{Name: "x"}, Runtime{BaseURL: "https://h.example/", Bindings: []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC}})
	if n := len(c.SupportedInterfaces); n != 3 || c.SupportedInterfaces[2].URL != "h.example:443" || c.SupportedInterfaces[2].ProtocolBinding != a2a.BindingGRPC {
		t.Errorf("interfaces = %+v", c.SupportedInterfaces)
	}
	for _, in := range Build(&Config{Name: "x"}, Runtime{BaseURL: "https://h.example/"}).SupportedInterfaces {
		if in.ProtocolBinding == a2a.BindingGRPC {
			t.Errorf("GRPC advertised without the binding: %+v", in)
		}
	}
}

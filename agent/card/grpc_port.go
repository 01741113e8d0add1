package card

import (
	"net"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// grpcPortURL is target (a host:port gRPC target) with its port replaced
// by port when b is the GRPC binding and port is set: the gateway's
// dedicated gRPC listener (issue 29) is advertised with the site's host.
func grpcPortURL(target, b, port string) string {
	if b != a2a.BindingGRPC || port == "" {
		return target
	}
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		return target
	}
	return net.JoinHostPort(host, port)
}

package caddymodule

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	a2agrpc "github.com/caddy-a2a/caddy-a2a/agent/binding/grpc"
	"github.com/caddy-a2a/caddy-a2a/internal/keyfile"
)

// GRPCListenConfig is a dedicated listener for the official gRPC service
// (issue 29, XPORT-2): the gateway serves lf.a2a.v1.A2AService there with
// grpc-go's own HTTP/2 transport (about a third less CPU per call than
// through the site's HTTP server), in addition to the site route, which
// keeps serving gRPC as before. Every RPC gets what the site path gives:
// the site's a2a_auth rules on its metadata (bearer, Basic, API key, JWT;
// not mTLS principals), the same version and extension rules, owner scope,
// credential expiry (AUTH-10) and metrics. The gRPC JSON-RPC envelope
// (grpc_jsonrpc, with its tenants) is served there too when it is on;
// tenants of other agents of the site on the official service are not
// (as on the site route, where only the envelope routes them).
type GRPCListenConfig struct {
	// Address is the host:port to listen on, e.g. "127.0.0.1:50051". A
	// non-loopback address (anything but 127.0.0.0/8, ::1 and localhost,
	// including an empty host) needs TLSCert and TLSKey; plaintext h2c is
	// served on loopback only. Required.
	Address string `json:"address"`
	// TLSCert is the PEM certificate (chain) file served on the listener.
	// Read at every config load, so a reload picks up a renewed file.
	TLSCert string `json:"tls_cert,omitempty"`
	// TLSKey is the PEM private key file of TLSCert; like every key file
	// the gateway reads it must not be readable by group or others (0600).
	TLSKey string `json:"tls_key,omitempty"`
}

// grpcNative is the dedicated listener of one handler: built at
// Provision, listening from the a2a app's Start (so `caddy validate` binds
// nothing).
type grpcNative struct {
	srv  *a2agrpc.Listener
	addr string
	tls  bool
}

// close stops accepting and lets the calls in flight finish.
func (n *grpcNative) close() { n.srv.Close() }

// maxTLSFileSize bounds the certificate and key files read for the
// listener.
const maxTLSFileSize = 1 << 20

// isLoopbackHost reports whether host names only the loopback interface.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// validateGRPCListen checks the grpc listen block (OPS-9: the error names
// the option).
func (h *AgentHandler) validateGRPCListen() error {
	c := h.GRPCListen
	if c == nil {
		return nil
	}
	if !h.GRPC {
		return errors.New("grpc listen: needs grpc")
	}
	host, port, err := net.SplitHostPort(c.Address)
	if err != nil || port == "" {
		return fmt.Errorf("grpc listen %q: must be host:port", c.Address)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return fmt.Errorf("grpc listen %q: tls_cert and tls_key go together", c.Address)
	}
	if c.TLSCert == "" && !isLoopbackHost(host) {
		return fmt.Errorf("grpc listen %q: a non-loopback address needs tls_cert and tls_key (plaintext h2c is served on 127.0.0.1, ::1 or localhost only)", c.Address)
	}
	return nil
}

// credentials loads the listener's certificate and key (nil: plaintext).
func (c *GRPCListenConfig) credentials() (credentials.TransportCredentials, error) {
	if c.TLSCert == "" {
		return nil, nil
	}
	repl := caddy.NewReplacer()
	certPath, keyPath := repl.ReplaceKnown(c.TLSCert, ""), repl.ReplaceKnown(c.TLSKey, "")
	certPEM, err := readBounded(certPath)
	if err != nil {
		return nil, fmt.Errorf("grpc tls_cert: %w", err)
	}
	keyPEM, err := keyfile.Read(keyPath, maxTLSFileSize)
	if err != nil {
		return nil, fmt.Errorf("grpc tls_key: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, errors.New("grpc tls_cert/tls_key: not a matching PEM certificate and private key")
	}
	return credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}), nil
}

// readBounded reads at most maxTLSFileSize bytes of a certificate file.
func readBounded(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, errors.New("cannot read the file")
	}
	if fi.Size() > maxTLSFileSize {
		return nil, errors.New("file too large")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, errors.New("cannot read the file")
	}
	return b, nil
}

// provisionGRPCListen loads the listener's TLS files and builds its
// server; the a2a app starts it (startGRPCListens).
func (h *AgentHandler) provisionGRPCListen(ctx caddy.Context, app *App) error {
	c := h.GRPCListen
	if c == nil || h.grpc == nil {
		return nil
	}
	creds, err := c.credentials()
	if err != nil {
		return err
	}
	if _, err := caddy.ParseNetworkAddress(c.Address); err != nil {
		return fmt.Errorf("grpc listen %q: %w", c.Address, err)
	}
	var extra []a2agrpc.Service
	if h.grpcJSONRPC != nil {
		extra = append(extra, h.grpcJSONRPC.ListenerService()) // XPORT-6 on the same listener
	}
	h.grpcNative = &grpcNative{srv: h.grpc.NewListener(h.grpcGate(ctx), creds, h.GRPCReflection, extra...), addr: c.Address, tls: creds != nil}
	app.grpcListens = append(app.grpcListens, h)
	return nil
}

// startGRPCListens opens the dedicated gRPC listeners of this config
// through Caddy's listener pool (a reload that keeps the address shares
// the socket, so it never fails with "address in use") and serves them.
func (a *App) startGRPCListens() error {
	for _, h := range a.grpcListens {
		n := h.grpcNative
		na, err := caddy.ParseNetworkAddress(n.addr)
		if err != nil {
			return fmt.Errorf("grpc listen %q: %w", n.addr, err)
		}
		lnAny, err := na.Listen(a.ctx, 0, net.ListenConfig{})
		if err != nil {
			return fmt.Errorf("grpc listen %q: %w", n.addr, err) // OPS-9
		}
		ln, ok := lnAny.(net.Listener)
		if !ok {
			_ = closeAny(lnAny)
			return fmt.Errorf("grpc listen %q: not a stream listener", n.addr)
		}
		logger := h.logger
		go func() {
			if err := n.srv.Serve(ln); err != nil {
				logger.Error("grpc listen: serving stopped", zap.String("address", n.addr), zap.Error(err))
			}
		}()
		logger.Info("serving gRPC on a dedicated listener", zap.String("address", ln.Addr().String()), zap.Bool("tls", n.tls))
	}
	return nil
}

// closeAny closes a listener of any kind.
func closeAny(v any) error {
	if c, ok := v.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// grpcGate admits the listener's RPCs as the site does: it waits for the
// store and the push key ring (as precheck), then checks the credentials
// in the metadata with the a2a_auth handler in front of this handler in
// the http app's routes (found once, after every module is provisioned:
// the store is ready only once the apps start).
func (h *AgentHandler) grpcGate(ctx caddy.Context) a2agrpc.Gate {
	var once sync.Once
	var guard *AuthHandler
	return func(r *http.Request) (a2agrpc.Admission, error) {
		if err := h.shared.wait(r.Context()); err != nil {
			return a2agrpc.Admission{}, status.Error(codes.Unavailable, "the task store is not available")
		}
		if h.pushRef != nil {
			if err := h.pushRef.wait(r.Context()); err != nil {
				return a2agrpc.Admission{}, status.Error(codes.Unavailable, "the push key ring is not available")
			}
		}
		once.Do(func() {
			guards, _ := agentAuth(ctx)
			guard = guards[h]
		})
		if guard == nil || !guard.authn.Enabled() {
			return a2agrpc.Admission{}, nil
		}
		res, ok := guard.authn.Check(r)
		if !ok {
			return a2agrpc.Admission{}, a2a.ErrUnauthenticated()
		}
		return a2agrpc.Admission{Principal: res.Principal, Identity: identityOf(res), Expires: res.Expires}, nil
	}
}

// unmarshalGRPCListen parses one listen, tls_cert or tls_key line of the
// grpc block.
func (h *AgentHandler) unmarshalGRPCListen(d *caddyfile.Dispenser) error {
	opt := d.Val()
	if !d.NextArg() {
		return d.ArgErr()
	}
	v := d.Val()
	if d.NextArg() {
		return d.ArgErr()
	}
	if h.GRPCListen == nil {
		h.GRPCListen = new(GRPCListenConfig)
	}
	switch opt {
	case "listen":
		h.GRPCListen.Address = v
	case "tls_cert":
		h.GRPCListen.TLSCert = v
	case "tls_key":
		h.GRPCListen.TLSKey = v
	}
	return nil
}

// grpcListenPort is the port the card advertises the GRPC interface at:
// the dedicated listener's, with the site's host ("" without listen).
func (h *AgentHandler) grpcListenPort() string {
	if h.GRPCListen == nil {
		return ""
	}
	_, port, err := net.SplitHostPort(h.GRPCListen.Address)
	if err != nil {
		return ""
	}
	return port
}

// grpcListenAddresses are the addresses of this config's dedicated gRPC
// listeners, locked like the HTTP servers' (OPS-9, listeners.go).
func (a *App) grpcListenAddresses() []string {
	out := make([]string, 0, len(a.grpcListens))
	for _, h := range a.grpcListens {
		out = append(out, h.grpcNative.addr)
	}
	return out
}

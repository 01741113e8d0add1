package caddymodule

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/caddy-a2a/caddy-a2a/internal/tenantpeek"
)

func init() {
	caddy.RegisterModule(TenantRouter{})
}

// Defaults of the tenant router's pre-read, which runs before
// authentication: what a stranger can make the site hold.
const (
	defaultTenantPeekBytes   = 64 << 10
	defaultTenantPeekTimeout = 10 * time.Second
	defaultTenantHeldBytes   = 16 << 20
)

// grpcServicePrefix is the path prefix of the gRPC service's methods.
const grpcServicePrefix = "/lf.a2a.v1.A2AService/"

// TenantRouter sends a request to the site root that names the A2A tenant
// of one of the site's agents to that agent, by rewriting the path for the
// agent routes that follow (TURN-10): a JSON-RPC POST / whose top-level
// params.tenant names it goes to /<tenant>/, a gRPC call
// (/lf.a2a.v1.A2AService/<Method>) whose first message's tenant field names
// it goes to /<tenant>/lf.a2a.v1.A2AService/<Method>. The a2a directive
// puts it in a route of its own before the agent routes, so the agent's
// own auth and limits apply. A request naming no tenant, or one the site
// does not serve, goes on unchanged (the root agent answers an unknown
// tenant with TaskNotFoundError). REST /{tenant}/… routes need no router:
// the agent routes match them by path.
//
// It reads only the start of the body, before authentication: until the
// tenant is known or cannot be (a streaming scan), at most MaxBodySize
// bytes, within ReadTimeout, and while the site holds less than
// MaxHeldBytes in such pre-reads. What it read is replayed in front of the
// rest of the body.
type TenantRouter struct {
	// Agents are the tenant names served (the agents' names).
	Agents []string `json:"agents,omitempty"`
	// MaxBodySize bounds the bytes read to find the tenant. A request
	// whose tenant is not within them goes on to the root agent unchanged,
	// which answers a tenant it does not serve with TaskNotFoundError (put
	// params.tenant before a large message, or send to /<agent>/).
	// Default: 65536 (64 KiB).
	MaxBodySize int64 `json:"max_body_size,omitempty"`
	// ReadTimeout bounds the time the pre-read waits for those bytes; a
	// client that sends them slower is answered 408 and its connection's
	// read deadline ends the request. After the pre-read the deadline is
	// cleared. Default: 10s.
	ReadTimeout caddy.Duration `json:"read_timeout,omitempty"`
	// MaxHeldBytes bounds the bytes all pending pre-reads of this router
	// (one site) hold at once; a request that would exceed it is not read
	// and goes on unrouted (as a request naming no tenant). Default:
	// 16777216 (16 MiB).
	MaxHeldBytes int64 `json:"max_held_bytes,omitempty"`

	held  *atomic.Int64 // set by Provision
	gauge prometheus.Gauge
	done  *prometheus.CounterVec
}

// CaddyModule returns the Caddy module information.
func (TenantRouter) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.a2a_tenants",
		New: func() caddy.Module { return new(TenantRouter) },
	}
}

// tenantHeldGauge is the metric of the bytes held by pending pre-reads,
// shared by every router of a config's registry.
var tenantHeldGauge = prometheus.GaugeOpts{
	Name: "caddy_a2a_tenant_preread_bytes",
	Help: "Request body bytes the a2a_tenants routers hold while reading for the tenant, before authentication.",
}

// tenantPreReadsOpts is the counter of finished pre-reads by outcome:
// routed (a served tenant was found), unrouted (none, another or not
// within the size or budget), timeout (answered 408).
var tenantPreReadsOpts = prometheus.CounterOpts{
	Name: "caddy_a2a_tenant_prereads_total",
	Help: "Tenant pre-reads the a2a_tenants routers finished, by outcome (routed, unrouted, timeout).",
}

// Provision registers the held-bytes gauge and the pre-read counter.
func (h *TenantRouter) Provision(ctx caddy.Context) error {
	if h.MaxBodySize < 0 || h.MaxHeldBytes < 0 || h.ReadTimeout < 0 {
		return errors.New("a2a_tenants: max_body_size, max_held_bytes and read_timeout must not be negative")
	}
	g := prometheus.NewGauge(tenantHeldGauge)
	if err := ctx.GetMetricsRegistry().Register(g); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return err
		}
		g = are.ExistingCollector.(prometheus.Gauge)
	}
	h.gauge = g
	c := prometheus.NewCounterVec(tenantPreReadsOpts, []string{"outcome"})
	if err := ctx.GetMetricsRegistry().Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return err
		}
		c = are.ExistingCollector.(*prometheus.CounterVec)
	}
	h.done = c
	h.held = new(atomic.Int64)
	return nil
}

// count records the outcome of one finished pre-read.
func (h *TenantRouter) count(outcome string) {
	if h.done != nil {
		h.done.WithLabelValues(outcome).Inc()
	}
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (h *TenantRouter) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if r.Method != http.MethodPost || r.Body == nil || len(h.Agents) == 0 || h.held == nil {
		return next.ServeHTTP(w, r)
	}
	method, isGRPC := strings.CutPrefix(r.URL.Path, grpcServicePrefix)
	if !isGRPC && r.URL.Path != "/" {
		return next.ServeHTTP(w, r)
	}
	tenant, err := h.preRead(w, r, func(pr io.Reader) (string, error) {
		if isGRPC {
			return tenantpeek.GRPC(pr, tenantpeek.GRPCFieldOf(method), int(h.limit()))
		}
		return tenantpeek.JSONRPC(pr)
	})
	if errors.Is(err, os.ErrDeadlineExceeded) {
		h.count("timeout")
		w.Header().Set("Connection", "close")
		http.Error(w, "request body too slow", http.StatusRequestTimeout)
		return nil
	}
	if tenant != "" && slices.Contains(h.Agents, tenant) {
		h.count("routed")
		r.URL.Path = "/" + tenant + r.URL.Path
		r.URL.RawPath = ""
	} else {
		h.count("unrouted")
	}
	return next.ServeHTTP(w, r)
}

// limit is the effective pre-read size.
func (h *TenantRouter) limit() int64 {
	if h.MaxBodySize > 0 {
		return h.MaxBodySize
	}
	return defaultTenantPeekBytes
}

// preRead runs scan over the start of r's body within the read deadline,
// then puts what it read back in front of the rest of the body. The
// bytes are counted as held (HeldBytes, the gauge) until it returns.
func (h *TenantRouter) preRead(w http.ResponseWriter, r *http.Request, scan func(io.Reader) (string, error)) (string, error) {
	budget := h.MaxHeldBytes
	if budget <= 0 {
		budget = defaultTenantHeldBytes
	}
	timeout := time.Duration(h.ReadTimeout)
	if timeout <= 0 {
		timeout = defaultTenantPeekTimeout
	}
	rc := http.NewResponseController(w)
	deadline := rc.SetReadDeadline(time.Now().Add(timeout)) == nil
	pr := &peekReader{body: r.Body, left: h.limit(), held: h.held, budget: budget, gauge: h.gauge}
	tenant, err := scan(pr)
	pr.release()
	r.Body = readCloser{Reader: io.MultiReader(bytes.NewReader(pr.buf), r.Body), Closer: r.Body}
	if deadline && !errors.Is(err, os.ErrDeadlineExceeded) {
		_ = rc.SetReadDeadline(time.Time{})
	}
	return tenant, err
}

// HeldBytes is what pending pre-reads hold now (a test hook beside the
// caddy_a2a_tenant_preread_bytes gauge).
func (h *TenantRouter) HeldBytes() int64 {
	if h.held == nil {
		return 0
	}
	return h.held.Load()
}

// errPeekLimit and errPeekBudget end a pre-read at its size or the site's
// budget; the request then goes on unrouted.
var (
	errPeekLimit  = errors.New("a2a_tenants: tenant not within the pre-read size")
	errPeekBudget = errors.New("a2a_tenants: pre-read budget exhausted")
)

// peekReader reads the body for a scan, keeping every byte in buf, at
// most left more, each counted in held (shared by the router, at most
// budget) before it is read.
type peekReader struct {
	body   io.Reader
	buf    []byte
	left   int64
	held   *atomic.Int64
	budget int64
	gauge  prometheus.Gauge
	mine   int64 // bytes of held counted for this reader
}

// Read implements io.Reader.
func (p *peekReader) Read(b []byte) (int, error) {
	if p.left <= 0 {
		return 0, errPeekLimit
	}
	want := int64(min(len(b), 4096))
	want = min(want, p.left)
	if p.held.Add(want) > p.budget {
		p.held.Add(-want)
		return 0, errPeekBudget
	}
	n, err := p.body.Read(b[:want])
	p.held.Add(int64(n) - want)
	p.mine += int64(n)
	if p.gauge != nil {
		p.gauge.Add(float64(n))
	}
	p.left -= int64(n)
	p.buf = append(p.buf, b[:n]...)
	return n, err
}

// release stops counting the reader's bytes as held.
func (p *peekReader) release() {
	p.held.Add(-p.mine)
	if p.gauge != nil {
		p.gauge.Sub(float64(p.mine))
	}
	p.mine = 0
}

// readCloser reads from Reader and closes Closer.
type readCloser struct {
	io.Reader
	io.Closer
}

var (
	_ caddy.Provisioner           = (*TenantRouter)(nil)
	_ caddyhttp.MiddlewareHandler = (*TenantRouter)(nil)
)

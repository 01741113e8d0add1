package caddymodule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/internal/cli"
)

func init() {
	caddy.RegisterModule(StdioApp{})
}

// StdioApp is the app `caddy a2a stdio` runs in place of the http app
// (XPORT-4): it provisions one site's a2a handler — with the same `a2a` app,
// hence the same store, data directory, push engines and card — and serves
// nothing itself; the command reads the provisioned handler's service.
// It is not meant for hand-written configs.
type StdioApp struct {
	// HandlerRaw is the site's a2a handler, as the adapted config has it.
	HandlerRaw json.RawMessage `json:"handler,omitempty" caddy:"namespace=http.handlers inline_key=handler"`
	// AgentsRaw are the a2a handlers of the other agents of the site with
	// the same auth, by tenant: requests naming one are served by it
	// (TURN-10).
	AgentsRaw map[string]json.RawMessage `json:"agents,omitempty" caddy:"namespace=http.handlers inline_key=handler"`

	handler *AgentHandler
	agents  map[string]*AgentHandler
}

// CaddyModule returns the Caddy module information.
func (StdioApp) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "a2a_stdio",
		New: func() caddy.Module { return new(StdioApp) },
	}
}

// Provision loads and provisions the handler.
func (a *StdioApp) Provision(ctx caddy.Context) error {
	mod, err := ctx.LoadModule(a, "HandlerRaw")
	if err != nil {
		return fmt.Errorf("loading the a2a handler: %w", err)
	}
	h, ok := mod.(*AgentHandler)
	if !ok {
		return fmt.Errorf("a2a_stdio: handler is %T, not the a2a handler", mod)
	}
	a.handler = h
	if len(a.AgentsRaw) == 0 {
		return nil
	}
	mods, err := ctx.LoadModule(a, "AgentsRaw")
	if err != nil {
		return fmt.Errorf("loading the site's agents: %w", err)
	}
	a.agents = map[string]*AgentHandler{}
	for t, m := range mods.(map[string]any) {
		if ah, ok := m.(*AgentHandler); ok {
			a.agents[t] = ah
		}
	}
	return nil
}

// Start implements caddy.App; the a2a app opens the store.
func (a *StdioApp) Start() error { return nil }

// Stop implements caddy.App.
func (a *StdioApp) Stop() error { return nil }

// stdioReadyTimeout bounds the wait for the store and push key ring.
const stdioReadyTimeout = 30 * time.Second

// openStdio starts the site cfg names with no HTTP listener: it adapts the
// config, keeps its `a2a` app, logging and storage, drops every other app
// (http, tls, pki: nothing listens, no certificate is managed), runs the
// site's a2a handler in a StdioApp with the admin endpoint disabled and
// config persistence off, and returns the handler's service. Logs that the
// config sends to stdout go to stderr.
func openStdio(cfg cli.StdioConfig) (*cli.StdioSite, error) {
	body, err := os.ReadFile(cfg.ConfigFile)
	if err != nil {
		return nil, errors.New("reading the config file failed")
	}
	raw := body
	if cfg.Adapter != "" {
		adapter := caddyconfig.GetAdapter(cfg.Adapter)
		if adapter == nil {
			return nil, fmt.Errorf("unknown config adapter %q", cfg.Adapter)
		}
		var warns []caddyconfig.Warning
		raw, warns, err = adapter.Adapt(body, map[string]any{"filename": cfg.ConfigFile})
		if err != nil {
			return nil, fmt.Errorf("adapting the config: %w", err)
		}
		for _, w := range warns {
			caddy.Log().Warn(w.String())
		}
	}
	loaded, cand, grace, err := stdioConfig(raw, cfg.Site)
	if err != nil {
		return nil, err
	}
	if err := caddy.Load(loaded, true); err != nil {
		return nil, fmt.Errorf("starting the site: %w", err)
	}
	stop := sync.OnceFunc(func() { _ = caddy.Stop() })
	site, err := stdioSiteOf(stop, siteRequest(cand.listen, cand.hosts, cand.tls))
	if err != nil {
		stop()
		return nil, err
	}
	site.Grace, site.Label = grace, cand.label()
	return site, nil
}

// stdioConfig builds the config `caddy a2a stdio` loads from an adapted
// config, for the named site.
func stdioConfig(adapted []byte, site string) ([]byte, stdioCandidate, time.Duration, error) {
	var in struct {
		Logging any                        `json:"logging,omitempty"`
		Storage json.RawMessage            `json:"storage,omitempty"`
		Apps    map[string]json.RawMessage `json:"apps,omitempty"`
	}
	if err := json.Unmarshal(adapted, &in); err != nil {
		return nil, stdioCandidate{}, 0, fmt.Errorf("reading the config: %w", err)
	}
	cands, grace, err := stdioCandidates(in.Apps["http"])
	if err != nil {
		return nil, stdioCandidate{}, 0, err
	}
	cand, err := pickStdioSite(cands, site)
	if err != nil {
		return nil, stdioCandidate{}, 0, err
	}
	handler, err := withoutRedisRPC(cand.handler)
	if err != nil {
		return nil, stdioCandidate{}, 0, err
	}
	stdioApp := map[string]any{"handler": handler}
	if sib := stdioSiblings(cands, cand); len(sib) > 0 {
		stdioApp["agents"] = sib // TURN-10
	}
	apps := map[string]any{"a2a_stdio": stdioApp}
	if a2aApp, ok := in.Apps["a2a"]; ok {
		if apps["a2a"], err = withoutRedisRPC(a2aApp); err != nil {
			return nil, stdioCandidate{}, 0, err
		}
	}
	out := map[string]any{
		"admin": map[string]any{"disabled": true, "config": map[string]any{"persist": false}},
		"apps":  apps,
	}
	if in.Logging != nil {
		out["logging"] = stdoutToStderr(in.Logging)
	}
	if len(in.Storage) > 0 {
		out["storage"] = in.Storage
	}
	b, err := json.Marshal(out)
	return b, cand, grace, err
}

// withoutRedisRPC drops the redis_rpc block of a handler's or the a2a
// app's JSON: stdio serves stdin/stdout only (XPORT-4, no listener), so it
// does not join the site's Redis consumer group — it would take requests
// of the HTTP gateway's clients into another data_dir — and there is no
// http app whose a2a_auth a Redis consumer would authenticate with.
func withoutRedisRPC(raw json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("reading the config: %w", err)
	}
	if _, ok := m["redis_rpc"]; !ok {
		return raw, nil
	}
	delete(m, "redis_rpc")
	return json.Marshal(m)
}

// stdioSiteOf reads the service of the loaded StdioApp, once its store
// (and push key ring) are open; siteReq stands for a request to the site
// (siteRequest), for the card's base URL.
func stdioSiteOf(stop func(), siteReq *http.Request) (*cli.StdioSite, error) {
	appIface, err := caddy.ActiveContext().AppIfConfigured("a2a_stdio")
	if err != nil {
		return nil, fmt.Errorf("the stdio app did not load: %w", err)
	}
	sa := appIface.(*StdioApp)
	h := sa.handler
	ctx, cancel := context.WithTimeout(context.Background(), stdioReadyTimeout)
	defer cancel()
	if err := h.shared.wait(ctx); err != nil {
		return nil, errors.New("the task store is not available")
	}
	for _, ah := range append([]*AgentHandler{h}, sa.siblings()...) {
		if ah.pushRef != nil {
			if err := ah.pushRef.wait(ctx); err != nil {
				return nil, errors.New("the push key ring is not available")
			}
		}
	}
	site := &cli.StdioSite{
		Dispatcher:   h.handler.Dispatcher(),
		MaxLineBytes: h.handler.Transport().MaxBodyBytes,
		Logger:       h.logger.With(zap.String("carrier", "stdio")),
		Stop:         stop,
		Tenants:      sa.stdioTenants(),
	}
	if h.Card != nil && h.Card.handler != nil {
		site.BaseURL = h.Card.handler.Runtime(siteReq).BaseURL
	}
	return site, nil
}

var (
	_ caddy.App         = (*StdioApp)(nil)
	_ caddy.Provisioner = (*StdioApp)(nil)
)

package caddymodule

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/backends"
	"github.com/caddy-a2a/caddy-a2a/agent/binding"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/httpx"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc03"
	"github.com/caddy-a2a/caddy-a2a/agent/card"
)

// Provision loads the backend and builds the service over the app's store.
// It first runs Validate (Caddy calls Validate only after Provision), so
// nothing is loaded or started with a bad option value.
func (h *AgentHandler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	if err := h.Validate(); err != nil {
		return err
	}
	appIface, err := ctx.App("a2a")
	if err != nil {
		return fmt.Errorf("loading the a2a app: %w", err)
	}
	app := appIface.(*App)
	mod, err := h.loadBackend(ctx)
	if err != nil {
		return err
	}
	if ab, ok := mod.(*A2ABackend); ok && h.Card != nil {
		registerUpstreamSkills(ctx, h.Card.Name, ab.impl.(*backends.A2A)) // TURN-9
	}
	metrics, err := agentMetrics(ctx)
	if err != nil {
		return err
	}
	cfg, err := h.serviceConfig(app, mod, metrics)
	if err != nil {
		return err
	}
	tc := h.transportConfig()
	if h.Card != nil {
		if err := h.wireCard(ctx, app, &cfg, &tc); err != nil {
			return err
		}
	}
	if h.Push != nil {
		if err := h.wirePush(ctx, app, &cfg); err != nil {
			return err
		}
	}
	cfg.OwnerScope, _ = h.ownerScope() // checked by Validate
	h.hub = app.shared.hub
	h.shared = app.shared
	svc := agent.NewService(app.shared.hub, cfg)
	d := jsonrpc.NewDispatcher(agent.NewHandler(svc)) // the site's interceptors, built once
	if h.LegacyV03 {
		d = d.WithCompat(jsonrpc03.New(metrics, cfg.AgentName)) // RPC-2: 0.3 clients on every JSON-RPC carrier
	}
	h.handler = binding.NewHandler(d, tc)
	h.wireWebSocket(app, tc)
	h.provisionGRPC()
	h.provisionGRPCJSONRPC(app, tc)
	if err := h.provisionGRPCListen(ctx, app); err != nil {
		return err
	}
	if h.RedisRPC != nil {
		return app.addRedisRPC(h.RedisRPC, h) // XPORT-5, started with the app
	}
	return nil
}

// maxEventLogSize bounds event_log_size: a resumed stream's replay is
// queued at once and must stay below store.MaxQueuedEvents.
const maxEventLogSize = 4096

// errEventLogSize is the one message for an event_log_size out of range.
var errEventLogSize = fmt.Errorf("event_log_size: must be between 1 and %d", maxEventLogSize)

// Validate checks the option values that need no provisioning:
// subscribe_idle_timeout (RPC-11), event_log_size (RPC-17), dedupe (RPC-18), artifact_urls, thinking_exposure,
// the counts, owner_scope (AUTH-4) and the push, redis_rpc and websocket blocks. The Caddyfile parser runs it
// too, so both config forms get the same errors.
func (h *AgentHandler) Validate() error {
	if h.SubscribeIdleTimeout < 0 {
		return fmt.Errorf("subscribe_idle_timeout: must be a positive duration")
	}
	if err := h.validateLimits(); err != nil {
		return err
	}
	if h.EventLogSize < 0 || h.EventLogSize > maxEventLogSize {
		return errEventLogSize
	}
	if err := notNegative("max_concurrent_turns", int64(h.MaxConcurrentTurns)); err != nil {
		return err
	}
	if err := notNegative("history_limit", int64(h.HistoryLimit)); err != nil {
		return err
	}
	switch h.Dedupe {
	case "", "extension", "always":
	default:
		return fmt.Errorf("dedupe: must be extension or always, not %q", h.Dedupe)
	}
	switch h.ArtifactURLs {
	case "", "http", "file":
	default:
		return fmt.Errorf("artifact_urls: must be http or file, not %q", h.ArtifactURLs)
	}
	if _, _, err := h.thinkingExposure(); err != nil {
		return err
	}
	if err := h.WebSocket.validate(); err != nil {
		return err
	}
	if err := h.validateBlocks(); err != nil {
		return err
	}
	_, err := h.ownerScope()
	return err
}

// validateBlocks checks the push, redis_rpc and grpc blocks.
func (h *AgentHandler) validateBlocks() error {
	if err := h.validateGRPCListen(); err != nil {
		return err
	}
	if err := h.validateGRPC(); err != nil {
		return err
	}
	if h.Push != nil {
		if err := h.Push.config().Validate(); err != nil {
			return err
		}
	}
	if h.RedisRPC != nil {
		return h.RedisRPC.validate()
	}
	return nil
}

// thinkingExposure says whether tool traces and raw thinking are exposed
// in status metadata (thinking_exposure; default: tool traces only).
func (h *AgentHandler) thinkingExposure() (toolTrace, rawThinking bool, err error) {
	if h.ThinkingExposure == nil {
		return true, false, nil
	}
	for _, t := range *h.ThinkingExposure {
		switch t {
		case "tool_trace":
			toolTrace = true
		case "raw_thinking":
			rawThinking = true
		default:
			return false, false, fmt.Errorf("thinking_exposure: unknown type %q (want tool_trace or raw_thinking)", t)
		}
	}
	return toolTrace, rawThinking, nil
}

// ownerScope is the scope prefixed to every owner (AUTH-4): owner_scope,
// else the card's name; "-" turns scoping off. It must not contain '/'.
func (h *AgentHandler) ownerScope() (string, error) {
	var scope string
	switch {
	case h.OwnerScope == "-":
	case h.OwnerScope != "":
		scope = h.OwnerScope
	case h.Card != nil:
		scope = h.Card.Name
	}
	if strings.Contains(scope, "/") {
		return "", fmt.Errorf("owner_scope: must not contain '/'")
	}
	return scope, nil
}

// loadBackend loads the backend module (echo by default) into h.backend.
func (h *AgentHandler) loadBackend(ctx caddy.Context) (any, error) {
	if h.BackendRaw == nil {
		h.BackendRaw = json.RawMessage(`{"backend":"echo"}`)
	}
	var named struct {
		Backend string `json:"backend"`
	}
	if json.Unmarshal(h.BackendRaw, &named) == nil {
		if err := knownBackend(named.Backend); err != nil {
			return nil, err
		}
	}
	mod, err := ctx.LoadModule(h, "BackendRaw")
	if err != nil {
		return nil, fmt.Errorf("loading backend: %w", err)
	}
	b, ok := mod.(backend.Backend)
	if !ok {
		return nil, fmt.Errorf("backend: module %T does not run turns", mod)
	}
	if rb, ok := mod.(runtimeBackend); ok {
		b = rb.runtimeBackend()
	}
	if pc, ok := mod.(interface{ checkProgram(dir string) error }); ok {
		if err := pc.checkProgram(h.defaultWorkspace()); err != nil {
			return nil, fmt.Errorf("backend %w", err)
		}
	}
	h.backend = b
	return mod, nil
}

// knownBackend refuses a backend name that no a2a.backends module is
// registered under, naming the valid ones (OPS-9).
func knownBackend(name string) error {
	if _, err := caddy.GetModule("a2a.backends." + name); err == nil {
		return nil
	}
	var names []string
	for _, m := range caddy.GetModules("a2a.backends") {
		names = append(names, m.ID.Name())
	}
	return fmt.Errorf("backend: unknown backend %q (want one of: %s)", name, strings.Join(names, ", "))
}

// defaultWorkspace is the directory a turn naming no cwd runs in:
// default_cwd, else the working directory.
func (h *AgentHandler) defaultWorkspace() string {
	if h.DefaultCwd != "" {
		return caddy.NewReplacer().ReplaceKnown(h.DefaultCwd, "")
	}
	wd, _ := os.Getwd()
	return wd
}

// runtimeBackend is implemented by a backend module that delegates its
// turns to a backend it built: the service is handed that one, so a turn
// waiting in the backend holds no delegating frame on its stack (issue 17).
type runtimeBackend interface {
	runtimeBackend() backend.Backend
}

// serviceConfig is the service configuration from the handler's options,
// the app's shared state and the workspace rules (INPUT-1); the card and
// push parts are wired by wireCard and wirePush.
func (h *AgentHandler) serviceConfig(app *App, mod any, metrics *agent.Metrics) (agent.Config, error) {
	cfg := agent.Config{
		Backend:               h.backend,
		BackendName:           backendName(mod),
		Metrics:               metrics,
		AgentName:             agentName(h),
		Namespace:             h.Namespace,
		ContextWait:           time.Duration(h.ContextWait),
		IdleTimeout:           time.Duration(h.IdleTimeout),
		MaxConcurrentTurns:    h.MaxConcurrentTurns,
		HistoryLimit:          h.HistoryLimit,
		CancelDrain:           time.Duration(h.CancelDrain),
		SubscribeIdleTimeout:  time.Duration(h.SubscribeIdleTimeout),
		EventLogSize:          h.EventLogSize,
		DedupeWindow:          time.Duration(h.DedupeWindow),
		DedupeAlways:          h.Dedupe == "always",
		CancelOnDisconnect:    h.CancelOnDisconnect,
		SensitiveMetadataKeys: h.SensitiveMetadataKeys,
		PageTokenKey:          app.shared.pageTokenKey,
		Limits:                h.limitRules(app),
		Logger:                h.logger,
		ArtifactURLs:          h.ArtifactURLs,
		MaxArtifactBytes:      h.MaxArtifactSize,
		InlineArtifactBytes:   h.InlineArtifactBytes,
		ArtifactDir:           filepath.Join(app.shared.dataDir, "artifacts"),
		InputDir:              filepath.Join(app.shared.dataDir, "inputs"),
		Input: agent.InputLimits{
			MaxTextBytes: h.MaxTextPartSize, MaxInlineBytes: h.MaxInlinePartSize, MaxFileBytes: h.MaxFilePartSize,
			TextTypes: h.TextMediaTypes, MediaTypes: h.attachmentTypes(),
		},
	}
	var err error
	if cfg.ToolTrace, cfg.RawThinking, err = h.thinkingExposure(); err != nil {
		return agent.Config{}, err
	}
	if cfg.Workspace, err = h.workspace(); err != nil {
		return agent.Config{}, err
	}
	return cfg, nil
}

// transportConfig is the HTTP transport configuration of the bindings:
// keep-alive, body limit and the base URL of a request (honouring
// X-Forwarded-* only from trusted proxies).
func (h *AgentHandler) transportConfig() httpx.TransportConfig {
	return httpx.TransportConfig{
		KeepAlive:    time.Duration(h.KeepAlive),
		MaxBodyBytes: h.MaxBodySize,
		BaseURL: func(r *http.Request) string {
			trusted, _ := caddyhttp.GetVar(r.Context(), caddyhttp.TrustedProxyVarKey).(bool)
			return card.BaseURL(r, trusted)
		},
	}
}

// wireCard provisions the card and takes from it the namespace default,
// output modes, extensions, the base URL and, with auth on, the extended
// card (CARD-8).
func (h *AgentHandler) wireCard(ctx caddy.Context, app *App, cfg *agent.Config, tc *httpx.TransportConfig) error {
	if err := h.Card.provisionFor(ctx, h); err != nil { // the card facts: card_facts.go
		return fmt.Errorf("card: %w", err)
	}
	if cfg.Namespace == "" {
		cfg.Namespace = h.Card.NamespaceOrDefault()
	}
	cfg.OutputModes = h.Card.OutputModes
	cfg.SkillScopes = h.Card.SkillScopes() // AUTH-8: the skills' requires_scopes
	cardHandler := h.Card.handler
	built := cardHandler.Card(nil)
	for _, ext := range built.Capabilities.Extensions {
		cfg.Extensions = append(cfg.Extensions, ext.URI)
		if ext.Required {
			cfg.RequiredExtensions = append(cfg.RequiredExtensions, ext.URI)
		}
	}
	tc.BaseURL = func(r *http.Request) string { return cardHandler.Runtime(r).BaseURL }
	tc.Tenant = strings.TrimPrefix(h.Card.PathPrefix, "/") // TURN-10: an agent is its own tenant
	if !cardHandler.Runtime(nil).AuthEnabled() {
		if len(cfg.SkillScopes) > 0 {
			h.logger.Warn("card skills require scopes but no auth is configured: every message naming such a skill is refused (AUTH-8)")
		}
		return nil
	}
	cfg.ExtendedCard = newExtendedCards(cardHandler, h.runtimeDetails(app, cfg.WithDefaults(), tc.WithDefaults())).get
	tc.ExtendedCardCache = h.extendedCardCache(cardHandler)
	return nil
}

// wirePush gets the app's push engine for h.Push (PUSH-1..7), registers
// its metrics and hands it to the service.
func (h *AgentHandler) wirePush(ctx caddy.Context, app *App, cfg *agent.Config) error {
	if len(h.Push.Sign) > 0 && h.Push.SignIssuer == "" && h.Card != nil {
		h.Push.SignIssuer = h.Card.PublicURL // PUSH-8: iss is the gateway's public URL
	}
	for _, k := range h.Push.Sign {
		if k.KeyFile != "" {
			denyStatePaths(caddy.NewReplacer().ReplaceKnown(k.KeyFile, "")) // INPUT-1a
		}
	}
	ref, err := app.pushEngine(h.Push, h.logger)
	if err != nil {
		return err
	}
	if err := registerPushMetrics(ctx, h.Push.queueName(), ref.engine); err != nil {
		return err
	}
	h.pushRef = ref
	cfg.Push = ref.engine
	cfg.MaxPushConfigsPerTask = h.Push.MaxConfigsPerTask
	return nil
}

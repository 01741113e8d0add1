package caddymodule

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/binding"
	a2agrpc "github.com/caddy-a2a/caddy-a2a/agent/binding/grpc"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/grpcjsonrpc"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/ws"
)

func init() {
	caddy.RegisterModule(AgentHandler{})
}

// AgentHandler serves the A2A 1.0 JSON-RPC binding on POST / and the
// HTTP+JSON (REST) routes (/message:send, /tasks/…), running turns through a
// backend and keeping tasks in the `a2a` app's store. Requests to other paths
// go to the next handler. The caller is the principal set by the a2a_auth
// handler earlier in the route (anonymous when there is none).
type AgentHandler struct {
	// BackendRaw is the backend that runs turns, a module in the
	// a2a.backends namespace, e.g. {"backend":"echo","chunks":4}.
	// Default: echo.
	BackendRaw json.RawMessage `json:"backend,omitempty" caddy:"namespace=a2a.backends inline_key=backend"`

	// Namespace is the metadata namespace (metadata.<ns>.cwd, tool traces,
	// usage). Default: the card's namespace, else iac_code.
	Namespace string `json:"namespace,omitempty"`

	// ContextWait is how long a message waits for a busy context before its
	// task fails with "Task is already working.". Default: 1s.
	ContextWait caddy.Duration `json:"context_wait,omitempty"`

	// IdleTimeout evicts a context idle this long from memory (its tasks
	// stay stored; a later message starts a fresh backend session).
	// Default: 1h.
	IdleTimeout caddy.Duration `json:"idle_timeout,omitempty"`

	// MaxConcurrentTurns bounds the turns running at once. Default: 64.
	MaxConcurrentTurns int `json:"max_concurrent_turns,omitempty"`

	// HistoryLimit is how many history messages a task returns when the
	// client gives no historyLength. Default: 100.
	HistoryLimit int `json:"history_limit,omitempty"`

	// CancelDrain bounds how long CancelTask waits for a running turn to
	// stop. Default: 30s.
	CancelDrain caddy.Duration `json:"cancel_drain,omitempty"`

	// KeepAlive is the interval of SSE keep-alive comments. Default: 15s.
	KeepAlive caddy.Duration `json:"keep_alive,omitempty"`

	// SubscribeIdleTimeout bounds how long a SubscribeToTask stream on an
	// input-required (or auth-required) task stays open waiting for a
	// follow-up message of the task; then it ends after a final Task
	// snapshot (RPC-11). Must be positive. Default: 10m.
	SubscribeIdleTimeout caddy.Duration `json:"subscribe_idle_timeout,omitempty"`

	// Limits are per-principal authorization and rate limits (AUTH-6),
	// keyed by principal name, by a selector of the caller's JWT —
	// "scope:NAME" (the token grants scope NAME) or "claim:NAME=VALUE" (its
	// claim NAME is VALUE or an array holding it) (AUTH-8) — or "*". A
	// caller gets the block named by its principal; else the selector
	// blocks its token matches, merged into the most permissive rule (a
	// method any allows; the highest rate and max_turns, none if any has
	// none); else "*" (the anonymous caller too). Checked on every method
	// of every binding. Default: none (every method, no rate limit).
	Limits map[string]*LimitsConfig `json:"limits,omitempty"`

	// Site names the multi-agent site (TURN-10) whose agent the handler
	// serves, set by the Caddyfile's agent blocks on the site root's
	// handler and on each agent's: a WebSocket or Redis Streams frame whose
	// params name the tenant of another agent of the same site is served
	// by that agent when its a2a_auth is the same as this handler's, and
	// answered TaskNotFoundError otherwise. Empty: no site.
	Site string `json:"site,omitempty"`

	// EventLogSize is how many of a task's latest events its event log
	// keeps for resumed streams (RPC-17: SubscribeToTask with
	// Last-Event-ID). 1..4096. Default: 1000.
	EventLogSize int `json:"event_log_size,omitempty"`

	// DedupeWindow is how long a sent messageId is remembered for
	// idempotent sends (RPC-18): a deduplicated resend by the same
	// principal to the same task or context within it starts no second
	// turn. Negative (off in the Caddyfile) disables idempotent sends and
	// the card no longer declares urn:caddy-a2a:idempotent-send:v1.
	// Default: 10m.
	DedupeWindow caddy.Duration `json:"dedupe_window,omitempty"`

	// Dedupe says which sends are deduplicated (RPC-18): "extension" (the
	// default) only those that activate urn:caddy-a2a:idempotent-send:v1
	// (A2A-Extensions header, gRPC metadata, frame headers), so a plain
	// A2A 1.0 client reusing a messageId always gets a new task; "always"
	// every send of the site, activated or not.
	Dedupe string `json:"dedupe,omitempty"`

	// MaxBodySize bounds request bodies, in bytes. Default: 33554432 (32 MiB).
	MaxBodySize int64 `json:"max_body_size,omitempty"`

	// ThinkingExposure lists what turn internals are exposed in status
	// metadata: tool_trace (tool progress) and raw_thinking (model
	// thinking). Default: [tool_trace]. An explicit empty list ("none" in the
	// Caddyfile) exposes neither.
	ThinkingExposure *[]string `json:"thinking_exposure,omitempty"`

	// CancelOnDisconnect cancels a streaming turn when its client
	// disconnects. Default: false (the turn goes on).
	CancelOnDisconnect bool `json:"cancel_on_disconnect,omitempty"`

	// LegacyV03 also serves A2A 0.3 clients on the JSON-RPC endpoint
	// (RPC-2): 0.3 method names, shapes and states translated to and from
	// the same tasks, and the dual card. Default: off (0.3 requests get
	// VersionNotSupportedError).
	LegacyV03 bool `json:"legacy_v03,omitempty"`

	// AllowedCwds are the roots a message's metadata.<ns>.cwd must lie in.
	// Default: IACCODE_A2A_ALLOWED_CWDS, else the working directory and the
	// system temp dir.
	AllowedCwds []string `json:"allowed_cwds,omitempty"`

	// DefaultCwd is the workspace of a message that names no
	// metadata.<ns>.cwd in a context not bound yet (INPUT-1). It must be an
	// existing directory inside the allowed roots and outside the gateway's
	// state, or the config is refused. Relative paths are resolved against
	// the working directory. Default: the working directory.
	DefaultCwd string `json:"default_cwd,omitempty"`

	// SensitiveMetadataKeys are keys under metadata.<ns> removed from
	// messages before they are stored or echoed. Default: api_key, apiKey,
	// token, password, secret, authorization.
	SensitiveMetadataKeys []string `json:"sensitive_metadata_keys,omitempty"`

	// ArtifactURLs says how stored artifact payloads are linked: "http"
	// (default: /artifacts/{taskId}/{artifactId} on this gateway, served to
	// the task's owner with ETag and Range) or "file" (file:// URLs of the
	// stored files under <data_dir>/artifacts, for same-host clients).
	ArtifactURLs string `json:"artifact_urls,omitempty"`

	// MaxArtifactSize bounds one stored artifact payload, in bytes.
	// Default: 10485760 (10 MiB).
	MaxArtifactSize int64 `json:"max_artifact_size,omitempty"`

	// InlineArtifactBytes is the largest raw artifact part a backend hands
	// over that is passed inline, in bytes; a larger one is stored under
	// <data_dir>/artifacts and becomes a url part (TURN-7). Default: 65536
	// (64 KiB).
	InlineArtifactBytes int64 `json:"inline_artifact_bytes,omitempty"`

	// MaxTextPartSize bounds data parts, raw text parts and file:// text
	// files, in bytes. Default: 1048576 (1 MiB).
	MaxTextPartSize int64 `json:"max_text_part_size,omitempty"`

	// MaxInlinePartSize bounds multimodal raw and data parts (decoded), in
	// bytes. Default: 5242880 (5 MiB).
	MaxInlinePartSize int64 `json:"max_inline_part_size,omitempty"`

	// MaxFilePartSize bounds multimodal file:// parts, in bytes. Default:
	// 26214400 (25 MiB).
	MaxFilePartSize int64 `json:"max_file_part_size,omitempty"`

	// TextMediaTypes are extra media types read as prompt text (besides
	// text/*, JSON, YAML, TOML, XML, Markdown); "type/*" matches a type.
	TextMediaTypes []string `json:"text_media_types,omitempty"`

	// AttachmentMediaTypes are the multimodal media types accepted as
	// attachments (manifest entries). Default: image/* and audio/*.
	AttachmentMediaTypes []string `json:"attachment_media_types,omitempty"`

	// OwnerScope prefixes every task, context and push-config owner:
	// "<scope>/<principal>". Sites that share a data directory but not
	// their callers must have different scopes, or a principal name used
	// on both (such as "default") would see the other site's tasks.
	// Default: the card's name. Sites meant to share tasks set the same
	// value; "-" turns scoping off (the owner is the bare principal).
	OwnerScope string `json:"owner_scope,omitempty"`

	// Card is the agent's card configuration, used for the authenticated
	// extended card (GetExtendedAgentCard), its output modes and required
	// extensions. The a2a directive copies its card block here.
	Card *CardHandler `json:"card,omitempty"`

	// Push turns push notifications on (PUSH-1..7). Default: off
	// (every push operation answers PushNotificationNotSupportedError).
	Push *PushConfig `json:"push,omitempty"`

	// RedisRPC also serves this handler over Redis Streams JSON-RPC
	// (XPORT-5); see RedisRPCConfig. Default: off.
	RedisRPC *RedisRPCConfig `json:"redis_rpc,omitempty"`

	// WebSocket turns the WebSocket JSON-RPC binding on (XPORT-3).
	// Default: off.
	WebSocket *WebSocketConfig `json:"websocket,omitempty"`

	ws *ws.Handler // nil without websocket
	// GRPC serves the official A2A gRPC service (lf.a2a.v1.A2AService,
	// XPORT-2) on this handler: HTTP/2 requests with Content-Type
	// application/grpc (TLS, or h2c with the server's `protocols h1 h2c`).
	// Default: off.
	GRPC bool `json:"grpc,omitempty"`
	// GRPCReflection also serves gRPC server reflection (grpc.reflection.v1
	// and v1alpha) describing lf.a2a.v1.A2AService, so grpcurl can list
	// and call it without the .proto files. Needs GRPC. Default: off.
	GRPCReflection bool `json:"grpc_reflection,omitempty"`
	// GRPCListen also serves the gRPC service on a listener of its own
	// with grpc-go's native transport (issue 29; see GRPCListenConfig).
	// Needs GRPC. Default: only on the site.
	GRPCListen *GRPCListenConfig `json:"grpc_listen,omitempty"`
	// GRPCJSONRPC serves the seed system's gRPC JSON-RPC envelope service
	// (iac_code.a2a.transports.proto.A2AJsonRpc, XPORT-6, protocolBinding
	// grpc-jsonrpc) on this handler, under the same listener rules as
	// GRPC: each envelope's payload is one JSON-RPC 2.0 request, served
	// like JSON-RPC over HTTP (same methods, errors, auth, limits and
	// tenants). Independent of GRPC. Default: off.
	GRPCJSONRPC bool `json:"grpc_jsonrpc,omitempty"`

	backend backend.Backend
	hub     *agent.Hub
	shared  *sharedState
	pushRef *pushEngineRef // nil without push
	handler *binding.Handler
	grpc    *a2agrpc.Server // nil unless GRPC
	// grpcJSONRPC is the envelope binding, nil unless GRPCJSONRPC.
	grpcJSONRPC *grpcjsonrpc.Server
	grpcNative  *grpcNative // nil without grpc_listen
	logger      *zap.Logger
}

// CaddyModule returns the Caddy module information.
func (AgentHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.a2a",
		New: func() caddy.Module { return new(AgentHandler) },
	}
}

// ServeHTTP answers A2A requests and passes anything else to next. When
// nothing after it answers either (no other handler in the site serves the
// path), the request is answered 404 with a JSON error body instead of
// Caddy's empty 200.
func (h *AgentHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	followTracing(r)
	principal, done, err := h.precheck(w, r)
	if done {
		return err
	}
	// The bindings (a stream among them) run from this small frame: see
	// AuthHandler.ServeHTTP.
	vw, vr := withRequestVars(w, r)
	served := h.handler.Serve(vw, vr, principal)
	vw.done(principal)
	if served {
		return nil
	}
	return h.notFound(w, r, next)
}

// precheck waits for the store and the push key ring and serves the gRPC
// and WebSocket bindings; done says it answered (with err), else principal
// is the caller for the HTTP bindings.
func (h *AgentHandler) precheck(w http.ResponseWriter, r *http.Request) (principal string, done bool, err error) {
	if caddy.Exiting() {
		// The process is stopping: refuse new turns even if the a2a app
		// has not been stopped yet (apps stop in no fixed order).
		h.hub.StopAccepting()
	}
	// The store and the push key ring load when the a2a app starts, which
	// may come just after the http app (OPS-6): wait for them.
	if err := h.shared.wait(r.Context()); err != nil {
		return "", true, caddyhttp.Error(http.StatusServiceUnavailable, errors.New("a2a: the task store is not available"))
	}
	if h.pushRef != nil {
		if err := h.pushRef.wait(r.Context()); err != nil {
			return "", true, caddyhttp.Error(http.StatusServiceUnavailable, errors.New("a2a: the push key ring is not available"))
		}
	}
	principal, _ = caddyhttp.GetVar(r.Context(), PrincipalVar).(string)
	if h.serveGRPCJSONRPC(w, r, principal) {
		return "", true, nil
	}
	if h.grpc != nil && a2agrpc.IsGRPC(r) {
		h.grpc.ServeHTTP(w, r, principal) // XPORT-2
		return "", true, nil
	}
	if h.ws != nil && h.ws.Handles(r) {
		// XPORT-3; a2a_auth checked the upgrade; the connection's access
		// ends when its credential expires (AUTH-10).
		expires, _ := caddyhttp.GetVar(r.Context(), CredentialExpiresVar).(time.Time)
		h.ws.ServeUntil(w, r, principal, expires)
		return "", true, nil
	}
	return principal, false, nil
}

// notFound passes a request no binding served to next, and answers 404
// when next does not answer it either.
func (h *AgentHandler) notFound(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	aw := &answeredWriter{ResponseWriterWrapper: &caddyhttp.ResponseWriterWrapper{ResponseWriter: w}}
	if err := next.ServeHTTP(aw, r); err != nil || aw.answered {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNotFound)
	if r.Method != http.MethodHead {
		_, _ = w.Write(notFoundBody)
	}
	return nil
}

// notFoundBody answers a path no handler of an a2a site serves, in the
// google.rpc.Status shape of the REST errors.
var notFoundBody = []byte(`{"error":{"code":404,"status":"NOT_FOUND","message":"Not found"}}`)

// answeredWriter records whether a later handler started a response: a
// header, a body, a flush or a hijacked connection.
type answeredWriter struct {
	*caddyhttp.ResponseWriterWrapper
	answered bool
}

// WriteHeader implements http.ResponseWriter.
func (w *answeredWriter) WriteHeader(code int) {
	w.answered = true
	w.ResponseWriterWrapper.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (w *answeredWriter) Write(b []byte) (int, error) {
	w.answered = true
	return w.ResponseWriterWrapper.Write(b)
}

// ReadFrom implements io.ReaderFrom.
func (w *answeredWriter) ReadFrom(r io.Reader) (int64, error) {
	w.answered = true
	return w.ResponseWriterWrapper.ReadFrom(r)
}

// FlushError is found by http.ResponseController before Unwrap.
func (w *answeredWriter) FlushError() error {
	w.answered = true
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Flush implements http.Flusher.
func (w *answeredWriter) Flush() { _ = w.FlushError() }

// Hijack is found by http.ResponseController before Unwrap.
func (w *answeredWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.answered = true
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

var (
	_ caddy.Provisioner           = (*AgentHandler)(nil)
	_ caddy.Validator             = (*AgentHandler)(nil)
	_ caddyhttp.MiddlewareHandler = (*AgentHandler)(nil)
)

// workspace builds the workspace rules of the handler (INPUT-1, INPUT-1a):
// the roots (allowed_cwds, else IACCODE_A2A_ALLOWED_CWDS, else the working
// directory and the temp dir), the default (default_cwd, else the working
// directory), which must itself be a valid workspace, and the process's
// gateway state paths.
func (h *AgentHandler) workspace() (*agent.Workspace, error) {
	wd, _ := os.Getwd()
	roots := h.AllowedCwds
	if len(roots) == 0 {
		roots = agent.DefaultRoots(wd)
	}
	ws := agent.NewWorkspace(h.defaultWorkspace(), roots)
	ws.Denied = statePaths
	if err := ws.CheckDefault(); err != nil {
		if h.DefaultCwd == "" {
			return nil, errors.New("default_cwd: not set, and the working directory (the default workspace) is not inside the allowed roots (allowed_cwds) or lies in the gateway's state; set default_cwd to a directory inside allowed_cwds")
		}
		return nil, errors.New("default_cwd: must be an existing directory inside the allowed roots (allowed_cwds) and outside the gateway's state")
	}
	return ws, nil
}

// attachmentTypes are the configured attachment media types or, by
// default, images, audio and every non-text input mode the card advertises
// (so a card that lists application/octet-stream accepts such parts).
func (h *AgentHandler) attachmentTypes() []string {
	if len(h.AttachmentMediaTypes) > 0 || h.Card == nil {
		return h.AttachmentMediaTypes
	}
	types := agent.DefaultAttachmentTypes()
	for _, m := range h.Card.InputModes {
		if !agent.TextLike(m) && !slices.Contains(types, m) {
			types = append(types, m)
		}
	}
	return types
}

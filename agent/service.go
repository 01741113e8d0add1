package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// Config is the behaviour of one agent endpoint. Zero values take the
// documented defaults (see WithDefaults).
type Config struct {
	// Backend runs the turns. Default: backend.EchoBackend.
	Backend backend.Backend
	// Namespace is the metadata namespace (metadata.<ns>.cwd, tool traces…).
	// Default "iac_code".
	Namespace string
	// ContextWait is how long a message waits for a busy context. Default 1s.
	ContextWait time.Duration
	// IdleTimeout evicts contexts idle for this long from memory. Default 1h.
	IdleTimeout time.Duration
	// MaxConcurrentTurns bounds turns running at once. Default 64.
	MaxConcurrentTurns int
	// HistoryLimit is how many history messages a task returns when the
	// caller does not say (historyLength omitted). Default 100.
	HistoryLimit int
	// CancelDrain bounds how long CancelTask waits for a turn to stop. Default 30s.
	CancelDrain time.Duration
	// SubscribeIdleTimeout bounds how long a SubscribeToTask stream on an
	// input-required (or auth-required) task waits for a follow-up turn;
	// then it ends after a final Task snapshot (RPC-11). Default 10m.
	SubscribeIdleTimeout time.Duration
	// OutputModes are the media types the agent produces. Default text/plain.
	OutputModes []string
	// Extensions are the extension URIs the agent supports (echoed when a
	// client activates them); RequiredExtensions must be activated by clients.
	Extensions, RequiredExtensions []string
	// ToolTrace exposes tool progress in status metadata. RawThinking exposes
	// thinking chunks.
	ToolTrace, RawThinking bool
	// CancelOnDisconnect cancels a streaming turn when its client goes away.
	CancelOnDisconnect bool
	// SensitiveMetadataKeys are keys under metadata.<ns> removed from a
	// message before it is stored or echoed (AUTH-5). Default: api_key,
	// apiKey, token, password, secret, authorization.
	SensitiveMetadataKeys []string
	// Workspace validates metadata.<ns>.cwd. Default: DefaultWorkspace().
	Workspace *Workspace
	// ExtendedCard returns the authenticated extended card as served at
	// baseURL (the call's Call.BaseURL); nil when auth is off, in which case
	// GetExtendedAgentCard is unsupported.
	ExtendedCard func(ctx context.Context, baseURL string) (*a2a.AgentCard, error)
	// PageTokenKey signs ListTasks page tokens. Default: a random key (tokens
	// then do not survive a restart).
	PageTokenKey []byte
	// Input bounds and types the parts of client messages (INPUT-2).
	Input InputLimits
	// InputDir is where raw/data attachments are written for the backend
	// (<data_dir>/inputs). Empty: attachments have no path.
	InputDir string
	// ArtifactDir stores artifact payloads, content-addressed
	// (<data_dir>/artifacts). Empty: payload artifacts fail the turn.
	ArtifactDir string
	// ArtifactURLs is "http" (default: /artifacts/{taskId}/{artifactId} on
	// the gateway, served to the task's owner) or "file" (file:// URLs of
	// the stored payloads, for same-host clients).
	ArtifactURLs string
	// MaxArtifactBytes bounds one stored artifact payload. Default 10 MiB.
	MaxArtifactBytes int64
	// InlineArtifactBytes is the largest raw artifact part passed inline
	// (TURN-7); a larger one is stored like a payload and becomes a url
	// part. Default 64 KiB.
	InlineArtifactBytes int64
	// OwnerScope, when set, makes every owner "<scope>/<principal>": tasks,
	// contexts and push configs of endpoints with different scopes never
	// mix, even for equal principal names. Logs show the bare principal.
	OwnerScope string
	// Logger receives one line per turn. Default: no logging.
	Logger *zap.Logger
	// Metrics receives the endpoint's Prometheus metrics (OPS-2); nil
	// records nothing.
	Metrics *Metrics
	// AgentName is the agent label of the endpoint's metrics (OPS-2): the
	// name of its `agent NAME` block (the tenant it serves, TURN-10).
	// Default DefaultAgentName ("default", a site root). It must come from
	// the configuration, never from a request, so the label stays bounded.
	AgentName string
	// BackendName names the backend in the turn log line and the turn
	// metrics (the Caddy module name: echo, exec, http, openai). Default:
	// "echo" for the default backend, else "custom".
	BackendName string
	// Push turns push notifications on (PUSH-1..7): the four config
	// methods, the inline config of SendMessage, and a delivery job on
	// every turn-ending state. nil (the default) answers every push
	// operation with PushNotificationNotSupportedError. The hub's store
	// must implement store.PushStore.
	Push Pusher
	// EventLogSize is how many of a task's latest events its event log
	// keeps for resumed streams (RPC-17, event_log_size). Default
	// store.DefaultEventLogSize (1000).
	EventLogSize int
	// DedupeWindow is how long a sent messageId is remembered: a resend
	// by the same principal to the same task or context within it starts
	// no second turn (RPC-18, dedupe_window), for sends that activate
	// IdempotentSendExtension (or every send with DedupeAlways). Default
	// 10m; negative turns deduplication off (and the extension is not
	// offered).
	DedupeWindow time.Duration
	// DedupeAlways deduplicates every send by its messageId, as if each
	// activated IdempotentSendExtension (RPC-18, `dedupe always`). Default
	// false: only sends that activate the extension are deduplicated, and
	// a plain A2A 1.0 send always starts a new turn.
	DedupeAlways bool
	// MaxPushConfigsPerTask caps the push configs of one task (PUSH-1):
	// creating one more (by the config methods or inline on SendMessage) is
	// InvalidParamsError; replacing an existing id is allowed. Default 10.
	MaxPushConfigsPerTask int
	// Limits are the per-principal authorization and rate limits (AUTH-6),
	// keyed by principal name, by a `scope:NAME` or `claim:NAME=VALUE`
	// selector of the caller's credential (AUTH-8, see ScopeSelector), or
	// AnyPrincipal ("*"). The rule of a caller is the one named by its
	// principal; else the selectors its credential matches, merged into
	// the most permissive rule; else "*". None: everything is allowed.
	// Rules are checked on every method of every binding.
	Limits map[string]LimitRule
	// SkillScopes are the scopes each skill requires, by skill id (a
	// card skill's requires_scopes, AUTH-8): a message whose skill hint
	// (metadata.<Namespace>.skill, see SkillMetadataKey) names such a skill
	// is refused with PERMISSION_DENIED unless the caller's credential
	// grants every scope, and the extended card lists only the skills the
	// caller may use.
	SkillScopes map[string][]string
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.Backend == nil {
		c.Backend = backend.EchoBackend{}
		if c.BackendName == "" {
			c.BackendName = "echo"
		}
	}
	if c.BackendName == "" {
		c.BackendName = "custom"
	}
	if c.AgentName == "" {
		c.AgentName = DefaultAgentName
	}
	if c.Namespace == "" {
		c.Namespace = "iac_code"
	}
	if c.ContextWait == 0 {
		c.ContextWait = time.Second
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = time.Hour
	}
	if c.MaxConcurrentTurns <= 0 {
		c.MaxConcurrentTurns = 64
	}
	if c.EventLogSize <= 0 {
		c.EventLogSize = store.DefaultEventLogSize
	}
	if c.DedupeWindow == 0 {
		c.DedupeWindow = DefaultDedupeWindow
	}
	if c.MaxPushConfigsPerTask <= 0 {
		c.MaxPushConfigsPerTask = 10
	}
	if c.HistoryLimit <= 0 {
		c.HistoryLimit = 100
	}
	if c.CancelDrain <= 0 {
		c.CancelDrain = 30 * time.Second
	}
	if c.SubscribeIdleTimeout <= 0 {
		c.SubscribeIdleTimeout = 10 * time.Minute
	}
	if len(c.OutputModes) == 0 {
		c.OutputModes = []string{"text/plain"}
	}
	if c.SensitiveMetadataKeys == nil {
		c.SensitiveMetadataKeys = []string{"api_key", "apiKey", "token", "password", "secret", "authorization"}
	}
	if c.Workspace == nil {
		c.Workspace = DefaultWorkspace()
	}
	if len(c.PageTokenKey) == 0 {
		c.PageTokenKey = randomKey()
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	c.Input = c.Input.withDefaults()
	c = c.withBuiltinExtensions()
	if c.ArtifactURLs == "" {
		c.ArtifactURLs = "http"
	}
	if c.MaxArtifactBytes <= 0 {
		c.MaxArtifactBytes = 10 << 20
	}
	if c.InlineArtifactBytes <= 0 {
		c.InlineArtifactBytes = DefaultInlineArtifactBytes
	}
	return c
}

// DefaultDedupeWindow is the default of Config.DedupeWindow (RPC-18).
const DefaultDedupeWindow = 10 * time.Minute

// DefaultInlineArtifactBytes is the default of Config.InlineArtifactBytes.
const DefaultInlineArtifactBytes = 64 << 10

// InterruptedMessage is the status message of a task that was running when
// the gateway stopped (RPC-12).
const InterruptedMessage = "The gateway stopped while this task was running; the task did not finish. Please retry."

var (
	errCanceledByClient = errors.New("task canceled by client")
	errShutdown         = errors.New("gateway shutting down")
)

// Service implements the A2A operations over a Hub, transport-neutral: each
// operation takes a Call (the caller's principal, tenant, base URL,
// version and extensions) and a plain request value, and applies the owner
// scope of the principal itself (Config.OwnerScope). Bindings decode,
// call, and encode; they hold no task state.
type Service struct {
	hub *Hub
	// st is the service's one handle on the hub's store.
	st     storeHandle
	cfg    Config
	tokens pageTokens
	slots  chan struct{}
	limits *limits
	// finalMD is the metadata of every turn's last WORKING update, built
	// once ({ns: {"assistantFinal": {"complete": true}}}): read only,
	// shared by all those events.
	finalMD map[string]any
}

// NewService returns a service with cfg (defaults applied) over hub.
func NewService(hub *Hub, cfg Config) *Service {
	cfg = cfg.WithDefaults()
	hub.setIdleTimeout(cfg.IdleTimeout)
	cfg.Metrics.watch(hub, cfg.AgentName)
	return &Service{hub: hub, st: storeHandle{hub: hub, m: cfg.Metrics}, cfg: cfg, tokens: pageTokens{key: cfg.PageTokenKey}, slots: make(chan struct{}, cfg.MaxConcurrentTurns), limits: newLimits(cfg.Limits),
		finalMD: map[string]any{cfg.Namespace: map[string]any{"assistantFinal": map[string]any{"complete": true}}}}
}

func randomKey() []byte {
	k := make([]byte, 32)
	if _, err := readRandom(k); err != nil {
		// crypto/rand never fails on supported platforms; fall back to
		// something unpredictable enough rather than a fixed key.
		copy(k, fmt.Sprintf("%d-%d", time.Now().UnixNano(), os.Getpid()))
	}
	return k
}

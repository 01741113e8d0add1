package caddymodule

import (
	"encoding/json"
	"os"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/backends"
)

func init() {
	caddy.RegisterModule(OpenAIBackend{})
}

// OpenAIBackend runs turns against an OpenAI-compatible chat-completions
// server (TURN-5): POST <base_url>/chat/completions with stream: true and
// stream_options.include_usage. The gateway keeps each context's
// conversation, persisted with the context and trimmed to max_messages and
// max_chars. delta.content becomes assistant text, delta.reasoning_content
// thinking (shown with thinking_exposure raw_thinking), the final usage
// chunk token usage. A per-request key in metadata.<ns>.api_key overrides
// api_key for that turn and is never stored.
type OpenAIBackend struct {
	// BaseURL is the API base, e.g. http://127.0.0.1:11434/v1 or
	// https://api.openai.com/v1. Supports {env.*}. Required.
	BaseURL string `json:"base_url,omitempty"`

	// Model is the model name. Required.
	Model string `json:"model,omitempty"`

	// APIKey is sent as a bearer token. Use {env.VAR} or {file.path}
	// placeholders (resolved at provision time; {$VAR} would put the key in
	// the JSON config). Default: $OPENAI_API_KEY. Never logged.
	APIKey string `json:"api_key,omitempty"`

	// System is an optional system prompt.
	System string `json:"system,omitempty"`

	// MaxMessages bounds the kept conversation (user and assistant
	// messages). Default: 40.
	MaxMessages int `json:"max_messages,omitempty"`

	// MaxChars bounds the characters of the kept conversation.
	// Default: 100000.
	MaxChars int `json:"max_chars,omitempty"`

	// Vision sends image attachments to the model as image_url content
	// (data URLs) instead of manifest lines.
	Vision bool `json:"vision,omitempty"`

	// Temperature is sent when set.
	Temperature *float64 `json:"temperature,omitempty"`

	// MaxTokens is sent as max_tokens when positive.
	MaxTokens int `json:"max_tokens,omitempty"`

	// TransportRaw configures the connection with Caddy's reverse-proxy
	// transport module (TLS, timeouts…). Default: {"protocol":"http"}.
	TransportRaw json.RawMessage `json:"transport,omitempty" caddy:"namespace=http.reverse_proxy.transport inline_key=protocol"`

	// Timeout bounds one turn. Default: 10m.
	Timeout caddy.Duration `json:"timeout,omitempty"`

	UpstreamOAuth2

	builtBackend
}

// CaddyModule returns the Caddy module information.
func (OpenAIBackend) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "a2a.backends.openai",
		New: func() caddy.Module { return new(OpenAIBackend) },
	}
}

// Provision resolves the key and loads the transport.
func (b *OpenAIBackend) Provision(ctx caddy.Context) error {
	repl := caddy.NewReplacer()
	client, err := upstreamClient(ctx, b, &b.TransportRaw, "openai")
	if err != nil {
		return err
	}
	key := repl.ReplaceAll(b.APIKey, "")
	if key == "" {
		key = os.Getenv("OPENAI_API_KEY")
	}
	timeout := time.Duration(b.Timeout)
	if timeout == 0 {
		timeout = 10 * time.Minute
	}
	b.impl = &backends.OpenAI{
		BaseURL: repl.ReplaceAll(b.BaseURL, ""), Model: b.Model, APIKey: key, System: b.System,
		MaxMessages: b.MaxMessages, MaxChars: b.MaxChars, Vision: b.Vision,
		Temperature: b.Temperature, MaxTokens: b.MaxTokens,
		Client: client, Timeout: timeout,
	}
	return nil
}

// UnmarshalCaddyfile parses:
//
//	backend openai <base_url> {
//		model <name>
//		api_key <key>
//		system <prompt>
//		max_messages <n>
//		max_chars <n>
//		vision
//		temperature <float>
//		max_tokens <n>
//		transport http { … }
//		timeout <duration>
//		oauth2 { token_url … client_id … client_secret … scopes … audience … }
//	}
func (b *OpenAIBackend) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	u := upstreamBlock{name: "openai", urlWhat: "base URL", url: &b.BaseURL, transport: &b.TransportRaw, timeout: &b.Timeout}
	err := u.unmarshal(d, func(opt string) error {
		switch opt {
		case "oauth2":
			return unmarshalUpstreamOAuth2(d, &b.OAuth2)
		case "model":
			if err := stringArg(d, &b.Model); err != nil {
				return err
			}
		case "api_key":
			if err := stringArg(d, &b.APIKey); err != nil {
				return err
			}
		case "system":
			if err := stringArg(d, &b.System); err != nil {
				return err
			}
		case "max_messages", "max_chars", "max_tokens":
			n, err := intArg(d)
			if err != nil {
				return err
			}
			if n < 1 {
				return d.Errf("backend openai: %s must be at least 1", opt)
			}
			switch opt {
			case "max_messages":
				b.MaxMessages = n
			case "max_chars":
				b.MaxChars = n
			default:
				b.MaxTokens = n
			}
		case "vision":
			if d.NextArg() {
				return d.ArgErr()
			}
			b.Vision = true
		case "temperature":
			var v string
			if !d.Args(&v) || d.NextArg() {
				return d.ArgErr()
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || f > 2 {
				return d.Errf("backend openai: temperature must be a number between 0 and 2")
			}
			b.Temperature = &f
		default:
			return d.Errf("backend openai: unknown option %q", opt)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if b.Model == "" {
		return d.Errf("backend openai: model is required")
	}
	return nil
}

var (
	_ caddy.Provisioner     = (*OpenAIBackend)(nil)
	_ caddy.Validator       = (*OpenAIBackend)(nil)
	_ backend.Backend       = (*OpenAIBackend)(nil)
	_ caddyfile.Unmarshaler = (*OpenAIBackend)(nil)
)

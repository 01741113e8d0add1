package backends

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/internal/limitio"
)

// Default conversation budget of the openai backend.
const (
	DefaultMaxHistoryMessages = 40
	DefaultMaxHistoryChars    = 100000
)

// OpenAI runs turns against an OpenAI-compatible chat-completions server
// (TURN-5): POST <BaseURL>/chat/completions with stream: true and
// stream_options.include_usage. The gateway keeps the context's
// conversation (in the session and, through Session.State, in the context
// record) trimmed to MaxMessages and MaxChars. delta.content becomes
// assistant text, delta.reasoning_content thinking, the usage chunk token
// usage; [DONE] ends the turn input-required. 401/403 end it as an auth
// failure; 408, 429, 5xx, timeouts and connection errors as transient.
type OpenAI struct {
	// BaseURL is the API base, e.g. http://127.0.0.1:11434/v1. Required.
	BaseURL string
	// Model is the model name sent with every request. Required.
	Model string
	// APIKey is sent as a bearer token; a per-request credential
	// (metadata.<ns>.api_key or apiKey) takes precedence. Never logged.
	// The Caddy module defaults it to $OPENAI_API_KEY.
	APIKey string
	// System is an optional system prompt.
	System string
	// MaxMessages bounds the kept conversation (user and assistant
	// messages). Default 40.
	MaxMessages int
	// MaxChars bounds the characters of the kept conversation. Default 100000.
	MaxChars int
	// Vision sends image attachments as image_url content parts (data URLs)
	// instead of manifest lines.
	Vision bool
	// MaxImageBytes bounds one image sent with Vision. Default 20 MiB.
	MaxImageBytes int64
	// Temperature is sent when set.
	Temperature *float64
	// MaxTokens is sent as max_tokens when positive.
	MaxTokens int
	// Client sends the requests. Default: http.DefaultClient.
	Client *http.Client
	// Timeout bounds one turn; 0 means no limit.
	Timeout time.Duration
	// MaxLineBytes bounds one SSE line. Default 16 MiB.
	MaxLineBytes int
	// MaxOutputBytes bounds one response body. Default 64 MiB.
	MaxOutputBytes int64
}

// Validate checks the configuration.
func (o *OpenAI) Validate() error {
	if err := checkUpstream(o.BaseURL, "openai backend: base URL", "api_key"); err != nil {
		return err
	}
	if o.Model == "" {
		return errors.New("openai backend: model is required")
	}
	if o.MaxMessages < 0 || o.MaxChars < 0 || o.Timeout < 0 || o.MaxImageBytes < 0 {
		return errors.New("openai backend: limits must not be negative")
	}
	return nil
}

// ChatMessage is one message of a kept conversation (the persisted form).
type ChatMessage struct {
	// Role is user or assistant.
	Role string `json:"role"`
	// Content is the message text.
	Content string `json:"content"`
}

// conversation is the session value: the kept messages.
type conversation struct {
	Messages []ChatMessage `json:"messages"`
}

// load decodes the conversation from the session state each turn rather
// than keeping a decoded copy beside it: an idle context then holds the
// conversation once (RPC-6's memory budget), and a model call dwarfs the
// decode.
func (o *OpenAI) load(s *backend.Session) *conversation {
	c := &conversation{}
	if len(s.State) > 0 {
		if err := json.Unmarshal(s.State, c); err != nil {
			c = &conversation{} // unreadable state: start over
		}
	}
	return c
}

// trim drops the oldest messages until the budget holds; the newest
// message is always kept.
func (o *OpenAI) trim(msgs []ChatMessage) []ChatMessage {
	maxN, maxC := o.MaxMessages, o.MaxChars
	if maxN <= 0 {
		maxN = DefaultMaxHistoryMessages
	}
	if maxC <= 0 {
		maxC = DefaultMaxHistoryChars
	}
	chars := 0
	for _, m := range msgs {
		chars += utf8.RuneCountInString(m.Content)
	}
	for len(msgs) > 1 && (len(msgs) > maxN || chars > maxC) {
		chars -= utf8.RuneCountInString(msgs[0].Content)
		msgs = msgs[1:]
	}
	// Start with a user message.
	for len(msgs) > 1 && msgs[0].Role != "user" {
		msgs = msgs[1:]
	}
	return msgs
}

// chatChunk is one chunk of a chat-completions stream.
type chatChunk struct {
	Choices []struct {
		Delta struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			Reasoning        *string `json:"reasoning"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
		TotalTokens      int64 `json:"total_tokens"`
	} `json:"usage"`
	Error *struct {
		Code any `json:"code"`
	} `json:"error"`
}

// userContent builds the user message content: text with the attachment
// manifest, or with Vision a list of text and image_url parts.
func (o *OpenAI) userContent(req *backend.TurnRequest) (any, string) {
	if !o.Vision {
		return req.Prompt, req.Prompt
	}
	var images []any
	var rest []backend.Attachment
	for _, a := range req.Attachments {
		if !strings.HasPrefix(a.MediaType, "image/") {
			rest = append(rest, a)
			continue
		}
		b := a.Data
		if b == nil && a.Path != "" {
			max := o.MaxImageBytes
			if max <= 0 {
				max = 20 << 20
			}
			if a.ByteSize > max {
				rest = append(rest, a)
				continue
			}
			f, err := os.Open(a.Path)
			if err != nil {
				rest = append(rest, a)
				continue
			}
			b, err = limitio.ReadAll(f, max)
			f.Close()
			if err != nil { // unreadable or too large: left as a file part
				rest = append(rest, a)
				continue
			}
		}
		if b == nil {
			rest = append(rest, a)
			continue
		}
		images = append(images, map[string]any{"type": "image_url", "image_url": map[string]any{
			"url": "data:" + a.MediaType + ";base64," + base64.StdEncoding.EncodeToString(b)}})
	}
	if len(images) == 0 {
		return req.Prompt, req.Prompt
	}
	text := req.Text
	if len(rest) > 0 {
		var b strings.Builder
		b.WriteString(text)
		b.WriteString("\n\nAttachments:")
		for _, a := range rest {
			fmt.Fprintf(&b, "\n- part %d: %s (%s, %d bytes, sha256 %s, source %s)", a.Part, a.Filename, a.MediaType, a.ByteSize, a.SHA256, a.Source)
		}
		text = b.String()
	}
	parts := append([]any{map[string]any{"type": "text", "text": text}}, images...)
	return parts, text + fmt.Sprintf("\n[%d image(s)]", len(images))
}

// RunTurn implements backend.Backend.
func (o *OpenAI) RunTurn(ctx context.Context, req *backend.TurnRequest, emit backend.Emit) error {
	ctx, cancel := turnContext(ctx, o.Timeout)
	defer cancel()
	conv := o.load(req.Session)
	content, kept := o.userContent(req)
	b, err := o.requestBody(conv, content)
	if err != nil {
		return err
	}
	resp, err := o.post(ctx, req, b)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := o.readStream(ctx, resp.Body, emit)
	if err != nil {
		return err
	}
	conv.Messages = o.trim(append(conv.Messages, ChatMessage{Role: "user", Content: kept}, ChatMessage{Role: "assistant", Content: answer}))
	if st, err := json.Marshal(conv); err == nil {
		req.Session.State = st
	}
	return emit(backend.Event{V: backend.EventVersion, Type: backend.EventEnd, Outcome: backend.OutcomeInputRequired})
}

// requestBody encodes the streaming chat-completions request: the system
// prompt, the kept conversation and the new user message content.
func (o *OpenAI) requestBody(conv *conversation, content any) ([]byte, error) {
	var msgs []any
	if o.System != "" {
		msgs = append(msgs, map[string]any{"role": "system", "content": o.System})
	}
	for _, m := range conv.Messages {
		msgs = append(msgs, m)
	}
	msgs = append(msgs, map[string]any{"role": "user", "content": content})
	body := map[string]any{
		"model": o.Model, "messages": msgs, "stream": true,
		"stream_options": map[string]any{"include_usage": true},
	}
	if o.Temperature != nil {
		body["temperature"] = *o.Temperature
	}
	if o.MaxTokens > 0 {
		body["max_tokens"] = o.MaxTokens
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("openai backend: encoding the request: %w", err)
	}
	return b, nil
}

// post sends the request body to <BaseURL>/chat/completions and returns
// the response once its status is a success; the caller closes its body.
// Transport errors and failure statuses come back classified (TURN-5).
func (o *OpenAI) post(ctx context.Context, req *backend.TurnRequest, b []byte) (*http.Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(o.BaseURL, "/")+"/chat/completions", bytes.NewReader(b))
	if err != nil {
		return nil, errors.New("openai backend: building the request failed")
	}
	backend.InjectTrace(ctx, hreq.Header) // OPS-4: W3C trace context to the upstream
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	if key := o.key(req); key != "" {
		hreq.Header.Set("Authorization", "Bearer "+key)
	}
	client := o.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(hreq)
	if err != nil {
		return nil, classifyTransportErr(ctx, err)
	}
	if err := statusError(resp.StatusCode); err != nil {
		resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

// readStream emits the thinking, text and usage of each stream chunk and
// returns the assistant's answer once [DONE] arrives; a stream that ends
// without it is a transient failure.
func (o *OpenAI) readStream(ctx context.Context, body io.Reader, emit backend.Emit) (string, error) {
	var answer strings.Builder
	done := false
	err := readSSE(ctx, body, o.MaxLineBytes, o.MaxOutputBytes, func(data []byte) (bool, error) {
		if string(bytes.TrimSpace(data)) == "[DONE]" {
			done = true
			return true, nil
		}
		var c chatChunk
		if err := json.Unmarshal(data, &c); err != nil {
			return false, errors.New("openai backend: malformed stream chunk")
		}
		if c.Error != nil {
			return false, errKind(backend.ErrorKindTransient, fmt.Errorf("upstream stream error (code %v)", c.Error.Code))
		}
		return false, emitChunk(c, &answer, emit)
	})
	if err != nil {
		return "", err
	}
	if !done {
		return "", errKind(backend.ErrorKindTransient, errors.New("upstream stream ended without [DONE]"))
	}
	return answer.String(), nil
}

// emitChunk emits one chunk's reasoning as thinking, its content as text
// (also appended to answer) and its usage, if any.
func emitChunk(c chatChunk, answer *strings.Builder, emit backend.Emit) error {
	for _, ch := range c.Choices {
		think := ch.Delta.ReasoningContent
		if think == nil {
			think = ch.Delta.Reasoning
		}
		if think != nil && *think != "" {
			if err := emit(backend.Event{V: backend.EventVersion, Type: backend.EventThinking, Text: *think}); err != nil {
				return err
			}
		}
		if ch.Delta.Content != nil && *ch.Delta.Content != "" {
			answer.WriteString(*ch.Delta.Content)
			if err := emit(backend.Event{V: backend.EventVersion, Type: backend.EventText, Text: *ch.Delta.Content}); err != nil {
				return err
			}
		}
	}
	if u := c.Usage; u != nil {
		total := u.TotalTokens
		if total == 0 {
			total = u.PromptTokens + u.CompletionTokens
		}
		if err := emit(backend.Event{V: backend.EventVersion, Type: backend.EventUsage, InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: total}); err != nil {
			return err
		}
	}
	return nil
}

// key returns the per-request credential, else the configured key.
func (o *OpenAI) key(req *backend.TurnRequest) string {
	for _, k := range []string{"api_key", "apiKey"} {
		if v, ok := req.Credentials[k].(string); ok && v != "" {
			return v
		}
	}
	return o.APIKey
}

var _ backend.Backend = (*OpenAI)(nil)

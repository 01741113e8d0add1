package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/auth"
	"github.com/caddy-a2a/caddy-a2a/agent/card"
	"github.com/caddy-a2a/caddy-a2a/internal/jsonrpc"
	"github.com/caddy-a2a/caddy-a2a/internal/limitio"
	"github.com/caddy-a2a/caddy-a2a/internal/sse"
)

// Size limits for what the client reads.
const (
	// MaxCardSize bounds an Agent Card document.
	MaxCardSize = 1 << 20
	// MaxResponseSize bounds a non-streaming response body.
	MaxResponseSize = 32 << 20
	// maxErrorBody bounds the part of an error body that is decoded.
	maxErrorBody = 64 << 10
)

// WellKnownCardPath is where the Agent Card is served.
const WellKnownCardPath = card.WellKnownPath

// Auth holds the credentials the client sends. Empty fields are not sent.
type Auth struct {
	// Token is sent as "Authorization: Bearer <token>".
	Token string
	// BasicUser and BasicPassword are sent as HTTP Basic credentials.
	BasicUser     string
	BasicPassword string
	// APIKey is sent in the APIKeyHeader header (default X-API-Key).
	APIKey       string
	APIKeyHeader string
}

// AuthFromEnv fills the unset fields of a from the same IACCODE_A2A_*
// variables the server reads.
func AuthFromEnv(a Auth, getenv func(string) string) Auth {
	if getenv == nil {
		getenv = os.Getenv
	}
	explicit := a.Token != "" || a.BasicUser != "" || a.APIKey != ""
	if !explicit {
		a.Token = getenv(auth.EnvToken)
		a.BasicUser = getenv(auth.EnvBasicUsername)
		a.BasicPassword = getenv(auth.EnvBasicPassword)
		a.APIKey = getenv(auth.EnvAPIKey)
	}
	if a.APIKeyHeader == "" {
		a.APIKeyHeader = getenv(auth.EnvAPIKeyHeader)
	}
	if a.APIKeyHeader == "" {
		a.APIKeyHeader = auth.DefaultAPIKeyHeader
	}
	return a
}

// apply sets the credential headers on h.
func (a Auth) apply(h http.Header) {
	switch {
	case a.Token != "":
		h.Set("Authorization", "Bearer "+a.Token)
	case a.BasicUser != "":
		h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(a.BasicUser+":"+a.BasicPassword)))
	}
	if a.APIKey != "" {
		name := a.APIKeyHeader
		if name == "" {
			name = auth.DefaultAPIKeyHeader
		}
		h.Set(name, a.APIKey)
	}
}

// Binding choices for Options.Binding.
const (
	BindingAuto    = ""
	BindingJSONRPC = "jsonrpc"
	BindingREST    = "rest"
)

// Options configure a Client.
type Options struct {
	// Auth is sent with every request except the card fetch (which is public).
	Auth Auth
	// Headers are extra request headers (sent with every request).
	Headers http.Header
	// Binding forces "jsonrpc" or "rest"; "" picks the card's first
	// interface the client speaks.
	Binding string
	// HTTPClient is used for requests; nil builds one with dial and TLS
	// handshake timeouts and no overall timeout (streams are long).
	HTTPClient *http.Client
	// UserAgent is sent as User-Agent.
	UserAgent string
}

// Client talks to one interface of an agent.
type Client struct {
	// Card is the discovered Agent Card.
	Card *a2a.AgentCard
	// CardRaw is the card as served.
	CardRaw []byte
	// Interface is the selected interface.
	Interface a2a.AgentInterface

	opts Options
	hc   *http.Client
	ids  atomic.Int64
}

func defaultHTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = 10 * time.Second
	// Redirects are not followed: credentials set for the agent must not
	// travel to wherever a response points.
	return &http.Client{Transport: tr, CheckRedirect: noRedirects}
}

// noRedirects makes a client return redirect responses as they are.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// CardURL returns the URL to fetch the card from for a user-supplied
// target: a URL ending in ".json" is the card itself, anything else is a
// base URL under which the well-known path is appended.
func CardURL(target string) (string, error) {
	u, err := card.DiscoveryURL(target)
	if err != nil {
		return "", Usagef("invalid agent URL %q: want http(s)://host[:port][/path]", redactURL(target))
	}
	return u, nil
}

// redactURL drops user info and the query from a URL for messages.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		if len(s) > 80 {
			s = s[:80] + "…"
		}
		return s
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
}

// FetchCard downloads and decodes the Agent Card for target (see CardURL).
func FetchCard(ctx context.Context, target string, opts Options) (*a2a.AgentCard, []byte, error) {
	cardURL, err := CardURL(target)
	if err != nil {
		return nil, nil, err
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = defaultHTTPClient()
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cardURL, nil)
	if err != nil {
		return nil, nil, Usagef("invalid agent URL %q", redactURL(target))
	}
	for k, v := range opts.Headers {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/a2a+json, application/json")
	req.Header.Set("A2A-Version", a2a.ProtocolVersion)
	if opts.UserAgent != "" {
		req.Header.Set("User-Agent", opts.UserAgent)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, transportErr("fetching the agent card from "+redactURL(cardURL), cleanNetErr(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		if e := authError(resp); e != nil {
			return nil, nil, e
		}
		return nil, nil, protocolf("fetching the agent card from %s: HTTP %d", redactURL(cardURL), resp.StatusCode)
	}
	raw, err := readLimited(resp.Body, MaxCardSize)
	if err != nil {
		return nil, nil, transportErr("reading the agent card", err)
	}
	var card a2a.AgentCard
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil, protocolf("bad agent card at %s: empty response", redactURL(cardURL))
	}
	if err := json.Unmarshal(raw, &card); err != nil {
		return nil, nil, protocolf("bad agent card at %s: %v", redactURL(cardURL), err)
	}
	if card.Name == "" || len(card.SupportedInterfaces) == 0 {
		return nil, nil, protocolf("bad agent card at %s: no name or no supportedInterfaces (is this an A2A 1.0 agent?)", redactURL(cardURL))
	}
	return &card, raw, nil
}

// SelectInterface picks the first interface of the card whose binding the
// client speaks (JSONRPC or HTTP+JSON, protocol version 1.x), or the first
// of the forced binding.
func SelectInterface(card *a2a.AgentCard, binding string) (a2a.AgentInterface, error) {
	want := map[string]bool{a2a.BindingJSONRPC: true, a2a.BindingHTTPJSON: true}
	switch strings.ToLower(binding) {
	case BindingAuto:
	case BindingJSONRPC:
		want = map[string]bool{a2a.BindingJSONRPC: true}
	case BindingREST, "http+json":
		want = map[string]bool{a2a.BindingHTTPJSON: true}
	default:
		return a2a.AgentInterface{}, Usagef("unknown binding %q: want jsonrpc or rest", binding)
	}
	var seen []string
	for _, in := range card.SupportedInterfaces {
		seen = append(seen, in.ProtocolBinding+"@"+in.ProtocolVersion)
		if !want[strings.ToUpper(in.ProtocolBinding)] {
			continue
		}
		if v := in.ProtocolVersion; v != "" && v != "1" && !strings.HasPrefix(v, "1.") {
			continue
		}
		u, err := url.Parse(in.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			continue
		}
		return in, nil
	}
	return a2a.AgentInterface{}, protocolf("the agent card offers no interface this client speaks (JSONRPC or HTTP+JSON, version 1.x); it offers %s", strings.Join(seen, ", "))
}

// New returns a client for card over its selected interface.
func New(card *a2a.AgentCard, raw []byte, opts Options) (*Client, error) {
	in, err := SelectInterface(card, opts.Binding)
	if err != nil {
		return nil, err
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = defaultHTTPClient()
	}
	return &Client{Card: card, CardRaw: raw, Interface: in, opts: opts, hc: hc}, nil
}

// Dial fetches the card at target and returns a client for it.
func Dial(ctx context.Context, target string, opts Options) (*Client, error) {
	card, raw, err := FetchCard(ctx, target, opts)
	if err != nil {
		return nil, err
	}
	return New(card, raw, opts)
}

// REST reports whether the client uses the HTTP+JSON binding.
func (c *Client) REST() bool {
	return strings.EqualFold(c.Interface.ProtocolBinding, a2a.BindingHTTPJSON)
}

// Streaming reports whether the card declares streaming support.
func (c *Client) Streaming() bool {
	return c.Card.Capabilities.Streaming != nil && *c.Card.Capabilities.Streaming
}

func (c *Client) newRequest(ctx context.Context, method, u string, body any, accept string) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, Usagef("encoding the request: %v", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, protocolf("bad interface URL %q", redactURL(u))
	}
	for k, v := range c.opts.Headers {
		req.Header[k] = v
	}
	c.opts.Auth.apply(req.Header)
	req.Header.Set("A2A-Version", a2a.ProtocolVersion)
	req.Header.Set("Accept", accept)
	if body != nil {
		if c.REST() {
			req.Header.Set("Content-Type", "application/a2a+json")
		} else {
			req.Header.Set("Content-Type", "application/json")
		}
	}
	if c.opts.UserAgent != "" {
		req.Header.Set("User-Agent", c.opts.UserAgent)
	}
	return req, nil
}

func (c *Client) do(req *http.Request) (*http.Response, error) {
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctxErr := req.Context().Err(); ctxErr != nil {
			if errors.Is(ctxErr, context.DeadlineExceeded) {
				return nil, transportErr("request to "+redactURL(req.URL.String())+" timed out", nil)
			}
			return nil, &Error{Kind: KindInterrupted, Msg: "interrupted"}
		}
		return nil, transportErr("request to "+redactURL(req.URL.String()), cleanNetErr(err))
	}
	if e := authError(resp); e != nil {
		resp.Body.Close()
		return nil, e
	}
	return resp, nil
}

// cleanNetErr drops the repeated method and URL from *url.Error.
func cleanNetErr(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}

// authError turns 401/403 into an auth error naming the challenge scheme.
func authError(resp *http.Response) error {
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		return nil
	}
	msg := fmt.Sprintf("authentication failed (HTTP %d)", resp.StatusCode)
	if resp.StatusCode == http.StatusForbidden {
		msg = "access denied (HTTP 403)"
	}
	var schemes []string
	for _, ch := range resp.Header.Values("WWW-Authenticate") {
		if f := strings.Fields(ch); len(f) > 0 {
			schemes = append(schemes, f[0])
		}
	}
	if len(schemes) > 0 {
		msg += ": the server asks for " + strings.Join(schemes, " or ")
	}
	msg += "; pass --token, --basic or --api-key (or the IACCODE_A2A_* variables)"
	return &Error{Kind: KindAuth, Msg: msg}
}

// readLimited reads r to its end, at most limit bytes.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	b, err := limitio.ReadAll(r, limit)
	if limitio.IsTooLarge(err) {
		return nil, fmt.Errorf("response larger than %d bytes", limit)
	}
	return b, err
}

// ---- JSON-RPC ----

// wireToA2A converts a JSON-RPC error member (or a REST error body in its
// shape), keeping ErrorInfo metadata.
func wireToA2A(w *jsonrpc.Error) *a2a.Error {
	e := &a2a.Error{Code: w.Code, Message: w.Message}
	var details []struct {
		Type     string            `json:"@type"`
		Reason   string            `json:"reason"`
		Metadata map[string]string `json:"metadata"`
	}
	if json.Unmarshal(w.Data, &details) == nil {
		for _, d := range details {
			if len(d.Metadata) > 0 {
				e.Metadata = d.Metadata
			}
		}
	}
	if e.Message == "" {
		e.Message = "(no message)"
	}
	return e
}

func (c *Client) rpc(ctx context.Context, method string, params, out any) error {
	req, err := c.newRequest(ctx, http.MethodPost, c.Interface.URL, jsonrpc.NewRequest(c.ids.Add(1), method, params), "application/json")
	if err != nil {
		return err
	}
	resp, err := c.do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return decodeRPC(method, resp, out)
}

func decodeRPC(method string, resp *http.Response, out any) error {
	body, err := readLimited(resp.Body, MaxResponseSize)
	if err != nil {
		return transportErr(method+": reading the response", err)
	}
	var r jsonrpc.Response
	if err := json.Unmarshal(body, &r); err != nil || (r.Result == nil && r.Error == nil) {
		if resp.StatusCode/100 != 2 {
			return protocolf("%s failed: HTTP %d %s", method, resp.StatusCode, http.StatusText(resp.StatusCode))
		}
		return protocolf("%s: the server did not answer with a JSON-RPC response", method)
	}
	if r.Error != nil {
		return rpcErr(method, wireToA2A(r.Error))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(r.Result, out); err != nil {
		return protocolf("%s: bad result: %v", method, err)
	}
	return nil
}

// ---- HTTP+JSON ----

// restURL joins the interface URL, the tenant and path.
func (c *Client) restURL(path string, q url.Values) string {
	base := strings.TrimRight(c.Interface.URL, "/")
	if c.Interface.Tenant != "" {
		base += "/" + url.PathEscape(c.Interface.Tenant)
	}
	u := base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

type restStatus struct {
	Error *struct {
		Code    int             `json:"code"`
		Status  string          `json:"status"`
		Message string          `json:"message"`
		Details json.RawMessage `json:"details"`
	} `json:"error"`
}

// restErr decodes a google.rpc.Status error body.
func restErr(method string, status int, body []byte) error {
	var st restStatus
	if json.Unmarshal(body, &st) == nil && st.Error != nil {
		e := wireToA2A(&jsonrpc.Error{Message: st.Error.Message, Data: st.Error.Details})
		e.Code = codeFromDetails(st.Error.Details, status)
		return rpcErr(method, e)
	}
	return protocolf("%s failed: HTTP %d %s", method, status, http.StatusText(status))
}

// codeFromDetails maps ErrorInfo.reason back to a JSON-RPC code.
func codeFromDetails(details json.RawMessage, status int) int {
	var ds []struct {
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(details, &ds)
	for _, d := range ds {
		for code := -32768; code <= -32000; code++ {
			if e := (&a2a.Error{Code: code}); e.Reason() == d.Reason && d.Reason != "" {
				if d.Reason == "INTERNAL_ERROR" {
					return a2a.CodeInternalError
				}
				return code
			}
		}
	}
	switch status {
	case http.StatusNotFound:
		return a2a.CodeTaskNotFound
	case http.StatusBadRequest:
		return a2a.CodeInvalidParams
	}
	return a2a.CodeInternalError
}

func (c *Client) rest(ctx context.Context, method, verb, path string, q url.Values, body, out any) error {
	req, err := c.newRequest(ctx, verb, c.restURL(path, q), body, "application/a2a+json, application/json")
	if err != nil {
		return err
	}
	resp, err := c.do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := readLimited(resp.Body, MaxResponseSize)
	if err != nil {
		return transportErr(method+": reading the response", err)
	}
	if resp.StatusCode/100 != 2 {
		return restErr(method, resp.StatusCode, b)
	}
	if out == nil || len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return protocolf("%s: bad response: %v", method, err)
	}
	return nil
}

// ---- operations ----

// SendMessage sends a message and waits for the task (or a direct message).
func (c *Client) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	c.setTenant(&req.Tenant)
	var out a2a.SendMessageResponse
	var err error
	if c.REST() {
		err = c.rest(ctx, a2a.MethodSendMessage, http.MethodPost, "/message:send", nil, req, &out)
	} else {
		err = c.rpc(ctx, a2a.MethodSendMessage, req, &out)
	}
	if err != nil {
		return nil, err
	}
	if out.Task == nil && out.Message == nil {
		return nil, protocolf("SendMessage: the response holds neither a task nor a message")
	}
	return &out, nil
}

func (c *Client) setTenant(t *string) {
	if *t == "" {
		*t = c.Interface.Tenant
	}
}

// GetTask returns a task; historyLength < 0 leaves the server default.
func (c *Client) GetTask(ctx context.Context, id string, historyLength int) (*a2a.Task, error) {
	var out a2a.Task
	if c.REST() {
		q := url.Values{}
		if historyLength >= 0 {
			q.Set("historyLength", strconv.Itoa(historyLength))
		}
		if err := c.rest(ctx, a2a.MethodGetTask, http.MethodGet, "/tasks/"+url.PathEscape(id), q, nil, &out); err != nil {
			return nil, err
		}
		return &out, nil
	}
	req := a2a.GetTaskRequest{ID: id, Tenant: c.Interface.Tenant}
	if historyLength >= 0 {
		h := int32(historyLength)
		req.HistoryLength = &h
	}
	if err := c.rpc(ctx, a2a.MethodGetTask, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListTasks lists tasks.
func (c *Client) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	c.setTenant(&req.Tenant)
	var out a2a.ListTasksResponse
	if c.REST() {
		q := url.Values{}
		if req.ContextID != "" {
			q.Set("contextId", req.ContextID)
		}
		if req.Status != "" {
			q.Set("status", string(req.Status))
		}
		if req.PageSize != nil {
			q.Set("pageSize", strconv.Itoa(int(*req.PageSize)))
		}
		if req.PageToken != "" {
			q.Set("pageToken", req.PageToken)
		}
		if req.HistoryLength != nil {
			q.Set("historyLength", strconv.Itoa(int(*req.HistoryLength)))
		}
		if req.IncludeArtifacts != nil {
			q.Set("includeArtifacts", strconv.FormatBool(*req.IncludeArtifacts))
		}
		if req.StatusTimestampAfter != "" {
			q.Set("statusTimestampAfter", req.StatusTimestampAfter)
		}
		if err := c.rest(ctx, a2a.MethodListTasks, http.MethodGet, "/tasks", q, nil, &out); err != nil {
			return nil, err
		}
		return &out, nil
	}
	if err := c.rpc(ctx, a2a.MethodListTasks, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CancelTask asks the server to cancel a task and returns it.
func (c *Client) CancelTask(ctx context.Context, id string) (*a2a.Task, error) {
	var out a2a.Task
	var err error
	if c.REST() {
		err = c.rest(ctx, a2a.MethodCancelTask, http.MethodPost, "/tasks/"+url.PathEscape(id)+":cancel", nil, struct{}{}, &out)
	} else {
		err = c.rpc(ctx, a2a.MethodCancelTask, a2a.CancelTaskRequest{ID: id, Tenant: c.Interface.Tenant}, &out)
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// CreatePushConfig registers a push config on a task.
func (c *Client) CreatePushConfig(ctx context.Context, cfg *a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	c.setTenant(&cfg.Tenant)
	var out a2a.TaskPushNotificationConfig
	var err error
	if c.REST() {
		body := *cfg
		body.Tenant = ""
		err = c.rest(ctx, a2a.MethodCreatePushConfig, http.MethodPost, "/tasks/"+url.PathEscape(cfg.TaskID)+"/pushNotificationConfigs", nil, body, &out)
	} else {
		err = c.rpc(ctx, a2a.MethodCreatePushConfig, cfg, &out)
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// GetPushConfig returns one push config of a task.
func (c *Client) GetPushConfig(ctx context.Context, taskID, id string) (*a2a.TaskPushNotificationConfig, error) {
	var out a2a.TaskPushNotificationConfig
	var err error
	if c.REST() {
		err = c.rest(ctx, a2a.MethodGetPushConfig, http.MethodGet, "/tasks/"+url.PathEscape(taskID)+"/pushNotificationConfigs/"+url.PathEscape(id), nil, nil, &out)
	} else {
		err = c.rpc(ctx, a2a.MethodGetPushConfig, a2a.GetTaskPushNotificationConfigRequest{TaskID: taskID, ID: id, Tenant: c.Interface.Tenant}, &out)
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// ListPushConfigs lists the push configs of a task.
func (c *Client) ListPushConfigs(ctx context.Context, taskID string, pageSize int, pageToken string) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	var out a2a.ListTaskPushNotificationConfigsResponse
	var err error
	if c.REST() {
		q := url.Values{}
		if pageSize > 0 {
			q.Set("pageSize", strconv.Itoa(pageSize))
		}
		if pageToken != "" {
			q.Set("pageToken", pageToken)
		}
		err = c.rest(ctx, a2a.MethodListPushConfigs, http.MethodGet, "/tasks/"+url.PathEscape(taskID)+"/pushNotificationConfigs", q, nil, &out)
	} else {
		err = c.rpc(ctx, a2a.MethodListPushConfigs, a2a.ListTaskPushNotificationConfigsRequest{TaskID: taskID, PageSize: int32(pageSize), PageToken: pageToken, Tenant: c.Interface.Tenant}, &out)
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// DeletePushConfig deletes one push config of a task.
func (c *Client) DeletePushConfig(ctx context.Context, taskID, id string) error {
	if c.REST() {
		return c.rest(ctx, a2a.MethodDeletePushConfig, http.MethodDelete, "/tasks/"+url.PathEscape(taskID)+"/pushNotificationConfigs/"+url.PathEscape(id), nil, nil, nil)
	}
	return c.rpc(ctx, a2a.MethodDeletePushConfig, a2a.DeleteTaskPushNotificationConfigRequest{TaskID: taskID, ID: id, Tenant: c.Interface.Tenant}, nil)
}

// ---- streaming ----

// SendStreamingMessage sends a message and calls fn for each event until the
// stream ends (nil), fn returns an error, or ctx ends.
func (c *Client) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest, fn func(a2a.StreamResponse) error) error {
	c.setTenant(&req.Tenant)
	if c.REST() {
		return c.streamREST(ctx, a2a.MethodSendStreamingMessage, "/message:stream", req, fn)
	}
	return c.streamRPC(ctx, a2a.MethodSendStreamingMessage, req, fn)
}

// SubscribeToTask streams the events of an existing task.
func (c *Client) SubscribeToTask(ctx context.Context, id string, fn func(a2a.StreamResponse) error) error {
	if c.REST() {
		return c.streamREST(ctx, a2a.MethodSubscribeToTask, "/tasks/"+url.PathEscape(id)+":subscribe", struct{}{}, fn)
	}
	return c.streamRPC(ctx, a2a.MethodSubscribeToTask, a2a.SubscribeToTaskRequest{ID: id, Tenant: c.Interface.Tenant}, fn)
}

func isEventStream(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt == sse.ContentType
}

func (c *Client) streamRPC(ctx context.Context, method string, params any, fn func(a2a.StreamResponse) error) error {
	req, err := c.newRequest(ctx, http.MethodPost, c.Interface.URL, jsonrpc.NewRequest(c.ids.Add(1), method, params), sse.ContentType+", application/json")
	if err != nil {
		return err
	}
	resp, err := c.do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if !isEventStream(resp) {
		if err := decodeRPC(method, resp, nil); err != nil {
			return err
		}
		return protocolf("%s: the server answered without an event stream", method)
	}
	return readStream(ctx, method, resp.Body, func(data []byte) error {
		var r jsonrpc.Response
		if err := json.Unmarshal(data, &r); err != nil {
			return protocolf("%s: bad stream event: %v", method, err)
		}
		if r.Error != nil {
			return rpcErr(method, wireToA2A(r.Error))
		}
		return decodeEvent(method, r.Result, fn)
	})
}

func (c *Client) streamREST(ctx context.Context, method, path string, body any, fn func(a2a.StreamResponse) error) error {
	req, err := c.newRequest(ctx, http.MethodPost, c.restURL(path, nil), body, sse.ContentType+", application/json")
	if err != nil {
		return err
	}
	resp, err := c.do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if !isEventStream(resp) {
		b, _ := readLimited(resp.Body, maxErrorBody)
		if resp.StatusCode/100 != 2 {
			return restErr(method, resp.StatusCode, b)
		}
		return protocolf("%s: the server answered without an event stream", method)
	}
	return readStream(ctx, method, resp.Body, func(data []byte) error {
		var st restStatus
		if json.Unmarshal(data, &st) == nil && st.Error != nil {
			return restErr(method, st.Error.Code, data)
		}
		return decodeEvent(method, data, fn)
	})
}

func decodeEvent(method string, data []byte, fn func(a2a.StreamResponse) error) error {
	var ev a2a.StreamResponse
	if err := json.Unmarshal(data, &ev); err != nil {
		return protocolf("%s: bad stream event: %v", method, err)
	}
	if ev.Task == nil && ev.Message == nil && ev.StatusUpdate == nil && ev.ArtifactUpdate == nil {
		return protocolf("%s: stream event holds no task, message, statusUpdate or artifactUpdate", method)
	}
	return fn(ev)
}

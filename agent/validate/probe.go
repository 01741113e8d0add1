package validate

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/internal/cardfetch"
	"github.com/caddy-a2a/caddy-a2a/internal/jsonrpc"
	"github.com/caddy-a2a/caddy-a2a/internal/limitio"
	"github.com/caddy-a2a/caddy-a2a/internal/sse"
)

// Fetch limits.
const (
	// DefaultTimeout bounds one HTTP exchange of Fetch and Probe.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxBytes bounds a fetched card or probe response.
	DefaultMaxBytes = 1 << 20
)

// FetchOptions bound fetching.
type FetchOptions struct {
	// Client is the HTTP client. Default: http.Client with Timeout.
	Client *http.Client
	// Timeout bounds one exchange. Default: DefaultTimeout.
	Timeout time.Duration
	// MaxBytes bounds a body. Default: DefaultMaxBytes.
	MaxBytes int64
	// Header is added to every request (e.g. Authorization for the
	// extended card probe).
	Header http.Header
}

func (o FetchOptions) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

func (o FetchOptions) client() *http.Client {
	if o.Client != nil {
		return o.Client
	}
	// No redirects: probe credentials stay with the URLs they were given for.
	return &http.Client{Timeout: o.timeout(), CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (o FetchOptions) max() int64 {
	if o.MaxBytes > 0 {
		return o.MaxBytes
	}
	return DefaultMaxBytes
}

// Fetch downloads a card (GET, Accept application/a2a+json, A2A-Version
// 1.0) with a timeout and a size limit (cardfetch.Fetch).
func Fetch(ctx context.Context, u string, opts FetchOptions) ([]byte, error) {
	if !isAbsURL(u) {
		return nil, errors.New("card URL must be an absolute http(s) URL")
	}
	ctx, cancel := context.WithTimeout(ctx, opts.timeout())
	defer cancel()
	b, err := cardfetch.Fetch(ctx, opts.client(), u, opts.Header, opts.max())
	var st *cardfetch.StatusError
	var re *cardfetch.ReadError
	var ue *url.Error
	switch {
	case err == nil:
		return b, nil
	case errors.As(err, &st):
		return nil, fmt.Errorf("fetching %s: status %d", cardfetch.RedactURL(u), st.Code)
	case errors.Is(err, cardfetch.ErrTooLarge):
		return nil, fmt.Errorf("card at %s is larger than %d bytes", cardfetch.RedactURL(u), opts.max())
	case errors.As(err, &re):
		return nil, fmt.Errorf("reading %s: %v", cardfetch.RedactURL(u), re.Err)
	case errors.As(err, &ue):
		err = ue.Err
	}
	return nil, fmt.Errorf("fetching %s: %v", cardfetch.RedactURL(u), err)
}

// ProbeOptions tune Probe.
type ProbeOptions struct {
	FetchOptions
	// Credentials says whether Header carries credentials; only then is
	// the extended card probed.
	Credentials bool
}

type prober struct {
	opts ProbeOptions
	out  []Finding
}

func (p *prober) add(sev Severity, ptr, msg, fix string) {
	p.out = append(p.out, Finding{Severity: sev, Pointer: ptr, Message: msg, Fix: fix})
}

type probeCard struct {
	SupportedInterfaces []struct {
		URL             string `json:"url"`
		ProtocolBinding string `json:"protocolBinding"`
		Tenant          string `json:"tenant"`
	} `json:"supportedInterfaces"`
	Capabilities struct {
		Streaming         bool `json:"streaming"`
		PushNotifications bool `json:"pushNotifications"`
		ExtendedAgentCard bool `json:"extendedAgentCard"`
	} `json:"capabilities"`
}

// Probe checks a live agent against its card: each supportedInterfaces
// entry answers and speaks its binding (requests carry A2A-Version: 1.0),
// declared streaming works (one short "ping" message is sent), declared
// push notifications are not "not supported", and a declared extended
// card answers an authenticated call when credentials are given.
func Probe(ctx context.Context, raw []byte, opts ProbeOptions) []Finding {
	p := &prober{opts: opts}
	var c probeCard
	if err := json.Unmarshal(raw, &c); err != nil {
		p.add(Error, "", "the card cannot be probed: it is not a valid card object", "fix the errors reported above first")
		return p.out
	}
	var rpcURL, restURL, tenant string
	for i, in := range c.SupportedInterfaces {
		ptr := Pointer("supportedInterfaces", i)
		if !isAbsURL(in.URL) {
			if in.ProtocolBinding == "GRPC" {
				p.add(Info, ptr, "gRPC interface not probed", "")
			}
			continue
		}
		switch in.ProtocolBinding {
		case "JSONRPC":
			if p.probeJSONRPC(ctx, ptr, in.URL, in.Tenant) && rpcURL == "" {
				rpcURL, tenant = in.URL, in.Tenant
			}
		case "HTTP+JSON":
			if p.probeREST(ctx, ptr, in.URL) && restURL == "" {
				restURL = in.URL
			}
		default:
			p.add(Info, ptr, fmt.Sprintf("binding %q not probed", in.ProtocolBinding), "")
		}
	}
	if rpcURL == "" && restURL == "" {
		if len(c.SupportedInterfaces) > 0 {
			p.add(Error, "/supportedInterfaces", "no interface could be probed successfully; capabilities were not checked", "make the declared endpoints reachable")
		}
		return p.out
	}
	if c.Capabilities.Streaming {
		p.probeStreaming(ctx, rpcURL, restURL, tenant)
	}
	if c.Capabilities.PushNotifications && rpcURL != "" {
		p.probePush(ctx, rpcURL, tenant)
	}
	if c.Capabilities.ExtendedAgentCard {
		if !p.opts.Credentials {
			p.add(Info, "/capabilities/extendedAgentCard", "extended card not probed (no credentials given)", "pass --header 'Authorization: Bearer …' to probe it")
		} else if rpcURL != "" {
			p.probeExtended(ctx, rpcURL, tenant)
		}
	}
	return p.out
}

// do sends one request and returns status, content type and a bounded
// body: for an event stream the data of its first event, for anything
// else the body (nil when it is over the limit).
func (p *prober) do(ctx context.Context, method, u string, body []byte, accept string) (int, string, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, p.opts.timeout())
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, "", nil, errors.New("invalid URL")
	}
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Accept", accept)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range p.opts.Header {
		req.Header[k] = v
	}
	resp, err := p.opts.client().Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct == sse.ContentType {
		data, err := readFirstEvent(resp.Body, p.opts.max())
		if err != nil {
			return resp.StatusCode, ct, nil, fmt.Errorf("reading the event stream: %w", err)
		}
		return resp.StatusCode, ct, data, nil
	}
	b, err := limitio.ReadAll(resp.Body, p.opts.max())
	if err != nil {
		b = nil
	}
	return resp.StatusCode, ct, b, nil
}

// readFirstEvent returns the data of the first event of an event stream
// that has any (nil when the stream ends first), reading at most max
// bytes of the stream (internal/sse).
func readFirstEvent(r io.Reader, max int64) ([]byte, error) {
	tooLong := fmt.Errorf("more than %d bytes before the first event", max)
	sr := sse.NewReader(limitio.NewReader(r, max, tooLong), int(min(max, 1<<30)))
	for {
		ev, err := sr.Next()
		if err == io.EOF {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(ev.Data)) > 0 {
			return ev.Data, nil
		}
	}
}

// rpcRequest encodes a JSON-RPC request of the probe (id 1).
func rpcRequest(method string, params map[string]any) []byte {
	body, _ := json.Marshal(jsonrpc.NewRequest(1, method, params))
	return body
}

func (p *prober) rpc(ctx context.Context, u, method string, params map[string]any, accept string) (int, string, *jsonrpc.Response, error) {
	status, ct, b, err := p.do(ctx, http.MethodPost, u, rpcRequest(method, params), accept)
	if err != nil {
		return status, ct, nil, err
	}
	var r jsonrpc.Response
	if json.Unmarshal(b, &r) != nil || r.JSONRPC != jsonrpc.Version || (r.Result == nil && r.Error == nil) {
		return status, ct, nil, nil
	}
	return status, ct, &r, nil
}

func withTenant(params map[string]any, tenant string) map[string]any {
	if tenant != "" {
		params["tenant"] = tenant
	}
	return params
}

const probeTaskID = "caddy-a2a-probe-nonexistent-task"

func (p *prober) probeJSONRPC(ctx context.Context, ptr, u, tenant string) bool {
	status, _, r, err := p.rpc(ctx, u, "GetTask", withTenant(map[string]any{"id": probeTaskID}, tenant), "application/json")
	switch {
	case err != nil:
		p.add(Error, ptr, fmt.Sprintf("JSONRPC interface %s does not answer: %v", cardfetch.RedactURL(u), err), "make the URL reachable or remove the entry")
		return false
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		p.add(Warning, ptr, fmt.Sprintf("JSONRPC interface %s requires credentials (status %d); binding not verified", cardfetch.RedactURL(u), status), "pass --header with credentials")
		return false
	case r == nil:
		p.add(Error, ptr, fmt.Sprintf("JSONRPC interface %s does not speak JSON-RPC 2.0 (status %d)", cardfetch.RedactURL(u), status), "point the entry at the JSON-RPC endpoint or fix protocolBinding")
		return false
	}
	return true
}

func (p *prober) probeREST(ctx context.Context, ptr, u string) bool {
	tu := strings.TrimSuffix(u, "/") + "/tasks/" + probeTaskID
	status, ct, b, err := p.do(ctx, http.MethodGet, tu, nil, "application/json")
	switch {
	case err != nil:
		p.add(Error, ptr, fmt.Sprintf("HTTP+JSON interface %s does not answer: %v", cardfetch.RedactURL(u), err), "make the URL reachable or remove the entry")
		return false
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		p.add(Warning, ptr, fmt.Sprintf("HTTP+JSON interface %s requires credentials (status %d); binding not verified", cardfetch.RedactURL(u), status), "pass --header with credentials")
		return false
	case (status == http.StatusNotFound || status == http.StatusOK) && (ct == "application/json" || ct == "application/a2a+json") && json.Valid(b):
		return true
	}
	p.add(Error, ptr, fmt.Sprintf("HTTP+JSON interface %s does not speak the REST binding (GET /tasks/{id}: status %d, %s)", cardfetch.RedactURL(u), status, orNone(ct)),
		"point the entry at the HTTP+JSON base URL or fix protocolBinding")
	return false
}

func orNone(s string) string {
	if s == "" {
		return "no content type"
	}
	return s
}

func probeMessage() map[string]any {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return map[string]any{"message": map[string]any{
		"messageId": "probe-" + hex.EncodeToString(b[:]),
		"role":      "ROLE_USER",
		"parts":     []any{map[string]any{"text": "ping"}},
	}}
}

func (p *prober) probeStreaming(ctx context.Context, rpcURL, restURL, tenant string) {
	const ptr = "/capabilities/streaming"
	const fix = "serve SendStreamingMessage as text/event-stream, or declare streaming: false"
	var status int
	var ct string
	var data []byte
	var err error
	if rpcURL != "" {
		status, ct, data, err = p.do(ctx, http.MethodPost, rpcURL, rpcRequest("SendStreamingMessage", withTenant(probeMessage(), tenant)), sse.ContentType)
	} else {
		body, _ := json.Marshal(probeMessage())
		status, ct, data, err = p.do(ctx, http.MethodPost, strings.TrimSuffix(restURL, "/")+"/message:stream", body, sse.ContentType)
	}
	switch {
	case err != nil:
		p.add(Error, ptr, fmt.Sprintf("streaming is declared but the streaming call failed: %v", err), fix)
	case status != http.StatusOK || ct != sse.ContentType:
		p.add(Error, ptr, fmt.Sprintf("streaming is declared but the streaming call answered status %d with %s", status, orNone(ct)), fix)
	case len(data) == 0 || !json.Valid(data):
		p.add(Error, ptr, "streaming is declared but the stream carried no JSON event", fix)
	default:
		var r jsonrpc.Response
		if rpcURL != "" && json.Unmarshal(data, &r) == nil && r.Error != nil {
			p.add(Error, ptr, fmt.Sprintf("streaming is declared but the stream answered error %d: %s", r.Error.Code, r.Error.Message), fix)
		}
	}
}

func (p *prober) probePush(ctx context.Context, rpcURL, tenant string) {
	_, _, r, err := p.rpc(ctx, rpcURL, "ListTaskPushNotificationConfigs", withTenant(map[string]any{"taskId": probeTaskID}, tenant), "application/json")
	if err != nil || r == nil {
		p.add(Error, "/capabilities/pushNotifications", "pushNotifications is declared but the push config call did not answer JSON-RPC", "serve the push config methods or declare pushNotifications: false")
		return
	}
	if r.Error != nil && (r.Error.Code == -32003 || r.Error.Code == -32004 || r.Error.Code == -32601) {
		p.add(Error, "/capabilities/pushNotifications", fmt.Sprintf("pushNotifications is declared but the push config call answered %d (%s)", r.Error.Code, r.Error.Message),
			"enable push notifications on the server or declare pushNotifications: false")
	}
}

func (p *prober) probeExtended(ctx context.Context, rpcURL, tenant string) {
	const ptr = "/capabilities/extendedAgentCard"
	status, _, r, err := p.rpc(ctx, rpcURL, "GetExtendedAgentCard", withTenant(map[string]any{}, tenant), "application/json")
	switch {
	case err != nil:
		p.add(Error, ptr, fmt.Sprintf("extendedAgentCard is declared but GetExtendedAgentCard failed: %v", err), "serve GetExtendedAgentCard")
	case r == nil:
		p.add(Error, ptr, fmt.Sprintf("extendedAgentCard is declared but GetExtendedAgentCard answered status %d without JSON-RPC", status), "check the credentials given")
	case r.Error != nil:
		p.add(Error, ptr, fmt.Sprintf("extendedAgentCard is declared but GetExtendedAgentCard answered %d (%s)", r.Error.Code, r.Error.Message), "configure the extended card or declare extendedAgentCard: false")
	default:
		var card struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(r.Result, &card) != nil || card.Name == "" {
			p.add(Error, ptr, "GetExtendedAgentCard returned no card", "return an AgentCard")
		}
	}
}

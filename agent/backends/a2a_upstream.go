package backends

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a/v03"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/client"
	"github.com/caddy-a2a/caddy-a2a/internal/cardfetch"
	rpc "github.com/caddy-a2a/caddy-a2a/internal/jsonrpc"
	"github.com/caddy-a2a/caddy-a2a/internal/limitio"
	"github.com/caddy-a2a/caddy-a2a/internal/sse"
)

// upstream is one discovered A2A agent behind the a2a backend (TURN-9):
// A2A 1.0 through the client library, or 0.3 translated by agent/a2a/v03.
type upstream interface {
	// send forwards one message: streamed when the upstream streams (each
	// event to fn), else one SendMessage whose result goes to fn.
	send(ctx context.Context, req *a2a.SendMessageRequest, fn func(a2a.StreamResponse) error) error
	// cancel forwards CancelTask.
	cancel(ctx context.Context, taskID string) error
}

// discovered is the upstream card and the upstream it selects.
type discovered struct {
	card *a2a.AgentCard
	up   upstream
	at   time.Time
}

// statusTransport turns upstream 408/429/5xx answers into transport errors
// (TURN-8 transient) before the client reads them; 401/403 pass through
// for the client's auth error.
type statusTransport struct{ rt http.RoundTripper }

// errUpstreamStatus is an upstream HTTP status that means "retry later".
type errUpstreamStatus struct{ code int }

func (e errUpstreamStatus) Error() string { return fmt.Sprintf("upstream answered %d", e.code) }

// RoundTrip implements http.RoundTripper.
func (t statusTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if c := resp.StatusCode; c == http.StatusRequestTimeout || c == http.StatusTooManyRequests || c >= 500 {
		resp.Body.Close()
		return nil, errUpstreamStatus{c}
	}
	return resp, nil
}

// discover fetches and checks the upstream card: its signature when Trust
// has keys, and an interface on the configured upstream's origin (SSRF:
// a card cannot send the gateway's upstream credentials elsewhere).
func (a *A2A) discover(ctx context.Context) (*discovered, error) {
	cardURL, err := client.CardURL(a.URL)
	if err != nil {
		return nil, fmt.Errorf("a2a backend: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	raw, err := cardfetch.Fetch(ctx, a.http(), cardURL, a.Header, client.MaxCardSize)
	if err != nil {
		return nil, cardFetchErr(ctx, err)
	}
	if a.Trust != nil {
		if err := client.VerifyCard(ctx, raw, *a.Trust); err != nil {
			return nil, fmt.Errorf("a2a backend: upstream card: %w", err)
		}
	}
	if v03.IsCard03(raw) {
		var c v03.AgentCard
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, errors.New("a2a backend: the upstream card is not valid JSON")
		}
		card := v03.Card10(&c)
		in, err := a.pickInterface(card, "0.3")
		if err != nil {
			return nil, err
		}
		return &discovered{card: card, up: &upstream03{a: a, url: in.URL, streaming: card.Capabilities.Streaming != nil && *card.Capabilities.Streaming}, at: time.Now()}, nil
	}
	var card a2a.AgentCard
	if err := json.Unmarshal(raw, &card); err != nil || card.Name == "" {
		return nil, errors.New("a2a backend: the upstream card is not an A2A card")
	}
	in, err := a.pickInterface(&card, "1")
	if err != nil {
		return nil, err
	}
	card.SupportedInterfaces = []a2a.AgentInterface{in}
	cl, err := client.New(&card, raw, client.Options{Headers: a.Header, HTTPClient: a.http(), Binding: client.BindingJSONRPC})
	if err != nil {
		return nil, errors.New("a2a backend: the upstream card offers no usable interface")
	}
	return &discovered{card: &card, up: &upstream10{c: cl}, at: time.Now()}, nil
}

// cardFetchErr classifies a failed card fetch like the other upstream
// failures.
func cardFetchErr(ctx context.Context, err error) error {
	if st, ok := errors.AsType[*cardfetch.StatusError](err); ok {
		if err := statusError(st.Code); err != nil {
			return err
		}
		return errors.New("a2a backend: the upstream card is not an A2A card") // a 2xx without the card
	}
	if errors.Is(err, cardfetch.ErrTooLarge) {
		return errors.New("a2a backend: the upstream card is too large")
	}
	if re, ok := errors.AsType[*cardfetch.ReadError](err); ok {
		return classifyUpstream(ctx, re.Err)
	}
	return classifyUpstream(ctx, err)
}

// pickInterface returns the card's first JSON-RPC interface of the
// protocol version (major) on the configured upstream's origin.
func (a *A2A) pickInterface(card *a2a.AgentCard, major string) (a2a.AgentInterface, error) {
	base, _ := url.Parse(a.URL)
	for _, in := range card.SupportedInterfaces {
		if in.ProtocolBinding != a2a.BindingJSONRPC || !(in.ProtocolVersion == major || strings.HasPrefix(in.ProtocolVersion, major+".")) {
			continue
		}
		u, err := url.Parse(in.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
			continue
		}
		if base != nil && !strings.EqualFold(u.Host, base.Host) {
			continue // SSRF: only the configured upstream's host and port
		}
		return in, nil
	}
	return a2a.AgentInterface{}, errors.New("a2a backend: the upstream card offers no JSON-RPC interface on the upstream's host")
}

// classifyUpstream maps an upstream call's failure to a turn error
// (TURN-8): 401/403 auth, timeouts, connection errors and 408/429/5xx
// transient, the turn's own cancel stays a cancel, anything else internal.
func classifyUpstream(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ctx.Err()
	}
	var te *backend.TurnError
	if errors.As(err, &te) {
		return err
	}
	var st errUpstreamStatus
	if errors.As(err, &st) {
		return errKind(backend.ErrorKindTransient, st)
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		switch ce.Kind {
		case client.KindAuth:
			return errKind(backend.ErrorKindAuth, errors.New("upstream refused the credentials"))
		case client.KindTransport:
			return errKind(backend.ErrorKindTransient, errors.New("upstream connection failed"))
		case client.KindInterrupted:
			return context.Canceled
		}
		return fmt.Errorf("upstream: %s", ce.Msg)
	}
	var ne net.Error
	var ue *url.Error
	if errors.As(err, &ne) || errors.As(err, &ue) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded) {
		return classifyTransportErr(ctx, err)
	}
	return err // a bad card or answer: internal
}

// upstream10 is an A2A 1.0 upstream, through the client library.
type upstream10 struct{ c *client.Client }

func (u *upstream10) send(ctx context.Context, req *a2a.SendMessageRequest, fn func(a2a.StreamResponse) error) error {
	if u.c.Streaming() {
		return u.c.SendStreamingMessage(ctx, req, fn)
	}
	res, err := u.c.SendMessage(ctx, req)
	if err != nil {
		return err
	}
	return fn(a2a.StreamResponse{Task: res.Task, Message: res.Message})
}

func (u *upstream10) cancel(ctx context.Context, taskID string) error {
	_, err := u.c.CancelTask(ctx, taskID)
	return err
}

// upstream03 is an A2A 0.3 upstream: JSON-RPC with the 0.3 method names,
// requests and events translated by agent/a2a/v03.
type upstream03 struct {
	a         *A2A
	url       string
	streaming bool
	ids       atomic.Int64
}

func (u *upstream03) send(ctx context.Context, req *a2a.SendMessageRequest, fn func(a2a.StreamResponse) error) error {
	params := v03.SendParams03(req)
	if !u.streaming {
		var res json.RawMessage
		if err := u.call(ctx, v03.MethodSend, params, &res); err != nil {
			return err
		}
		ev, _, err := v03.Event10(res)
		if err != nil {
			return &backend.ProtocolError{Err: fmt.Errorf("upstream result: %w", err)}
		}
		return fn(ev)
	}
	resp, err := u.post(ctx, v03.MethodStream, params, "text/event-stream")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), sse.ContentType) {
		return decodeRPC03(resp, nil)
	}
	return readSSE(ctx, resp.Body, 0, 0, func(data []byte) (bool, error) {
		var r rpc.Response
		if err := json.Unmarshal(data, &r); err != nil {
			return false, &backend.ProtocolError{Err: errors.New("upstream event is not JSON-RPC")}
		}
		if r.Error != nil {
			return false, upstreamRPCError(r.Error)
		}
		ev, final, err := v03.Event10(r.Result)
		if err != nil {
			return false, &backend.ProtocolError{Err: fmt.Errorf("upstream event: %w", err)}
		}
		return final, fn(ev)
	})
}

func (u *upstream03) cancel(ctx context.Context, taskID string) error {
	var res json.RawMessage
	return u.call(ctx, v03.MethodCancel, v03.TaskIDParams{ID: taskID}, &res)
}

// post sends one 0.3 JSON-RPC request (no A2A-Version header: 0.3).
func (u *upstream03) post(ctx context.Context, method string, params any, accept string) (*http.Response, error) {
	body, err := json.Marshal(rpc.NewRequest(u.ids.Add(1), method, params))
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.url, bytes.NewReader(body))
	if err != nil {
		return nil, errors.New("bad upstream interface URL")
	}
	for k, vs := range u.a.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	resp, err := u.a.http().Do(req)
	if err != nil {
		return nil, err
	}
	if err := statusError(resp.StatusCode); err != nil {
		resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

// call runs a unary 0.3 method.
func (u *upstream03) call(ctx context.Context, method string, params, out any) error {
	resp, err := u.post(ctx, method, params, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return decodeRPC03(resp, out)
}

// decodeRPC03 reads a unary JSON-RPC answer (bounded) into out.
func decodeRPC03(resp *http.Response, out any) error {
	b, err := io.ReadAll(limitio.NewReader(resp.Body, client.MaxResponseSize, errOutputTooLong))
	if err != nil {
		return err
	}
	var r rpc.Response
	if err := json.Unmarshal(b, &r); err != nil {
		return &backend.ProtocolError{Err: errors.New("upstream answer is not JSON-RPC")}
	}
	if r.Error != nil {
		return upstreamRPCError(r.Error)
	}
	if out == nil {
		return &backend.ProtocolError{Err: errors.New("upstream answered without an event stream")}
	}
	return json.Unmarshal(r.Result, out)
}

// upstreamRPCError is an A2A error the upstream answered (logged only).
func upstreamRPCError(e *rpc.Error) error {
	return &a2a.Error{Code: e.Code, Message: e.Message}
}

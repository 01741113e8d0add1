package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/internal/cardfetch"
	"github.com/caddy-a2a/caddy-a2a/internal/limitio"
	"github.com/caddy-a2a/caddy-a2a/internal/sse"
)

// httpCaller sends the requests of the two HTTP bindings (JSON-RPC and
// HTTP+JSON): the headers every request carries, the auth check of every
// answer and the SSE stream reading.
type httpCaller struct {
	hc   *http.Client
	opts Options
	// contentType is the media type of a request body.
	contentType string
}

func (h *httpCaller) newRequest(ctx context.Context, method, u string, body any, accept string) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, usagef("encoding the request: %v", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, protocolf("bad interface URL %q", cardfetch.RedactURL(u))
	}
	for k, v := range h.opts.Headers {
		req.Header[k] = v
	}
	h.opts.Auth.apply(req.Header)
	req.Header.Set("A2A-Version", a2a.ProtocolVersion)
	req.Header.Set("Accept", accept)
	if body != nil {
		req.Header.Set("Content-Type", h.contentType)
	}
	if h.opts.UserAgent != "" {
		req.Header.Set("User-Agent", h.opts.UserAgent)
	}
	return req, nil
}

// send builds a request (newRequest) and sends it (do).
func (h *httpCaller) send(ctx context.Context, method, u string, body any, accept string) (*http.Response, error) {
	req, err := h.newRequest(ctx, method, u, body, accept)
	if err != nil {
		return nil, err
	}
	return h.do(req)
}

func (h *httpCaller) do(req *http.Request) (*http.Response, error) {
	resp, err := h.hc.Do(req)
	if err != nil {
		if ctxErr := req.Context().Err(); ctxErr != nil {
			if errors.Is(ctxErr, context.DeadlineExceeded) {
				return nil, transportErr("request to "+cardfetch.RedactURL(req.URL.String())+" timed out", nil)
			}
			return nil, &Error{Kind: KindInterrupted, Msg: "interrupted"}
		}
		return nil, transportErr("request to "+cardfetch.RedactURL(req.URL.String()), cleanNetErr(err))
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		return nil, authError(resp.StatusCode, resp.Header, h.opts.Auth.sentIn(req.Header), body)
	}
	return resp, nil
}

// stream posts body to u asking for an event stream and hands each event's
// data to event. An answer without an event stream goes to other, whose
// error is returned (a protocol error when it has none).
func (h *httpCaller) stream(ctx context.Context, method, u string, body any, other func(*http.Response) error, event func([]byte) error) error {
	resp, err := h.send(ctx, http.MethodPost, u, body, sse.ContentType+", application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if !isEventStream(resp) {
		if err := other(resp); err != nil {
			return err
		}
		return protocolf("%s: the server answered without an event stream", method)
	}
	return readStream(ctx, method, resp.Body, event)
}

func isEventStream(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt == sse.ContentType
}

// cleanNetErr drops the repeated method and URL from *url.Error.
func cleanNetErr(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}

// readLimited reads r to its end, at most limit bytes.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	b, err := limitio.ReadAll(r, limit)
	if limitio.IsTooLarge(err) {
		return nil, fmt.Errorf("response larger than %d bytes", limit)
	}
	return b, err
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

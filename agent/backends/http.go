package backends

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/internal/limitio"
	"github.com/caddy-a2a/caddy-a2a/internal/sse"
)

// HTTP posts each turn request to an upstream agent service and reads the
// turn events from the response (TURN-4): NDJSON (any Content-Type but
// text/event-stream) or SSE whose data lines hold the same objects.
// Canceling the turn aborts the request. Upstream statuses map to turn
// outcomes: 401/403 → auth failure; 408, 429 and 5xx, timeouts and
// connection errors → transient; any other non-2xx → internal. The upstream
// body of an error response is never read into an error.
type HTTP struct {
	// URL is the upstream endpoint (http or https). Required.
	URL string
	// Client sends the requests. Default: a client over
	// http.DefaultTransport.
	Client *http.Client
	// Header is added to every request (e.g. an upstream credential).
	Header http.Header
	// Timeout bounds one turn (the whole exchange); 0 means no limit.
	Timeout time.Duration
	// MaxLineBytes bounds one event line (or one SSE event). Default 16 MiB.
	MaxLineBytes int
	// MaxOutputBytes bounds one response body. Default 64 MiB.
	MaxOutputBytes int64
}

// Validate checks the configuration.
func (h *HTTP) Validate() error {
	if err := checkUpstream(h.URL, "http backend: url", "a header"); err != nil {
		return err
	}
	if h.Timeout < 0 || h.MaxLineBytes < 0 || h.MaxOutputBytes < 0 {
		return errors.New("http backend: durations and limits must not be negative")
	}
	return nil
}

// RunTurn implements backend.Backend.
func (h *HTTP) RunTurn(ctx context.Context, req *backend.TurnRequest, emit backend.Emit) error {
	ctx, cancel := turnContext(ctx, h.Timeout)
	defer cancel()
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("http backend: encoding the turn request: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return errors.New("http backend: building the request failed")
	}
	backend.InjectTrace(ctx, hreq.Header) // OPS-4: W3C trace context to the upstream
	for k, vs := range h.Header {
		for _, v := range vs {
			hreq.Header.Add(k, v)
		}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/x-ndjson, text/event-stream")
	client := h.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(hreq)
	if err != nil {
		return classifyTransportErr(ctx, err)
	}
	defer resp.Body.Close()
	if err := statusError(resp.StatusCode); err != nil {
		return err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == sse.ContentType {
		return readSSE(ctx, resp.Body, h.MaxLineBytes, h.MaxOutputBytes, func(data []byte) (bool, error) {
			ev, ok, err := decodeEvent(data)
			if err != nil || !ok {
				return false, err
			}
			if err := emit(ev); err != nil {
				return false, err
			}
			return ev.Type == backend.EventEnd, nil
		})
	}
	lr := newLineReader(resp.Body, h.MaxLineBytes, h.MaxOutputBytes)
	for {
		line, err := lr.next()
		if err != nil {
			return streamEnd(ctx, err)
		}
		ev, ok, err := decodeEvent(line)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if err := emit(ev); err != nil {
			return err
		}
		if ev.Type == backend.EventEnd {
			return nil
		}
	}
}

// readSSE reads the Server-Sent Events of body (internal/sse), each event
// at most maxEvent bytes and the body at most maxTotal (0: the defaults),
// handing the data of each event that has any to handle until it reports
// the end of the turn or the body ends. An event over the limit is
// errLineTooLong, a body over it errOutputTooLong.
func readSSE(ctx context.Context, body io.Reader, maxEvent int, maxTotal int64, handle func([]byte) (bool, error)) error {
	if maxEvent <= 0 {
		maxEvent = DefaultMaxLineBytes
	}
	if maxTotal <= 0 {
		maxTotal = DefaultMaxOutputBytes
	}
	sr := sse.NewReader(limitio.NewReader(body, maxTotal, errOutputTooLong), maxEvent)
	for {
		ev, err := sr.Next()
		if errors.Is(err, sse.ErrTooLarge) {
			return errLineTooLong
		}
		if err != nil {
			return streamEnd(ctx, err)
		}
		if len(ev.Data) == 0 {
			continue
		}
		if done, err := handle(ev.Data); err != nil || done {
			return err
		}
	}
}

// streamEnd turns the error that ended a response body into the turn's
// result: a clean EOF is the end of the turn (input_required).
func streamEnd(ctx context.Context, err error) error {
	if errors.Is(err, errLineTooLong) || errors.Is(err, errOutputTooLong) {
		return err
	}
	if isEOF(err) {
		return nil
	}
	return classifyTransportErr(ctx, err)
}

// statusError maps an upstream status to a sanitised turn error (TURN-8).
func statusError(code int) error {
	switch {
	case code >= 200 && code < 300:
		return nil
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return errKind(backend.ErrorKindAuth, fmt.Errorf("upstream answered %d", code))
	case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500:
		return errKind(backend.ErrorKindTransient, fmt.Errorf("upstream answered %d", code))
	default:
		return fmt.Errorf("upstream answered %d", code)
	}
}

// classifyTransportErr maps a request error: the turn's own cancel stays
// a cancel; timeouts and network failures are transient.
func classifyTransportErr(ctx context.Context, err error) error {
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ctx.Err()
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return errKind(backend.ErrorKindTransient, errors.New("upstream timed out"))
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // drop the URL (it may hold a path or query)
	}
	return errKind(backend.ErrorKindTransient, fmt.Errorf("upstream connection failed: %w", err))
}

func isEOF(err error) bool { return errors.Is(err, io.EOF) }

var _ backend.Backend = (*HTTP)(nil)

// turnContext is ctx bounded by timeout, the limit of one turn; 0 means
// none.
func turnContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout > 0 {
		return context.WithTimeout(ctx, timeout)
	}
	return ctx, func() {}
}

// checkUpstream requires an absolute http(s) URL without credentials in it;
// what names the setting, instead the option to use for credentials.
func checkUpstream(raw, what, instead string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New(what + " must be an absolute http(s) URL")
	}
	if u.User != nil {
		return errors.New(what + " must not hold credentials; use " + instead)
	}
	return nil
}

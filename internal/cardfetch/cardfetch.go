// Package cardfetch is the one Agent Card fetcher, shared by the client
// library, the card validator's probe and the a2a backend: the discovery
// URL of a target (CardURL), the bounded GET of the card (Fetch) and the
// redaction of URLs for messages (RedactURL). It imports nothing from the
// server side.
package cardfetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/internal/limitio"
)

// WellKnownPath is where the public Agent Card is served (CARD-2).
const WellKnownPath = "/.well-known/agent-card.json"

// MaxBytes is the default bound of a fetched card.
const MaxBytes = 1 << 20

// protocolVersion is the A2A-Version the fetch sends.
const protocolVersion = "1.0"

// ErrTooLarge is returned for a card body over the size limit.
var ErrTooLarge = errors.New("card too large")

// StatusError is an answer other than 200 OK; its body was not read.
type StatusError struct {
	// Code is the HTTP status.
	Code int
	// Header is the answer's header (WWW-Authenticate for 401).
	Header http.Header
}

func (e *StatusError) Error() string { return fmt.Sprintf("status %d", e.Code) }

// ReadError is a failure while reading the card body.
type ReadError struct {
	// Err is the cause.
	Err error
}

func (e *ReadError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *ReadError) Unwrap() error { return e.Err }

// CardURL returns the URL to fetch an agent's card from, for a
// user-supplied target (an absolute http(s) URL): a path ending in ".json"
// is the card itself; anything else is a base URL under which
// WellKnownPath is appended (query and fragment dropped). User info is
// always dropped.
func CardURL(target string) (string, error) {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("not an absolute http(s) URL")
	}
	u.User = nil
	if strings.HasSuffix(u.Path, ".json") {
		return u.String(), nil
	}
	u.Path = strings.TrimRight(u.Path, "/") + WellKnownPath
	u.RawQuery, u.Fragment = "", ""
	return u.String(), nil
}

// RedactURL returns s fit for messages and logs: without user info, query
// and fragment; "(invalid URL)" when it does not parse.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(invalid URL)"
	}
	u.User = nil
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
	return u.String()
}

// Fetch GETs the card at u (a URL from CardURL) with hc, which carries the
// redirect and dial rules of the caller (nil: a client that follows no
// redirect). The request carries header, then Accept
// (application/a2a+json, application/json) and A2A-Version. It returns the
// body of a 200 answer, at most max bytes (<= 0: MaxBytes). Errors: the
// client's error for a failed exchange (a *url.Error), a *StatusError for
// another status, ErrTooLarge for a body over max, a *ReadError for a
// failed read. The caller bounds the time with ctx.
func Fetch(ctx context.Context, hc *http.Client, u string, header http.Header, max int64) ([]byte, error) {
	if max <= 0 {
		max = MaxBytes
	}
	if hc == nil {
		hc = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, errors.New("invalid card URL")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/a2a+json, application/json")
	req.Header.Set("A2A-Version", protocolVersion)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &StatusError{Code: resp.StatusCode, Header: resp.Header}
	}
	b, err := limitio.ReadAll(resp.Body, max)
	if limitio.IsTooLarge(err) {
		return nil, ErrTooLarge
	}
	if err != nil {
		return nil, &ReadError{Err: err}
	}
	return b, nil
}

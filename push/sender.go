package push

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names of a delivery (PUSH-4). Both token headers carry the same
// value: the Python, Java and JS SDKs read the X- one, a2a-go the other.
const (
	HeaderToken       = "X-A2A-Notification-Token"
	HeaderTokenNoX    = "A2A-Notification-Token"
	HeaderDeliveryID  = "X-A2A-Delivery-Id"
	HeaderAttempt     = "X-A2A-Delivery-Attempt"
	DefaultTimeout    = 5 * time.Second
	maxErrorBodyBytes = 512
)

// RetryPolicy is the schedule of failed deliveries: exponential backoff
// from Initial doubling up to Max, ±Jitter, at most MaxAttempts attempts.
type RetryPolicy struct {
	// Initial is the delay before the second attempt. Default 1s.
	Initial time.Duration
	// Max caps every delay, including a receiver's Retry-After. Default 60s.
	Max time.Duration
	// Jitter is the relative random spread of a delay, 0..1. Default 0.2.
	Jitter float64
	// MaxAttempts is how many attempts a delivery gets before it becomes a
	// dead letter. Default 5.
	MaxAttempts int
}

// WithDefaults fills zero fields.
func (p RetryPolicy) WithDefaults() RetryPolicy {
	if p.Initial <= 0 {
		p.Initial = time.Second
	}
	if p.Max <= 0 {
		p.Max = 60 * time.Second
	}
	if p.Max < p.Initial {
		p.Max = p.Initial
	}
	if p.Jitter < 0 {
		p.Jitter = 0
	}
	if p.Jitter == 0 {
		p.Jitter = 0.2
	}
	if p.Jitter > 1 {
		p.Jitter = 1
	}
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 5
	}
	return p
}

// Delay returns the wait after the attempt-th failed attempt (1-based).
// retryAfter, when positive, replaces the backoff (capped at Max).
func (p RetryPolicy) Delay(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, p.Max)
	}
	d := p.Initial
	for i := 1; i < attempt && d < p.Max; i++ {
		d *= 2
	}
	d = min(d, p.Max)
	if p.Jitter > 0 {
		f := 1 + p.Jitter*(2*rand.Float64()-1)
		d = time.Duration(float64(d) * f)
	}
	return max(d, time.Millisecond)
}

// Outcome is what happened to one attempt.
type Outcome int

const (
	// Delivered: the receiver answered 2xx.
	Delivered Outcome = iota
	// Retry: a timeout, transport error, or 408/409/425/429/5xx.
	Retry
	// Failed: any other answer (or a refused address); never retried.
	Failed
)

// Result is the outcome of one attempt.
type Result struct {
	Outcome Outcome
	// Status is the HTTP status, 0 when none was received.
	Status int
	// RetryAfter is the receiver's Retry-After, 0 when absent.
	RetryAfter time.Duration
	// Reason is a short description safe to store and log (no secrets).
	Reason string
}

// Delivery is one POST to make.
type Delivery struct {
	// ID is the stable delivery id, the same on every attempt (idempotency).
	ID string
	// URL is the callback.
	URL string
	// Token is the notification token ("" = none).
	Token string
	// Scheme and Credentials make the Authorization header when Scheme is set.
	Scheme, Credentials string
	// Body is the StreamResponse JSON.
	Body []byte
	// Attempt is the 1-based attempt number.
	Attempt int
	// TaskID is the task the delivery is about (the taskId claim of a
	// signed delivery, PUSH-8).
	TaskID string
}

// Sender POSTs deliveries through the policy's dialer, never following
// redirects.
type Sender struct {
	policy *Policy
	client *http.Client
	signer *NotificationSigner // nil: deliveries are not signed
}

// NewSender returns a sender with the given per-attempt timeout (0 = 5s).
func NewSender(policy *Policy, timeout time.Duration) *Sender {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if policy == nil {
		policy = &Policy{}
	}
	tr := &http.Transport{
		DialContext:           policy.DialContext,
		Proxy:                 nil, // a proxy would dial on our behalf, past the policy
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		ForceAttemptHTTP2:     true,
	}
	return &Sender{policy: policy, client: &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}}
}

// Close releases idle connections.
func (s *Sender) Close() { s.client.CloseIdleConnections() }

// Send makes one attempt.
func (s *Sender) Send(ctx context.Context, d Delivery) Result {
	if _, err := s.policy.ParseURL(d.URL); err != nil {
		return Result{Outcome: Failed, Reason: "callback URL not allowed"}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(d.Body))
	if err != nil {
		return Result{Outcome: Failed, Reason: "invalid callback URL"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "caddy-a2a-push/1")
	req.Header.Set(HeaderDeliveryID, d.ID)
	req.Header.Set(HeaderAttempt, strconv.Itoa(d.Attempt))
	if d.Token != "" {
		req.Header.Set(HeaderToken, d.Token)
		req.Header.Set(HeaderTokenNoX, d.Token)
	}
	if d.Scheme != "" {
		v := d.Scheme
		if d.Credentials != "" {
			v += " " + d.Credentials
		}
		req.Header.Set("Authorization", v)
	}
	if s.signer != nil {
		jwt, err := s.signer.Token(d, time.Now())
		if err != nil {
			return Result{Outcome: Retry, Reason: "signing the delivery failed"}
		}
		req.Header.Set(HeaderNotificationJWT, jwt)
		if d.Scheme == "" {
			// No authentication of its own: the token is the credential.
			req.Header.Set("Authorization", "Bearer "+jwt)
		}
	}
	resp, err := s.client.Do(req)
	if err != nil {
		if errors.Is(err, ErrBlocked) {
			return Result{Outcome: Failed, Reason: "callback address not allowed"}
		}
		if ctx.Err() != nil {
			return Result{Outcome: Retry, Reason: "gateway stopping"}
		}
		return Result{Outcome: Retry, Reason: transportReason(err)}
	}
	_, _ = io.CopyN(io.Discard, resp.Body, 64<<10) // drain a little for reuse; the rest is cut
	_ = resp.Body.Close()
	r := Result{Status: resp.StatusCode}
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		r.Outcome = Delivered
	case c == 408 || c == 409 || c == 425 || c == 429 || c >= 500:
		r.Outcome = Retry
		r.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		r.Reason = fmt.Sprintf("receiver answered %d", c)
	default:
		r.Outcome = Failed
		r.Reason = fmt.Sprintf("receiver answered %d", c)
	}
	return r
}

func transportReason(err error) string {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return "connection error: " + oe.Op
	}
	return "transport error"
}

// parseRetryAfter reads delta-seconds or an HTTP date; 0 when absent or bad.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		if n > 86400 {
			n = 86400
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

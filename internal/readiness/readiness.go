// Package readiness answers a load balancer's readiness probe (OPS-8):
// named checks run concurrently under one timeout, their answer is
// cached briefly and shared by concurrent probes (a burst of probes costs
// one round of checks), and the body names what is wrong in a fixed,
// credential-free vocabulary.
package readiness

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"time"
)

// Defaults of New.
const (
	// DefaultTimeout bounds one round of checks.
	DefaultTimeout = 500 * time.Millisecond
	// DefaultTTL is how long a round's answer is reused.
	DefaultTTL = 250 * time.Millisecond
)

// Check is one named part of the answer.
type Check struct {
	// Name is the key of the check in the body ("store", "push_queue",
	// "instance_lease").
	Name string
	// Kind, when set, starts the reason of a failure ("redis", "sqlite").
	Kind string
	// Run returns nil when the part is usable. It must return once ctx
	// ends; its error is reported through Reason, never as text.
	Run func(ctx context.Context) error
}

// Result is one round's answer.
type Result struct {
	// Ready is true when every check passed.
	Ready bool
	// Body is the JSON answer: {"status":"ready"|"unready","checks":{NAME:
	// {"ok":true} or {"ok":false,"reason":"…"}, …}}, checks in order.
	Body []byte
}

// Prober runs the checks for concurrent probes.
type Prober struct {
	checks  []Check
	timeout time.Duration
	ttl     time.Duration

	mu     sync.Mutex
	last   Result
	at     time.Time     // when last was computed; zero: never
	flight chan struct{} // closed when the round under way ends; nil: none
	rounds int           // rounds run (tests)
}

// New returns a Prober over checks; a timeout or ttl ≤ 0 takes its
// default.
func New(checks []Check, timeout, ttl time.Duration) *Prober {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return &Prober{checks: checks, timeout: timeout, ttl: ttl}
}

// Probe returns the answer of the last round if it is younger than the
// TTL, else joins the round under way or starts one. It returns early
// with an unready answer if ctx ends first (the round goes on for the
// next probe).
func (p *Prober) Probe(ctx context.Context) Result {
	p.mu.Lock()
	if !p.at.IsZero() && time.Since(p.at) < p.ttl {
		r := p.last
		p.mu.Unlock()
		return r
	}
	flight := p.flight
	if flight == nil {
		flight = make(chan struct{})
		p.flight = flight
		p.rounds++
		go p.round(flight)
	}
	p.mu.Unlock()
	select {
	case <-flight:
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.last
	case <-ctx.Done():
		return Result{Body: []byte(`{"status":"unready","checks":{}}`)}
	}
}

// round runs every check concurrently under the timeout and stores the
// answer.
func (p *Prober) round(flight chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	errs := make([]error, len(p.checks))
	var wg sync.WaitGroup
	for i, c := range p.checks {
		wg.Go(func() { errs[i] = c.Run(ctx) })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(p.timeout + p.timeout/2):
		// A check that ignores ctx does not hold the probe: report the
		// ones that have not answered as timed out.
	}
	res := p.render(errs, done)
	p.mu.Lock()
	p.last, p.at, p.flight = res, time.Now(), nil
	p.mu.Unlock()
	close(flight)
}

// render builds the body; before done is closed an error not yet
// reported counts as a timeout.
func (p *Prober) render(errs []error, done chan struct{}) Result {
	finished := true
	select {
	case <-done:
	default:
		finished = false
	}
	ready := true
	var b bytes.Buffer
	b.WriteString(`{"status":"`)
	mark := b.Len()
	b.WriteString(`ready","checks":{`)
	for i, c := range p.checks {
		var err error
		if finished {
			err = errs[i]
		} else {
			err = context.DeadlineExceeded // unsynchronised errs are not read
		}
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(c.Name)
		b.Write(name)
		if err == nil {
			b.WriteString(`:{"ok":true}`)
			continue
		}
		ready = false
		reason := Reason(err)
		if c.Kind != "" {
			reason = c.Kind + ": " + reason
		}
		r, _ := json.Marshal(reason)
		b.WriteString(`:{"ok":false,"reason":`)
		b.Write(r)
		b.WriteByte('}')
	}
	b.WriteString("}}")
	out := b.Bytes()
	if !ready {
		out = append(append(append([]byte{}, out[:mark]...), "unready"...), out[mark+len("ready"):]...)
	}
	return Result{Ready: ready, Body: out}
}

package agent

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// AnyPrincipal names the limits rule of every principal that has no rule
// of its own (the Caddyfile's `limits *`), the anonymous caller included.
const AnyPrincipal = "*"

// LimitRule is what one principal may do (AUTH-6): which methods, at what
// rate, with how many turns at once. The zero rule allows everything.
type LimitRule struct {
	// AllowMethods are the A2A 1.0 method names the principal may call
	// (e.g. GetTask, ListTasks); empty allows every method. Others are
	// refused with PERMISSION_DENIED (HTTP 403).
	AllowMethods []string
	// Rate is the sustained number of requests per second the principal
	// may make, over every method and binding; 0 is no limit. Beyond it
	// requests are refused with RESOURCE_EXHAUSTED (HTTP 429, Retry-After).
	Rate float64
	// Burst is how many requests may come at once above Rate. Default:
	// Rate rounded up, at least 1.
	Burst int
	// MaxTurns bounds the principal's turns running at once; 0 is no limit.
	// A message beyond it is refused with RESOURCE_EXHAUSTED.
	MaxTurns int
	// Counters, when set, hold the rule's per-principal rate buckets and
	// running-turn counts: services given the same Counters for a rule
	// count a principal's requests and turns once across all of them (the
	// agents of one site, AUTH-10). Nil: the service counts on its own.
	Counters *LimitCounters
}

// LimitCounters are the per-principal token buckets and running-turn
// counts behind limits rules; safe for concurrent use by several services.
type LimitCounters struct {
	mu      sync.Mutex
	buckets map[string]*rate.Limiter
	turns   map[string]int
}

// NewLimitCounters returns empty counters.
func NewLimitCounters() *LimitCounters {
	return &LimitCounters{buckets: map[string]*rate.Limiter{}, turns: map[string]int{}}
}

// Validate reports a rule that cannot be applied: an unknown method name,
// a negative or non-finite rate, a negative burst or turn count.
func (r LimitRule) Validate() error {
	for _, m := range r.AllowMethods {
		if !knownMethods[m] {
			return fmt.Errorf("allow_methods: %q is not an A2A 1.0 method (SendMessage, GetTask, ListTasks, …)", m)
		}
	}
	if r.Rate < 0 || math.IsNaN(r.Rate) || math.IsInf(r.Rate, 0) {
		return fmt.Errorf("rate must be a positive number of requests per second")
	}
	if r.Burst < 0 {
		return fmt.Errorf("burst must not be negative")
	}
	if r.MaxTurns < 0 {
		return fmt.Errorf("max_turns must not be negative")
	}
	return nil
}

// maxLimitBuckets bounds the per-principal state kept for the `*` rule
// (principals from JWTs are not a closed set); idle full buckets are
// dropped first when it is reached.
const maxLimitBuckets = 10000

// limits applies the LimitRules of a service; a nil *limits allows all.
type limits struct {
	rules     map[string]LimitRule // by principal name, and AnyPrincipal
	selectors []selectorRule       // scope: and claim: rules by key (AUTH-8)
	own       *LimitCounters       // the counters of rules without Counters
}

// newLimits returns the limits of rules (keyed by principal, AnyPrincipal
// for the others, or a scope: or claim: selector), nil when there are
// none.
func newLimits(rules map[string]LimitRule) *limits {
	if len(rules) == 0 {
		return nil
	}
	named, sel := splitRules(rules)
	return &limits{rules: named, selectors: sel, own: NewLimitCounters()}
}

// counters returns where rule r counts.
func (l *limits) counters(r LimitRule) *LimitCounters {
	if r.Counters != nil {
		return r.Counters
	}
	return l.own
}

// counterName is the name under which cr's counters count principal:
// the principal for a rule named by principal or `*`, else the selector
// keys and the principal (names hold no NUL).
func counterName(cr callerRule, principal string) string {
	if cr.key == "" {
		return principal
	}
	return cr.key + "\x00" + principal
}

// admit checks one request of principal (with the credential identity
// id) for method: the allow-list, then the rate. It returns the caller's
// rule for startTurn.
func (l *limits) admit(principal string, id *Identity, method string) (callerRule, bool, error) {
	if l == nil {
		return callerRule{}, false, nil
	}
	cr, ok := l.ruleFor(principal, id)
	if !ok {
		return cr, false, nil
	}
	r := cr.rule
	if len(r.AllowMethods) > 0 && !slices.Contains(r.AllowMethods, method) {
		return cr, true, errPermissionDenied(method)
	}
	if r.Rate <= 0 {
		return cr, true, nil
	}
	now := time.Now()
	res := l.counters(r).bucket(counterName(cr, principal), r).ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now) // a refused request takes no token
		return cr, true, errRateLimited(d)
	}
	return cr, true, nil
}

// bucket returns principal's token bucket, made on first use.
func (l *LimitCounters) bucket(principal string, r LimitRule) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.buckets[principal]; ok {
		return b
	}
	if len(l.buckets) >= maxLimitBuckets {
		l.evictIdle()
	}
	burst := r.Burst
	if burst <= 0 {
		burst = max(1, int(math.Ceil(r.Rate)))
	}
	b := rate.NewLimiter(rate.Limit(r.Rate), burst)
	l.buckets[principal] = b
	return b
}

// evictIdle drops the buckets that are full again (their principals have
// been idle long enough to have every token back): forgetting them changes
// nothing. Called with l.mu held.
func (l *LimitCounters) evictIdle() {
	now := time.Now()
	for p, b := range l.buckets {
		if b.TokensAt(now) >= float64(b.Burst()) {
			delete(l.buckets, p)
		}
	}
}

// startTurn counts a turn of principal against the max_turns of its rule
// cr (admit's) and returns the function that ends it (idempotent), or
// RESOURCE_EXHAUSTED.
func (l *limits) startTurn(cr callerRule, ok bool, principal string) (func(), error) {
	if l == nil || !ok || cr.rule.MaxTurns <= 0 {
		return func() {}, nil
	}
	return l.counters(cr.rule).startTurn(counterName(cr, principal), cr.rule.MaxTurns)
}

// startTurn counts a turn of principal against max and returns its
// release, or RESOURCE_EXHAUSTED.
func (l *LimitCounters) startTurn(principal string, maxTurns int) (func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.turns[principal] >= maxTurns {
		return nil, &a2a.Error{Code: a2a.CodeResourceExhausted, Message: fmt.Sprintf("Too many turns running for this caller (at most %d at once); retry when one ends", maxTurns), RetryAfter: time.Second}
	}
	l.turns[principal]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			if l.turns[principal]--; l.turns[principal] <= 0 {
				delete(l.turns, principal)
			}
			l.mu.Unlock()
		})
	}, nil
}

// errPermissionDenied refuses a method the caller may not use.
func errPermissionDenied(method string) error {
	return &a2a.Error{Code: a2a.CodePermissionDenied, Message: "This caller may not use " + method, Metadata: map[string]string{"method": method}}
}

// errRateLimited refuses a request over the caller's rate; retry names
// when a token is back.
func errRateLimited(retry time.Duration) error {
	return &a2a.Error{Code: a2a.CodeResourceExhausted, Message: "Rate limit exceeded for this caller; retry after " + strconv.Itoa(max(1, int(math.Ceil(retry.Seconds())))) + "s", RetryAfter: retry}
}

// turnReleaseKey carries a turn's max_turns release from SendMessage to
// the run that ends it.
type turnReleaseKey struct{}

// withTurnRelease attaches release to ctx for launch to hand to the run.
func withTurnRelease(ctx context.Context, release func()) context.Context {
	return context.WithValue(ctx, turnReleaseKey{}, release)
}

// turnRelease returns the release attached by withTurnRelease, or a
// function that does nothing (a call that did not come through the limits
// interceptor).
func turnRelease(ctx context.Context) func() {
	if f, _ := ctx.Value(turnReleaseKey{}).(func()); f != nil {
		return f
	}
	return func() {}
}

// limit is the interceptor of the caller's limits (AUTH-6), for every A2A
// method of every binding: the allowed methods and the rate, then for a
// message max_turns, whose release rides in ctx to the run that ends the
// turn (launch), or runs here when the call fails (the operation runs it
// when a message starts no turn, RPC-18).
func (s *Service) limit(ctx context.Context, inv *Invocation, next Next) (any, error) {
	if inv.Refused != nil || inv.Method == MethodOpenArtifact {
		return next(ctx, inv)
	}
	principal := inv.Call.Principal
	cr, ok, err := s.limits.admit(principal, inv.Call.Identity, inv.Method)
	if err != nil {
		return nil, err
	}
	if inv.Method != a2a.MethodSendMessage && inv.Method != a2a.MethodSendStreamingMessage {
		return next(ctx, inv)
	}
	release, err := s.limits.startTurn(cr, ok, principal)
	if err != nil {
		return nil, err
	}
	res, err := next(withTurnRelease(ctx, release), inv)
	if err != nil {
		release() // idempotent
	}
	return res, err
}

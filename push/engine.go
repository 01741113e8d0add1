package push

import (
	"context"
	"errors"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a/v03"
)

// Settings are the delivery settings that may change on a config reload
// without restarting the workers.
type Settings struct {
	// Policy checks callback URLs and dialled addresses.
	Policy *Policy
	// Timeout bounds one attempt. Default 5s.
	Timeout time.Duration
	// Retry is the retry schedule.
	Retry RetryPolicy
	// Signer, when set, signs every delivery (PUSH-8).
	Signer *NotificationSigner
	// Tracer provides the span of every attempt (SpanName), linked to the
	// turn that produced the job. Default: no-op (no spans).
	Tracer trace.TracerProvider
}

// Engine is the push runtime of one queue: configuration checks and
// secrets for package agent, and the worker pool that delivers jobs. Create
// it with NewEngine, Start it once, Stop it once.
type Engine struct {
	queue   Queue
	keys    *KeyRing
	workers int
	logger  *zap.Logger
	stats   Stats

	settings atomic.Pointer[engineSettings]

	mu      sync.Mutex
	cancel  context.CancelFunc
	done    chan struct{}
	started bool
}

type engineSettings struct {
	Settings
	sender *Sender
	tracer trace.Tracer
}

// NewEngine returns an engine over queue with the key ring, workers
// concurrent deliveries (default 16) and settings.
func NewEngine(queue Queue, keys *KeyRing, workers int, s Settings, logger *zap.Logger) *Engine {
	if workers <= 0 {
		workers = 16
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	e := &Engine{queue: queue, keys: keys, workers: workers, logger: logger}
	e.Update(s)
	return e
}

// Update replaces the delivery settings; attempts already running finish
// with the old ones.
func (e *Engine) Update(s Settings) {
	if s.Policy == nil {
		s.Policy = &Policy{}
	}
	if s.Timeout <= 0 {
		s.Timeout = DefaultTimeout
	}
	s.Retry = s.Retry.WithDefaults()
	snd := NewSender(s.Policy, s.Timeout)
	snd.signer = s.Signer
	old := e.settings.Swap(&engineSettings{Settings: s, sender: snd, tracer: tracerOf(s.Tracer)})
	if old != nil {
		old.sender.Close()
	}
}

func (e *Engine) current() *engineSettings { return e.settings.Load() }

// CheckURL applies the URL policy (PUSH-2) when a config is stored.
func (e *Engine) CheckURL(ctx context.Context, raw string) error {
	return e.current().Policy.CheckURL(ctx, raw)
}

// URLRule returns ReasonURL, the answer for a callback URL CheckURL
// refuses (PUSH-1).
func (e *Engine) URLRule() string { return ReasonURL }

// SealSecret encrypts a push config's secret with the key ring, bound to
// its task, config id and field by SecretAAD (PUSH-3).
func (e *Engine) SealSecret(plain, taskID, configID, field string) (string, error) {
	return e.keys.Seal(plain, SecretAAD(taskID, configID, field))
}

// OpenSecret decrypts a secret sealed by SealSecret for the same task,
// config id and field.
func (e *Engine) OpenSecret(sealed, taskID, configID, field string) (string, error) {
	return e.keys.Open(sealed, SecretAAD(taskID, configID, field))
}

// Enqueued records n new jobs in the outbox and wakes the workers.
func (e *Engine) Enqueued(n int) {
	if n <= 0 {
		return
	}
	e.stats.Queued.Add(int64(n))
	e.queue.Wake()
}

// Queue returns the engine's queue.
func (e *Engine) Queue() Queue { return e.queue }

// Stats returns the counters and the queue depth (-1 when unknown).
func (e *Engine) Stats(ctx context.Context) Snapshot {
	s := Snapshot{
		Queued: e.stats.Queued.Load(), Delivered: e.stats.Delivered.Load(), Retried: e.stats.Retried.Load(),
		DeadLettered: e.stats.DeadLettered.Load(), Attempts: e.stats.Attempts.Load(), Depth: -1,
	}
	if d, err := e.queue.Depth(ctx); err == nil {
		s.Depth = d
	}
	return s
}

// Start prepares the queue and launches the workers. A second call does
// nothing.
func (e *Engine) Start(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.started {
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err := e.queue.Prepare(pctx)
	cancel()
	if err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(context.Background())
	e.cancel, e.done, e.started = stop, make(chan struct{}), true
	go e.run(runCtx)
	return nil
}

// Stop stops the workers, waiting up to timeout for attempts in flight.
func (e *Engine) Stop(timeout time.Duration) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.started || e.cancel == nil {
		return nil
	}
	e.cancel()
	e.cancel = nil
	select {
	case <-e.done:
	case <-time.After(timeout):
		return errors.New("push workers did not stop in time")
	}
	e.current().sender.Close()
	return nil
}

func (e *Engine) run(ctx context.Context) {
	defer close(e.done)
	jobs := make(chan Job, e.workers)
	var wg sync.WaitGroup
	wg.Go(func() { e.guard(func() { e.queue.Run(ctx) }) })
	for range e.workers {
		wg.Go(func() {
			for j := range jobs {
				e.guard(func() { e.deliver(ctx, j) })
			}
		})
	}
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		var js []Job
		var err error
		e.guard(func() { js, err = e.queue.Claim(ctx, e.workers) })
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			e.logger.Warn("claiming push deliveries", zap.Error(err))
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, 5*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		for _, j := range js {
			select {
			case jobs <- j:
			case <-ctx.Done():
			}
		}
	}
	close(jobs)
	wg.Wait()
}

func (e *Engine) guard(fn func()) {
	defer func() {
		if v := recover(); v != nil {
			e.logger.Error("push worker panicked", zap.Any("panic", v))
		}
	}()
	fn()
}

// RedactURL returns a callback URL fit for logs: scheme://host/… without
// user info, path, query or fragment, which may carry secrets. A URL that
// does not parse gives "invalid URL".
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "invalid URL"
	}
	out := u.Scheme + "://" + u.Host
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		out += "/…"
	}
	return out
}

// deliver makes one attempt and records its outcome.
func (e *Engine) deliver(ctx context.Context, j Job) {
	cur := e.current()
	// Record outcomes even while stopping, so a delivered job is not sent again.
	rec, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if cc, ok := e.queue.(configChecker); ok {
		live, err := cc.configLive(rec, j)
		if err != nil {
			e.logger.Warn("checking the push config of a delivery", zap.String("delivery_id", j.ID), zap.Error(err))
		}
		if !live {
			// PUSH-1: the config was deleted; its deliveries are dropped,
			// not dead-lettered.
			if err := e.queue.Ack(rec, j); err != nil {
				e.logger.Warn("dropping push delivery", zap.String("delivery_id", j.ID), zap.Error(err))
			}
			e.logger.Debug("push delivery dropped: its config was deleted", zap.String("delivery_id", j.ID), zap.String("task_id", j.TaskID))
			return
		}
	}
	token, err1 := e.keys.Open(j.Token, SecretAAD(j.TaskID, j.ConfigID, "token"))
	creds, err2 := e.keys.Open(j.Credentials, SecretAAD(j.TaskID, j.ConfigID, "credentials"))
	if err1 != nil || err2 != nil {
		e.dead(rec, j, "cannot decrypt push secret (unknown key or tampered value)")
		return
	}
	body := j.Payload
	token, legacy := a2a.OpenedToken(token)
	if legacy {
		body = v03.PushPayload03(body) // a config of an A2A 0.3 caller (RPC-2)
	}
	j.Attempts++
	e.stats.Attempts.Add(1)
	sctx, span := startAttempt(ctx, cur.tracer, j)
	res := cur.sender.Send(sctx, Delivery{ID: j.ID, URL: j.URL, Token: token, Scheme: j.Scheme, Credentials: creds, Body: body, Attempt: j.Attempts, TaskID: j.TaskID})
	if ctx.Err() != nil && res.Outcome != Delivered {
		endAttempt(span, res, OutcomeInterrupted)
		return // stopping: the lease expires (or is released) and the job is retried
	}
	log := e.logger.Check(zap.DebugLevel, "push attempt")
	if log != nil {
		log.Write(zap.String("delivery_id", j.ID), zap.String("task_id", j.TaskID), zap.String("url", RedactURL(j.URL)),
			zap.Int("attempt", j.Attempts), zap.Int("status", res.Status), zap.String("reason", res.Reason))
	}
	endAttempt(span, res, e.settle(rec, cur, j, res))
}

// settle records the outcome of an attempt of j in the queue and returns
// it (OutcomeDelivered, OutcomeRetry or OutcomeDead).
func (e *Engine) settle(rec context.Context, cur *engineSettings, j Job, res Result) string {
	switch res.Outcome {
	case Delivered:
		if err := e.queue.Ack(rec, j); err != nil {
			e.logger.Warn("acknowledging push delivery", zap.String("delivery_id", j.ID), zap.Error(err))
		}
		e.stats.Delivered.Add(1)
		return OutcomeDelivered
	case Retry:
		if j.Attempts >= cur.Retry.MaxAttempts {
			e.dead(rec, j, res.Reason+" (attempts exhausted)")
			return OutcomeDead
		}
		due := time.Now().Add(cur.Retry.Delay(j.Attempts, res.RetryAfter))
		if err := e.queue.Retry(rec, j, due, res.Reason); err != nil {
			e.logger.Warn("scheduling push retry", zap.String("delivery_id", j.ID), zap.Error(err))
			return OutcomeRetry // the lease expires and the job is claimed again
		}
		e.stats.Retried.Add(1)
		return OutcomeRetry
	default:
		e.dead(rec, j, res.Reason)
		return OutcomeDead
	}
}

func (e *Engine) dead(ctx context.Context, j Job, reason string) {
	if err := e.queue.Dead(ctx, j, reason); err != nil {
		e.logger.Warn("dead-lettering push delivery", zap.String("delivery_id", j.ID), zap.Error(err))
		return
	}
	e.stats.DeadLettered.Add(1)
	e.logger.Info("push delivery dead-lettered", zap.String("delivery_id", j.ID), zap.String("task_id", j.TaskID),
		zap.String("url", RedactURL(j.URL)), zap.Int("attempts", j.Attempts), zap.String("reason", reason))
}

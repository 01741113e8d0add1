package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/push"
)

// agentMetrics returns the A2A metrics of the config's registry (OPS-2),
// shared by every a2a handler of the config, and registers the build info
// (OPS-10); they appear on the admin endpoint's /metrics.
func agentMetrics(ctx caddy.Context) (*agent.Metrics, error) {
	reg := ctx.GetMetricsRegistry()
	if reg == nil {
		return agent.NewMetrics(nil)
	}
	if err := registerBuildInfo(reg); err != nil {
		return nil, err
	}
	return agent.NewMetrics(reg)
}

// backendName is the module name of a loaded backend (echo, exec, http,
// openai), the backend label of the turn metrics and log line.
func backendName(mod any) string {
	if m, ok := mod.(caddy.Module); ok {
		return m.CaddyModule().ID.Name()
	}
	return "custom"
}

// pushStatsTimeout bounds the queue-depth query of one scrape.
const pushStatsTimeout = 2 * time.Second

// pushCollector exports the delivery counters and queue depth of the push
// engines of one config (push.Engine.Stats), labelled by queue name.
// Engines are shared across reloads, so their counters keep counting.
type pushCollector struct {
	queued, delivered, retried, dead, attempts, depth *prometheus.Desc

	mu      sync.Mutex
	engines map[*push.Engine]string // engine → queue name
}

func newPushCollector() *pushCollector {
	label := []string{"queue"}
	return &pushCollector{
		queued:    prometheus.NewDesc("caddy_a2a_push_queued_total", "Push deliveries queued by task state changes.", label, nil),
		delivered: prometheus.NewDesc("caddy_a2a_push_delivered_total", "Push deliveries answered with 2xx.", label, nil),
		retried:   prometheus.NewDesc("caddy_a2a_push_retried_total", "Push delivery attempts scheduled again after a retryable failure.", label, nil),
		dead:      prometheus.NewDesc("caddy_a2a_push_dead_total", "Push deliveries moved to the dead letters.", label, nil),
		attempts:  prometheus.NewDesc("caddy_a2a_push_attempts_total", "Push delivery attempts (POSTs) made.", label, nil),
		depth:     prometheus.NewDesc("caddy_a2a_push_queue_depth", "Push deliveries waiting or in flight, retries included.", label, nil),
		engines:   map[*push.Engine]string{},
	}
}

// registerPushMetrics adds eng (on the named queue) to the push collector of
// the config's registry, registering the collector on first use.
func registerPushMetrics(ctx caddy.Context, queue string, eng *push.Engine) error {
	pc := newPushCollector()
	if err := ctx.GetMetricsRegistry().Register(pc); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return fmt.Errorf("registering push metrics: %w", err)
		}
		existing, ok := are.ExistingCollector.(*pushCollector)
		if !ok {
			return fmt.Errorf("registering push metrics: another collector holds the caddy_a2a_push_ names (%T)", are.ExistingCollector)
		}
		pc = existing
	}
	pc.mu.Lock()
	pc.engines[eng] = queue
	pc.mu.Unlock()
	return nil
}

// Describe implements prometheus.Collector.
func (c *pushCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.queued, c.delivered, c.retried, c.dead, c.attempts, c.depth} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: one series per queue name, the
// sum over its engines; the depth is left out when no engine knows it.
func (c *pushCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	engines := make(map[*push.Engine]string, len(c.engines))
	for e, q := range c.engines {
		engines[e] = q
	}
	c.mu.Unlock()
	type sums struct {
		push.Snapshot
		depthKnown bool
	}
	byQueue := map[string]*sums{}
	ctx, cancel := context.WithTimeout(context.Background(), pushStatsTimeout)
	defer cancel()
	for e, q := range engines {
		s := e.Stats(ctx)
		t := byQueue[q]
		if t == nil {
			t = &sums{}
			byQueue[q] = t
		}
		t.Queued += s.Queued
		t.Delivered += s.Delivered
		t.Retried += s.Retried
		t.DeadLettered += s.DeadLettered
		t.Attempts += s.Attempts
		if s.Depth >= 0 {
			t.Depth += s.Depth
			t.depthKnown = true
		}
	}
	queues := make([]string, 0, len(byQueue))
	for q := range byQueue {
		queues = append(queues, q)
	}
	sort.Strings(queues)
	for _, q := range queues {
		t := byQueue[q]
		ch <- prometheus.MustNewConstMetric(c.queued, prometheus.CounterValue, float64(t.Queued), q)
		ch <- prometheus.MustNewConstMetric(c.delivered, prometheus.CounterValue, float64(t.Delivered), q)
		ch <- prometheus.MustNewConstMetric(c.retried, prometheus.CounterValue, float64(t.Retried), q)
		ch <- prometheus.MustNewConstMetric(c.dead, prometheus.CounterValue, float64(t.DeadLettered), q)
		ch <- prometheus.MustNewConstMetric(c.attempts, prometheus.CounterValue, float64(t.Attempts), q)
		if t.depthKnown {
			ch <- prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, float64(t.Depth), q)
		}
	}
}

// queueName is the queue label of p's engine.
func (p *PushConfig) queueName() string { return p.config().QueueName() }

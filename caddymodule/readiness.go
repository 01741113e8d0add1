package caddymodule

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/caddy-a2a/caddy-a2a/internal/readiness"
)

// readyState is the app's readiness prober (OPS-8), built at the first
// probe: by then every handler of the config is provisioned, so the push
// queues it checks are known.
type readyState struct {
	once   sync.Once
	prober *readiness.Prober
}

// probe answers a readiness probe for this app's data directory.
func (a *App) probe(ctx context.Context) readiness.Result {
	a.ready.once.Do(func() { a.ready.prober = readiness.New(a.readyChecks(), 0, 0) })
	return a.ready.prober.Probe(ctx)
}

// readyChecks lists what readiness checks: the store (SQLite's writer or
// Redis PING, "starting" before App.Start opened it), the redis-streams
// push queues, the dedicated gRPC listeners, and the instance lease of
// `store redis`.
func (a *App) readyChecks() []readiness.Check {
	st := a.shared.store
	kind := "sqlite"
	if a.shared.redis != nil {
		kind = "redis"
	}
	checks := []readiness.Check{{Name: "store", Kind: kind, Run: st.Check}}
	var queues []func(context.Context) error
	for _, r := range a.pushRefs {
		if r.check != nil {
			queues = append(queues, r.check)
		}
	}
	if len(queues) > 0 {
		checks = append(checks, readiness.Check{Name: "push_queue", Kind: "redis", Run: func(ctx context.Context) error {
			var errs []error
			for _, q := range queues {
				errs = append(errs, q(ctx))
			}
			return errors.Join(errs...)
		}})
	}
	if c, ok := a.grpcListenCheck(); ok {
		checks = append(checks, c)
	}
	if a.shared.redis != nil {
		checks = append(checks, readiness.Check{Name: "instance_lease", Run: func(context.Context) error {
			if err := st.Err(); err != nil {
				return err
			}
			if l := st.Capabilities().Lease; l != nil {
				return l.CheckLease(time.Now())
			}
			return nil
		}})
	}
	return checks
}

// grpcListenCheck is the readiness check of the config's dedicated gRPC
// listeners (`grpc { listen }`): "starting" until App.Start has opened
// them — the HTTP server that answers the probe may be up before. ok is
// false when the config has none.
func (a *App) grpcListenCheck() (readiness.Check, bool) {
	if len(a.grpcListens) == 0 {
		return readiness.Check{}, false
	}
	started := a.grpcListening
	return readiness.Check{Name: "grpc_listen", Run: func(context.Context) error {
		if started == nil || !started.Load() {
			return readiness.ErrStarting
		}
		return nil
	}}, true
}

// nothingToCheck is the readiness answer of a health handler in a config
// without an a2a app: it has no store or queue to check.
var nothingToCheck = readiness.Result{Ready: true, Body: []byte(`{"status":"ready","checks":{}}`)}

// notConfigured is the readiness answer while the a2a app is not
// provisioned.
var notConfigured = readiness.Result{Body: []byte(`{"status":"unready","checks":{"store":{"ok":false,"reason":"` + readiness.Starting + `"}}}`)}

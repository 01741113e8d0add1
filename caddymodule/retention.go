package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// RetentionConfig prunes old records of the data directory in the
// background (OPS-5), in small batches on the store's writer. A zero age
// keeps that kind of record.
type RetentionConfig struct {
	// Tasks is how long a task is kept after its last status change, with
	// its push configs, pending deliveries, stored input files and its
	// artifact payloads once no newer task refers to them. Running tasks
	// are never pruned. Example: 30d.
	Tasks caddy.Duration `json:"tasks,omitempty"`
	// Contexts is how long an idle context (workspace binding, backend
	// session state) is kept. Example: 7d.
	Contexts caddy.Duration `json:"contexts,omitempty"`
	// DeadLetters is how long a dead push delivery is kept. Example: 14d.
	DeadLetters caddy.Duration `json:"dead_letters,omitempty"`
	// Interval is the time between passes. Default: 10m.
	Interval caddy.Duration `json:"interval,omitempty"`
	// Batch is how many records one write transaction removes. Default: 500.
	Batch int `json:"batch,omitempty"`
}

// retention returns the agent form of the config for the data directory.
func (c *RetentionConfig) retention(dataDir string) agent.Retention {
	return agent.Retention{
		Tasks: time.Duration(c.Tasks), Contexts: time.Duration(c.Contexts), DeadLetters: time.Duration(c.DeadLetters),
		Interval: time.Duration(c.Interval), Batch: c.Batch,
		InputDir: filepath.Join(dataDir, "inputs"), ArtifactDir: filepath.Join(dataDir, "artifacts"),
	}
}

// validate refuses negative ages and an interval under a second.
func (c *RetentionConfig) validate() error {
	for name, d := range map[string]caddy.Duration{"tasks": c.Tasks, "contexts": c.Contexts, "dead_letters": c.DeadLetters} {
		if d < 0 {
			return fmt.Errorf("retention %s: must not be negative", name)
		}
	}
	if c.Interval != 0 && time.Duration(c.Interval) < time.Second {
		return errors.New("retention interval: must be at least 1s")
	}
	if c.Batch < 0 {
		return errors.New("retention batch: must not be negative")
	}
	return nil
}

// unmarshalRetention parses the retention block of the global a2a options:
//
//	retention {
//		tasks <duration>
//		contexts <duration>
//		dead_letters <duration>
//		interval <duration>
//		batch <n>
//	}
func unmarshalRetention(d *caddyfile.Dispenser) (*RetentionConfig, error) {
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	c := &RetentionConfig{}
	options := newBlockOptions("retention")
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		if err := options.once(d); err != nil {
			return nil, err
		}
		var err error
		switch d.Val() {
		case "tasks":
			err = durationArg(d, &c.Tasks)
		case "contexts":
			err = durationArg(d, &c.Contexts)
		case "dead_letters":
			err = durationArg(d, &c.DeadLetters)
		case "interval":
			err = durationArg(d, &c.Interval)
		case "batch":
			c.Batch, err = countArg(d, "retention batch")
		default:
			err = d.Errf("retention: unknown option %q (want tasks, contexts, dead_letters, interval or batch)", d.Val())
		}
		if err != nil {
			return nil, err
		}
	}
	return c, validated(d, c.validate)
}

// pruner runs the retention passes of one data directory: one goroutine for
// the process, started by the first config that opens the directory and
// stopped with it; each config's Start hands it its settings (a reload
// that changes or removes retention takes effect at the next pass).
type pruner struct {
	current atomic.Pointer[agent.Retention]
	once    sync.Once
	cancel  context.CancelFunc
	done    chan struct{}
}

// update sets the retention of the running config (nil: none).
func (p *pruner) update(r *agent.Retention) { p.current.Store(r) }

// start runs the passes over st until stop.
func (p *pruner) start(st store.Pruner, metrics *agent.Metrics, logger *zap.Logger) {
	p.once.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		p.cancel, p.done = cancel, make(chan struct{})
		go func() {
			defer close(p.done)
			const tick = time.Second
			t := time.NewTicker(tick)
			defer t.Stop()
			var last time.Time
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				r := p.current.Load()
				if r == nil || !r.Enabled() {
					continue
				}
				interval := r.Interval
				if interval <= 0 {
					interval = 10 * time.Minute
				}
				if time.Since(last) < interval {
					continue
				}
				last = time.Now()
				rr := *r
				rr.Metrics, rr.Logger = metrics, logger
				res, err := rr.PruneOnce(ctx, st, time.Now(), false)
				if err != nil && ctx.Err() == nil {
					logger.Warn("retention pass failed", zap.Error(err))
				}
				if res.Tasks+res.Contexts+res.DeadLetters+res.Artifacts+res.SharedArtifacts > 0 {
					logger.Info("retention pass", zap.Int("tasks", res.Tasks), zap.Int("contexts", res.Contexts),
						zap.Int("dead_letters", res.DeadLetters), zap.Int("input_dirs", res.InputDirs), zap.Int("artifacts", res.Artifacts),
						zap.Int("shared_artifacts", res.SharedArtifacts))
				}
			}
		}()
	})
}

// stop ends the passes (a pass under way stops at its next batch).
func (p *pruner) stop() {
	if p.cancel != nil {
		p.cancel()
		<-p.done
	}
}

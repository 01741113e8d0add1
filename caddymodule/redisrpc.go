package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent/binding/redisrpc"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
	"github.com/caddy-a2a/caddy-a2a/push"
)

// RedisRPCConfig turns on the Redis Streams JSON-RPC carrier (XPORT-5,
// `redis-streams`) of an a2a handler: requests read from a stream by a
// consumer group, answers written to reply streams under a prefix.
// Requests authenticate with headers.authorization (or the API key
// header) under the same rules as the a2a_auth handler before the a2a
// handler on its site. In the global a2a app it serves the config's only
// a2a handler.
type RedisRPCConfig struct {
	// URL is the Redis server: redis://, rediss://, unix://, a Sentinel
	// (?master_name=) or Cluster (?addr=) URL, as for the push queue.
	// Placeholders such as {env.REDIS_URL} allowed. Required.
	URL string `json:"url,omitempty"`
	// RequestStream is the stream requests are added to. Default
	// iac-code:a2a:requests.
	RequestStream string `json:"request_stream,omitempty"`
	// ResponsePrefix restricts reply streams: a request's reply_stream
	// must equal it or start with it and ':'; any other request is
	// acknowledged and answered nowhere. Default iac-code:a2a:responses.
	ResponsePrefix string `json:"response_prefix,omitempty"`
	// Group is the consumer group the gateways share. Default iac-code.
	Group string `json:"group,omitempty"`
	// Consumer is this process's consumer name. Default: host name and pid.
	Consumer string `json:"consumer,omitempty"`
	// ClaimAfter is how long a request may stay pending with a consumer
	// that stopped refreshing it (a dead gateway) before another re-claims
	// and runs it again. At least 1s. Default 30s.
	ClaimAfter caddy.Duration `json:"claim_after,omitempty"`
	// Block bounds one blocking read. Default 1s, at most 5s.
	Block caddy.Duration `json:"block,omitempty"`
	// MaxInFlight bounds the requests one gateway serves at once. Default 64.
	MaxInFlight int `json:"max_in_flight,omitempty"`
	// MaxPayloadSize bounds a request's payload, in bytes. Default: the
	// handler's max_body_size (32 MiB).
	MaxPayloadSize int64 `json:"max_payload_size,omitempty"`
	// ReplyMaxLen caps each reply stream (XADD MAXLEN ~). Default 1000.
	ReplyMaxLen int64 `json:"reply_max_len,omitempty"`
	// ReplyTTL is the expiry a reply stream gets at every write. Default 1h.
	ReplyTTL caddy.Duration `json:"reply_ttl,omitempty"`
	// AdvertiseURL, when set, advertises the carrier on the agent's card:
	// a supportedInterfaces entry with this URL and protocolBinding
	// redis-streams, for clients that should discover it. It is published
	// as written, so it must be an address clients may know (no
	// credentials; the url above is never published). Only in an a2a
	// handler's block. Default: not advertised.
	AdvertiseURL string `json:"advertise_url,omitempty"`
}

// validate checks the values (zero means the default): a URL, and no
// negative duration, size or count.
func (c *RedisRPCConfig) validate() error {
	if c.URL == "" {
		return errors.New("redis_rpc: url is required")
	}
	if c.ClaimAfter < 0 || c.Block < 0 || c.ReplyTTL < 0 || c.MaxPayloadSize < 0 {
		return errors.New("redis_rpc: durations and sizes must not be negative")
	}
	if err := notNegative("redis_rpc: max_in_flight", int64(c.MaxInFlight)); err != nil {
		return err
	}
	if err := c.validateAdvertise(false); err != nil {
		return err
	}
	return notNegative("redis_rpc: reply_max_len", c.ReplyMaxLen)
}

// options converts the config (maxBody: the handler's body limit, the
// payload default).
func (c *RedisRPCConfig) options(maxBody int64) (redisrpc.Options, error) {
	if err := c.validate(); err != nil {
		return redisrpc.Options{}, err
	}
	payload := c.MaxPayloadSize
	if payload == 0 {
		payload = maxBody
	}
	o := redisrpc.Options{
		RequestStream: c.RequestStream, ResponsePrefix: c.ResponsePrefix, Group: c.Group, Consumer: c.Consumer,
		ClaimAfter: time.Duration(c.ClaimAfter), Block: time.Duration(c.Block), MaxInFlight: c.MaxInFlight,
		MaxPayloadBytes: payload, ReplyMaxLen: c.ReplyMaxLen, ReplyTTL: time.Duration(c.ReplyTTL),
	}
	return o, o.Check()
}

// redisRPCRun is one redis_rpc block of a config and, once the app has
// started, its consumer.
type redisRPCRun struct {
	cfg     *RedisRPCConfig
	handler *AgentHandler // nil for the app block: bound at Start
	rdb     redis.UniversalClient
	cons    *redisrpc.Consumer
}

// addRedisRPC checks a redis_rpc block and records it for Start; h is its
// a2a handler (nil for the global block). Nothing connects here, so
// validation never reaches Redis.
func (a *App) addRedisRPC(cfg *RedisRPCConfig, h *AgentHandler) error {
	if _, err := cfg.options(0); err != nil {
		return err
	}
	a.redisRPCs = append(a.redisRPCs, &redisRPCRun{cfg: cfg, handler: h})
	return nil
}

// startRedisRPC starts a consumer per redis_rpc block, each with the
// service and the auth of its a2a handler as found in the http app.
func (a *App) startRedisRPC() error {
	runs := a.redisRPCs
	if len(runs) == 0 {
		return nil
	}
	agents, order := agentAuth(a.ctx)
	for _, run := range runs {
		h := run.handler
		if h == nil {
			if len(order) != 1 {
				return fmt.Errorf("redis_rpc in the global a2a block serves the only a2a handler, but the config has %d; put redis_rpc inside the a2a directive instead", len(order))
			}
			h = order[0]
		}
		guard, found := agents[h]
		if !found || h.handler == nil {
			return errors.New("redis_rpc: its a2a handler is not served by the http app")
		}
		if err := a.startOne(run, h, guard); err != nil {
			return err
		}
	}
	return nil
}

// startOne connects and starts the consumer of run for h, authenticating
// with guard's rules (nil or disabled: auth off, as on the site).
func (a *App) startOne(run *redisRPCRun, h *AgentHandler, guard *AuthHandler) error {
	opts, err := run.cfg.options(h.handler.Transport().MaxBodyBytes)
	if err != nil {
		return err
	}
	if h.Card != nil && h.Card.handler != nil {
		opts.BaseURL = h.Card.handler.Runtime(agentSiteRequest(a.ctx, h)).BaseURL
	}
	rdb, err := push.NewRedisClient(caddy.NewReplacer().ReplaceKnown(run.cfg.URL, ""))
	if err != nil {
		return fmt.Errorf("redis_rpc: %w", err)
	}
	var authn redisrpc.Authenticator
	if guard != nil && guard.authn.Enabled() {
		authn = headerIdentity{guard.authn} // with scopes and claims (AUTH-8)
	}
	logger := a.logger.Named("redis_rpc")
	d := h.handler.Dispatcher()
	if t := a.tenantsOf(h); t != nil {
		d = d.WithTenants(t) // TURN-10: entries naming another agent of the site
	}
	cons := redisrpc.New(rdb, d, opts, authn, logger)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cons.Start(ctx); err != nil {
		_ = rdb.Close()
		// OPS-9: name the Redis, without its credentials.
		return fmt.Errorf("%w (redis at %s)", err, store.RedisAddress([]string{caddy.NewReplacer().ReplaceKnown(run.cfg.URL, "")}))
	}
	run.rdb, run.cons = rdb, cons
	o := cons.Options()
	logger.Info("serving JSON-RPC over Redis Streams", zap.String("request_stream", o.RequestStream),
		zap.String("group", o.Group), zap.String("consumer", o.Consumer), zap.Bool("auth", authn != nil))
	return nil
}

// stopRedisRPC stops every consumer of this config at once: reading ends
// now, requests in flight get up to the shutdown timeout, the rest stay
// pending for another consumer (or the next config's) to re-claim.
func (a *App) stopRedisRPC() {
	runs := a.redisRPCs
	a.redisRPCs = nil
	grace := 10 * time.Second
	if a.ShutdownTimeout > 0 {
		grace = time.Duration(a.ShutdownTimeout)
	}
	var wg sync.WaitGroup
	for _, run := range runs {
		if run.cons == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			run.cons.Stop(grace)
			_ = run.rdb.Close()
		}()
	}
	wg.Wait()
}

// agentAuth finds every a2a handler of the http app with the last
// enabled a2a_auth handler before it in its handler chain (nil: none), in
// route order.
func agentAuth(ctx caddy.Context) (map[*AgentHandler]*AuthHandler, []*AgentHandler) {
	found := map[*AgentHandler]*AuthHandler{}
	var order []*AgentHandler
	httpApp, err := ctx.AppIfConfigured("http")
	if err != nil || httpApp == nil {
		return found, nil
	}
	app, ok := httpApp.(*caddyhttp.App)
	if !ok {
		return found, nil
	}
	var walk func(routes caddyhttp.RouteList, guard *AuthHandler)
	walk = func(routes caddyhttp.RouteList, guard *AuthHandler) {
		for _, rt := range routes {
			g := guard
			for _, h := range rt.Handlers {
				switch v := h.(type) {
				case *AuthHandler:
					if v.authn.Enabled() {
						g = v
					}
				case *AgentHandler:
					if _, seen := found[v]; !seen {
						order = append(order, v)
					}
					found[v] = g
				case *caddyhttp.Subroute:
					walk(v.Routes, g)
				}
			}
		}
	}
	for _, name := range sortedServerNames(app) {
		walk(app.Servers[name].Routes, nil)
	}
	return found, order
}

// sortedServerNames are the http app's server names in order.
func sortedServerNames(app *caddyhttp.App) []string {
	names := make([]string, 0, len(app.Servers))
	for name, srv := range app.Servers {
		if srv != nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

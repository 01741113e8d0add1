package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc"
	stdiocarrier "github.com/caddy-a2a/caddy-a2a/agent/binding/stdio"
)

// StdioConfig names the config and site `caddy a2a stdio` runs (XPORT-4).
type StdioConfig struct {
	// ConfigFile is the config file (--config).
	ConfigFile string
	// Adapter is its config adapter (--adapter); by default caddyfile for
	// a file named Caddyfile* or *.caddyfile, else none (JSON), as for
	// `caddy run`.
	Adapter string
	// Site picks the site whose a2a handler runs (--site); "" is the first.
	Site string
}

// StdioSite is a site's a2a service started without an HTTP listener, for
// `caddy a2a stdio`.
type StdioSite struct {
	// Dispatcher serves the site's agent: its service behind the site's
	// interceptors (store, backends, push engine and card as the site's
	// a2a handler has them), with legacy_v03 when the site has it on.
	Dispatcher *jsonrpc.Dispatcher
	// MaxLineBytes is the site's request body limit (max_body_size).
	MaxLineBytes int64
	// Grace is the HTTP grace period of the config (grace_period), applied
	// to the requests still running at EOF.
	Grace time.Duration
	// BaseURL is the card's public_url ("" without one), the base of
	// artifact links.
	BaseURL string
	// Tenants finds the other agents of the site a request's tenant names
	// (TURN-10), nil when the site has none.
	Tenants jsonrpc.Tenants
	// Label names the site in log lines.
	Label string
	// Logger writes to stderr (or where the config's logs go, never stdout).
	Logger *zap.Logger
	// Stop stops the service as at process exit (OPS-3): running turns get
	// the shutdown timeout, then fail; the store is closed. It may be called
	// more than once and from several goroutines; each call returns once
	// the service has stopped.
	Stop func()
}

var (
	stdioOpenerMu sync.Mutex
	stdioOpener   func(StdioConfig) (*StdioSite, error)
)

// SetStdioOpener sets how `caddy a2a stdio` starts a site's service;
// caddymodule sets it (it loads the config with Caddy).
func SetStdioOpener(open func(StdioConfig) (*StdioSite, error)) {
	stdioOpenerMu.Lock()
	stdioOpener = open
	stdioOpenerMu.Unlock()
}

func init() {
	registerSubcommand(func(root *cobra.Command) {
		root.AddCommand(stdioCommand())
	})
}

// stdioCommand is `caddy a2a stdio` (XPORT-4).
func stdioCommand() *cobra.Command {
	var cfg StdioConfig
	var principal string
	var exts []string
	c := &cobra.Command{
		Use:   "stdio --config FILE [--adapter caddyfile] [--site NAME] [--principal NAME]",
		Short: "Serve a site's agent as JSON-RPC over stdin/stdout (NDJSON), without listening",
		Long: `Runs the a2a service of one site of the config (its store, backends, push
and card) with no HTTP listener: JSON-RPC 2.0 requests are read one per line
on stdin and answered one response per line on stdout. A stream's events are
responses with the request's id, ended by {"jsonrpc":"2.0","id":…,"final":true}.
Logs go to stderr. Every request runs as the local user (or --principal); the
site's auth is not applied: stdio trusts the process that started it. At EOF
on stdin the requests already read finish, running turns drain as at shutdown,
and the command exits 0.`,
		Args: anyArgs,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("stdio takes no arguments (got %q); the config is --config FILE", args[0])
			}
			return runStdio(cmd.Context(), cfg, principal, exts)
		}),
	}
	f := c.Flags()
	f.StringVarP(&cfg.ConfigFile, "config", "c", "", "config file (required)")
	f.StringVarP(&cfg.Adapter, "adapter", "a", "", "config adapter (default: caddyfile for a file named Caddyfile* or *.caddyfile, else JSON)")
	f.StringVar(&cfg.Site, "site", "", "the site whose a2a handler runs: host, host:port, listen address or server name (default: the first)")
	f.StringVar(&principal, "principal", "", "the principal of every request (default: the local user name)")
	f.StringArrayVar(&exts, "extension", nil, "an extension URI to activate on every request, as A2A-Extensions would (repeatable)")
	return c
}

// runStdio starts the site's service and serves stdin/stdout until EOF or
// SIGINT/SIGTERM; a second signal exits at once (the default action).
func runStdio(parent context.Context, cfg StdioConfig, principal string, exts []string) error {
	if cfg.ConfigFile == "" {
		return usagef("stdio needs --config FILE")
	}
	if base := filepath.Base(cfg.ConfigFile); cfg.Adapter == "" && (strings.HasPrefix(base, "Caddyfile") || filepath.Ext(base) == ".caddyfile") {
		cfg.Adapter = "caddyfile"
	}
	if principal == "" {
		var err error
		if principal, err = localUser(); err != nil {
			return usagef("stdio: %v; give --principal", err)
		}
	}
	stdioOpenerMu.Lock()
	open := stdioOpener
	stdioOpenerMu.Unlock()
	if open == nil {
		return errors.New("stdio: this build cannot load configs")
	}
	site, err := open(cfg)
	if err != nil {
		return exitWith(1, err)
	}
	defer site.Stop()
	if parent == nil {
		parent = context.Background()
	}
	ctx, stopSignals := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	go func() {
		<-ctx.Done()
		stopSignals() // a second signal takes its default action: exit now
	}()
	site.Logger.Info("serving A2A JSON-RPC on stdin/stdout", zap.String("site", site.Label))
	err = stdiocarrier.Serve(ctx, site.Dispatcher, os.Stdin, os.Stdout, stdiocarrier.Options{
		Call:         agent.Call{Principal: principal, BaseURL: site.BaseURL, Extensions: exts},
		MaxLineBytes: site.MaxLineBytes,
		Grace:        site.Grace,
		Shutdown:     site.Stop,
		Logger:       site.Logger,
		Tenants:      site.Tenants,
	})
	site.Stop()
	if err != nil {
		return exitWith(1, fmt.Errorf("stdio: %w", err))
	}
	return nil
}

// localUser is the name of the user running the process.
func localUser() (string, error) {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username, nil
	}
	if name := os.Getenv("USER"); name != "" {
		return name, nil
	}
	return "", errors.New("the local user name is unknown")
}

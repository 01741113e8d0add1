package caddymodule

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
)

// errAddressTaken is what lockAddress returns when another process holds
// the address's lock.
var errAddressTaken = errors.New("address lock held by another process")

// listenerLocks are the address locks of this process (OPS-9), one per
// address, shared by consecutive configs: a reload that keeps an address
// keeps its lock, so Caddy's own config reloads never trip the check.
var listenerLocks = caddy.NewUsagePool()

// addressLock is one held address lock.
type addressLock struct{ c io.Closer }

// Destruct releases the lock.
func (l addressLock) Destruct() error { return l.c.Close() }

// listenAddress is one TCP address a server of the config listens on.
type listenAddress struct {
	key  string // the lock key: "tcp/HOST:PORT", HOST "*" for any address
	addr string // as the error names it
}

// claimListeners takes the address lock of every TCP address the config's
// HTTP servers listen on, unless ShareListeners is set (OPS-9). Caddy binds
// with SO_REUSEPORT, so a second gateway on the same address would
// otherwise start and split the traffic between two stores; that second
// gateway fails here, naming the address. A lock that cannot be taken for
// another reason (no runtime directory) is logged and skipped.
func (a *App) claimListeners() error {
	if a.ShareListeners {
		return nil
	}
	for _, la := range a.listenAddresses() {
		_, _, err := listenerLocks.LoadOrNew(la.key, func() (caddy.Destructor, error) {
			c, err := lockAddress(la.key)
			if err != nil {
				return nil, err
			}
			return addressLock{c: c}, nil
		})
		if errors.Is(err, errAddressTaken) {
			a.releaseListeners()
			return fmt.Errorf("a2a: another gateway already serves %s: two gateways on one address split its traffic between them; "+
				"stop the other one or use another address (for deliberate scale-out on one host, set share_listeners in the global a2a block of every gateway sharing it)", la.addr)
		}
		if err != nil {
			a.logger.Warn("cannot check that no other gateway serves the address", zap.String("address", la.addr), zap.Error(err))
			continue
		}
		a.listenKeys = append(a.listenKeys, la.key)
	}
	return nil
}

// releaseListeners drops this config's references to its address locks;
// the last one releases the lock.
func (a *App) releaseListeners() {
	for _, k := range a.listenKeys {
		_, _ = listenerLocks.Delete(k)
	}
	a.listenKeys = nil
}

// listenAddresses lists the TCP addresses of the config's HTTP servers
// and dedicated gRPC listeners,
// placeholders replaced, without duplicates.
func (a *App) listenAddresses() []listenAddress {
	v, err := a.ctx.AppIfConfigured("http")
	if err != nil {
		return nil
	}
	httpApp, ok := v.(*caddyhttp.App)
	if !ok {
		return nil
	}
	repl := caddy.NewReplacer()
	seen := map[string]bool{}
	var out []listenAddress
	lists := make([][]string, 0, len(httpApp.Servers)+1)
	for _, srv := range httpApp.Servers {
		lists = append(lists, srv.Listen)
	}
	lists = append(lists, a.grpcListenAddresses()) // issue 29: SO_REUSEPORT binds those twice too
	for _, listen := range lists {
		for _, l := range listen {
			for _, la := range tcpAddresses(repl.ReplaceKnown(l, "")) {
				if !seen[la.key] {
					seen[la.key] = true
					out = append(out, la)
				}
			}
		}
	}
	return out
}

// maxLockedPorts bounds the locks taken for one port range.
const maxLockedPorts = 256

// tcpAddresses expands a listener address into its TCP addresses (other
// networks: none). Any-address hosts ("", 0.0.0.0, ::) share the key "*".
func tcpAddresses(listen string) []listenAddress {
	na, err := caddy.ParseNetworkAddress(listen)
	if err != nil || (na.Network != "tcp" && na.Network != "tcp4" && na.Network != "tcp6") || na.StartPort == 0 {
		return nil // port 0: a port of the kernel's choosing, never shared
	}
	host := na.Host
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "*"
	}
	var out []listenAddress
	for p := na.StartPort; p <= na.EndPort && p-na.StartPort < maxLockedPorts; p++ {
		port := strconv.FormatUint(uint64(p), 10)
		hp := net.JoinHostPort(host, port)
		shown := hp // Caddy's notation: ":PORT" for any address
		if host == "*" {
			shown = ":" + port
		}
		out = append(out, listenAddress{key: "tcp/" + hp, addr: shown})
	}
	return out
}

// lockName is the key's lock name: a fixed-size hash, so that any
// address fits in a socket or file name.
func lockName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "caddy-a2a-listen-" + hex.EncodeToString(sum[:16])
}

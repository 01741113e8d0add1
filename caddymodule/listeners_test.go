package caddymodule

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
)

// OPS-9: listener addresses map to lock keys; any-address hosts share one.
func TestTCPAddresses(t *testing.T) {
	for in, want := range map[string][]listenAddress{
		":8080":             {{key: "tcp/*:8080", addr: ":8080"}},
		"0.0.0.0:8080":      {{key: "tcp/*:8080", addr: ":8080"}},
		"tcp6/[::]:9":       {{key: "tcp/*:9", addr: ":9"}},
		"127.0.0.1:80-81":   {{key: "tcp/127.0.0.1:80", addr: "127.0.0.1:80"}, {key: "tcp/127.0.0.1:81", addr: "127.0.0.1:81"}},
		"tcp6/[::1]:443":    {{key: "tcp/[::1]:443", addr: "[::1]:443"}},
		"127.0.0.1:0":       nil,
		"unix//run/a.sock":  nil,
		"udp/127.0.0.1:443": nil,
		"not an address":    nil,
	} {
		got := tcpAddresses(in)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("tcpAddresses(%q) = %+v, want %+v", in, got, want)
		}
	}
	if n := len(tcpAddresses("127.0.0.1:1000-5000")); n != maxLockedPorts {
		t.Errorf("a wide range took %d locks, want %d", n, maxLockedPorts)
	}
}

// OPS-9: an address lock held here refuses a second one until released.
func TestLockAddressConflict(t *testing.T) {
	key := "tcp/test-" + t.Name()
	l, err := lockAddress(key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockAddress(key); !errors.Is(err, errAddressTaken) {
		l.Close()
		t.Fatalf("second lock: %v, want errAddressTaken", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = lockAddress(key)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	l.Close()
}

// OPS-9: `share_listeners` in the global a2a block sets ShareListeners and
// takes no value.
func TestShareListenersOption(t *testing.T) {
	v, err := parseAppOption(caddyfile.NewTestDispenser("a2a {\nshare_listeners\n}"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var app App
	if err := json.Unmarshal(v.(httpcaddyfile.App).Value, &app); err != nil || !app.ShareListeners {
		t.Fatalf("ShareListeners not set: %s %v", v.(httpcaddyfile.App).Value, err)
	}
	if _, err := parseAppOption(caddyfile.NewTestDispenser("a2a {\nshare_listeners yes\n}"), nil); err == nil {
		t.Fatal("share_listeners with a value was accepted")
	}
}

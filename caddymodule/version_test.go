package caddymodule

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/caddy-a2a/caddy-a2a/internal/version"
)

// OPS-10: caddy_a2a_build_info names the module and Caddy versions, once
// per registry however many handlers register it, and `caddy version`
// starts with the module version.
func TestBuildInfo(t *testing.T) {
	reg := prometheus.NewRegistry()
	for range 2 {
		if err := registerBuildInfo(reg); err != nil {
			t.Fatal(err)
		}
	}
	mfs, err := reg.Gather()
	if err != nil || len(mfs) != 1 || mfs[0].GetName() != "caddy_a2a_build_info" || len(mfs[0].GetMetric()) != 1 {
		t.Fatalf("gathered %v, %v", mfs, err)
	}
	labels := map[string]string{}
	for _, l := range mfs[0].GetMetric()[0].GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	if labels["version"] != version.String() || labels["caddy_version"] != version.Caddy() || mfs[0].GetMetric()[0].GetGauge().GetValue() != 1 {
		t.Errorf("labels %v value %v", labels, mfs[0].GetMetric()[0].GetGauge().GetValue())
	}
	if _, full := caddy.Version(); !strings.HasPrefix(full, "caddy-a2a/"+version.String()) {
		t.Errorf("caddy version = %q, want it to start with caddy-a2a/%s", full, version.String())
	}
}

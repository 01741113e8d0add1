package caddymodule

import (
	"errors"
	"fmt"

	"github.com/caddyserver/caddy/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/caddy-a2a/caddy-a2a/internal/version"
)

// OPS-10: `caddy version` names the caddy-a2a version. Caddy prints its
// CustomVersion before its own version, so the line reads
// "caddy-a2a/v1.2.3 v2.11.9 h1:…"; a CustomVersion set at link time is
// kept after ours. `caddy list-modules --versions` reads the module's
// version from the build info itself.
func init() {
	v := "caddy-a2a/" + version.String()
	if caddy.CustomVersion != "" {
		v += " " + caddy.CustomVersion
	}
	caddy.CustomVersion = v
}

// registerBuildInfo adds caddy_a2a_build_info{version, caddy_version} 1
// to reg (OPS-10), once per registry; it sits next to Caddy's
// go_build_info, which names only the main module of the build.
func registerBuildInfo(reg prometheus.Registerer) error {
	if reg == nil {
		return nil
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "caddy_a2a_build_info",
		Help:        "Always 1: the caddy-a2a module version (version) and the Caddy version (caddy_version) of this binary.",
		ConstLabels: prometheus.Labels{"version": version.String(), "caddy_version": version.Caddy()},
	})
	g.Set(1)
	if err := reg.Register(g); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return fmt.Errorf("registering caddy_a2a_build_info: %w", err)
		}
	}
	return nil
}

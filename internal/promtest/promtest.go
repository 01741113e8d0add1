// Package promtest reads metrics of a Prometheus collector in tests, the
// way a scrape sees them.
package promtest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// Gauge returns the value of the unlabelled gauge name that c collects;
// the test fails when c does not collect it.
func Gauge(t testing.TB, c prometheus.Collector, name string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 && mf.GetMetric()[0].GetGauge() != nil {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}

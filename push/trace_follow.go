package push

import (
	"context"
	"reflect"
	"sync/atomic"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
	"go.opentelemetry.io/otel/trace/noop"
)

// FollowTracer is a trace.TracerProvider that delegates to the last
// provider given to Follow (no-op before): for a host whose tracer
// provider is only reachable from the spans of its requests (Caddy's
// `tracing` directive sets no global provider). Its tracers look the
// provider up at every Start, so an engine built before the first traced
// request still traces. Safe for concurrent use.
type FollowTracer struct {
	embedded.TracerProvider
	cur atomic.Pointer[providerBox]
}

type providerBox struct{ tp trace.TracerProvider }

// Follow makes tp the provider of the spans started from now on. Calling
// it with the provider already followed costs one atomic load.
func (f *FollowTracer) Follow(tp trace.TracerProvider) {
	if tp == nil {
		return
	}
	if b := f.cur.Load(); b != nil && reflect.TypeOf(tp).Comparable() && b.tp == tp {
		return
	}
	f.cur.Store(&providerBox{tp: tp})
}

func (f *FollowTracer) provider() trace.TracerProvider {
	if b := f.cur.Load(); b != nil {
		return b.tp
	}
	return noop.NewTracerProvider()
}

// Tracer returns a tracer that starts its spans with the provider
// followed at that time.
func (f *FollowTracer) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return &followTracer{f: f, name: name, opts: opts}
}

type followTracer struct {
	embedded.Tracer
	f    *FollowTracer
	name string
	opts []trace.TracerOption
}

func (t *followTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	return t.f.provider().Tracer(t.name, t.opts...).Start(ctx, name, opts...)
}

var _ trace.TracerProvider = (*FollowTracer)(nil)

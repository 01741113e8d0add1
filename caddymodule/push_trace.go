package caddymodule

import (
	"net/http"

	"go.opentelemetry.io/otel/trace"

	"github.com/caddy-a2a/caddy-a2a/push"
)

// pushTracer is the tracer provider of every push engine (issue 28): the
// provider of Caddy's `tracing` directive, which Caddy keeps to itself and
// sets as no global; it is learnt from the span of the traced requests
// the a2a handler serves (the same provider the turn spans use). Until a
// traced request came, deliveries make no spans.
var pushTracer push.FollowTracer

// followTracing hands the tracer provider of r's span, when r is traced,
// to pushTracer.
func followTracing(r *http.Request) {
	if span := trace.SpanFromContext(r.Context()); span.SpanContext().IsValid() {
		pushTracer.Follow(span.TracerProvider())
	}
}

package backend

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

// TraceParent returns the W3C traceparent of the span in ctx (the turn's
// span when the gateway traces, OPS-4), "" when there is none: backends
// hand it to their agents (the exec backend's TRACEPARENT variable, the
// turn request's traceparent field).
func TraceParent(ctx context.Context) string {
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c["traceparent"]
}

// InjectTrace writes the W3C trace context of ctx (traceparent,
// tracestate) into the headers of a request to an HTTP upstream.
func InjectTrace(ctx context.Context, h http.Header) {
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
}

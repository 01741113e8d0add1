package store

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// traceParent returns the W3C traceparent of the span in ctx (the turn
// that stores a state change), "" when ctx carries no valid span. Push
// jobs keep it so their delivery spans link to the turn (issue 28).
func traceParent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c["traceparent"]
}

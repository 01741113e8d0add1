package agent

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// tracerName names the instrumentation scope of the gateway's spans.
const tracerName = "github.com/caddy-a2a/caddy-a2a/agent"

// Span attribute keys of A2A operations and turns (OPS-4).
const (
	AttrMethod    = attribute.Key("a2a.method")
	AttrPrincipal = attribute.Key("a2a.principal")
	AttrTaskID    = attribute.Key("a2a.task.id")
	AttrContextID = attribute.Key("a2a.context.id")
	AttrTaskState = attribute.Key("a2a.task.state")
	AttrBackend   = attribute.Key("a2a.backend")
)

// turnTrace is what a turn keeps of the request that started it: the
// request's span (the parent of the turn's span) and its tracer provider.
// With no tracing on the request both are no-ops and cost nothing.
type turnTrace struct {
	parent trace.SpanContext
	tp     trace.TracerProvider
}

// traceOf captures the tracing of the request ctx for a turn it starts.
func traceOf(ctx context.Context) turnTrace {
	span := trace.SpanFromContext(ctx)
	return turnTrace{parent: span.SpanContext(), tp: span.TracerProvider()}
}

// start opens the turn's span "a2a.turn" under the request's span; ctx
// (the turn's own context, which outlives the request) then carries it,
// so the backends propagate it (W3C trace context) to their upstreams.
func (tt turnTrace) start(ctx context.Context, s *Service, owner, taskID, contextID string) (context.Context, trace.Span) {
	if !tt.parent.IsValid() {
		return ctx, trace.SpanFromContext(ctx) // no tracing: a no-op span
	}
	ctx = trace.ContextWithRemoteSpanContext(ctx, tt.parent)
	return tt.tp.Tracer(tracerName).Start(ctx, "a2a.turn", trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		AttrTaskID.String(taskID), AttrContextID.String(contextID),
		AttrBackend.String(s.cfg.BackendName), AttrPrincipal.String(s.principalOf(owner)),
	))
}

// endTurnSpan records the turn's final state on its span and ends it.
func endTurnSpan(span trace.Span, state a2a.TaskState) {
	span.SetAttributes(AttrTaskState.String(string(state)))
	if state == a2a.TaskStateFailed {
		span.SetStatus(codes.Error, "turn failed")
	}
	span.End()
}

package push

import (
	"context"
	"net/url"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// tracerName names the instrumentation scope of the delivery spans.
const tracerName = "github.com/caddy-a2a/caddy-a2a/push"

// SpanName is the name of the span of one delivery attempt.
const SpanName = "a2a.push.deliver"

// Span attribute keys of a delivery attempt. The callback appears only as
// its host (AttrHost): never its user info, path, query or the token.
const (
	AttrTaskID     = attribute.Key("a2a.task.id")
	AttrConfigID   = attribute.Key("a2a.push.config.id")
	AttrDeliveryID = attribute.Key("a2a.push.delivery.id")
	AttrAttempt    = attribute.Key("a2a.push.attempt")
	AttrOutcome    = attribute.Key("a2a.push.outcome")
	AttrStatus     = attribute.Key("http.response.status_code")
	AttrHost       = attribute.Key("server.address")
)

// Attempt outcomes recorded in AttrOutcome.
const (
	OutcomeDelivered   = "delivered"
	OutcomeRetry       = "retry"
	OutcomeDead        = "dead"
	OutcomeInterrupted = "interrupted" // the gateway stopped mid-attempt; the job is tried again
)

// ParseTraceParent returns the span context of a W3C traceparent value,
// invalid when raw is empty or malformed.
func ParseTraceParent(raw string) trace.SpanContext {
	if raw == "" {
		return trace.SpanContext{}
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": raw})
	return trace.SpanContextFromContext(ctx)
}

// tracerOf returns tp, or a no-op provider when tp is nil.
func tracerOf(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return tp.Tracer(tracerName)
}

// startAttempt opens the span of one attempt of j (j.Attempts already
// counts it). The span is a new root linked to the turn that produced the
// job (j.TraceParent), not its child: the delivery runs later, maybe on
// another instance. Jobs stored without a trace parent get no link.
func startAttempt(ctx context.Context, tr trace.Tracer, j Job) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{
		trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(AttrTaskID.String(j.TaskID), AttrConfigID.String(j.ConfigID),
			AttrDeliveryID.String(j.ID), AttrAttempt.Int(j.Attempts), AttrHost.String(hostOf(j.URL))),
	}
	if sc := ParseTraceParent(j.TraceParent); sc.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
	}
	return tr.Start(ctx, SpanName, opts...)
}

// endAttempt records the attempt's HTTP status and outcome and ends span.
func endAttempt(span trace.Span, res Result, outcome string) {
	if res.Status != 0 {
		span.SetAttributes(AttrStatus.Int(res.Status))
	}
	span.SetAttributes(AttrOutcome.String(outcome))
	if outcome != OutcomeDelivered {
		span.SetStatus(codes.Error, res.Reason) // Reason holds no secrets (Result)
	}
	span.End()
}

// hostOf returns the host name of a callback URL, "" when it does not parse.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

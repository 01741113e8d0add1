package caddymodule

import (
	"net/http"
	"sync"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/caddy-a2a/caddy-a2a/agent"
)

// The request variables an a2a handler sets (AUTH-6), read as the
// placeholders {http.vars.a2a.method}, {http.vars.a2a.task_id} and
// {http.vars.a2a.context_id} by Caddy's log, header (deferred: `>Name`),
// matchers of later handlers and plugins. {http.vars.a2a.principal} is
// a2a_auth's (PrincipalVar).
const (
	MethodVar    = "a2a.method"
	TaskIDVar    = "a2a.task_id"
	ContextIDVar = "a2a.context_id"
)

// varsWriter sets the A2A request variables from info just before the
// response starts (so deferred header operations see them), and again when
// the handler returns (for access logs).
type varsWriter struct {
	*caddyhttp.ResponseWriterWrapper
	r    *http.Request
	info *agent.RequestInfo
	once sync.Once
}

// withRequestVars returns the writer and request through which an A2A call
// records its method, task and context as request variables.
func withRequestVars(w http.ResponseWriter, r *http.Request) (*varsWriter, *http.Request) {
	info := &agent.RequestInfo{}
	r = r.WithContext(agent.WithRequestInfo(r.Context(), info))
	return &varsWriter{ResponseWriterWrapper: &caddyhttp.ResponseWriterWrapper{ResponseWriter: w}, r: r, info: info}, r
}

// set copies what the call learned into the request variables.
func (w *varsWriter) set() {
	method, task, ctxID := w.info.Get()
	ctx := w.r.Context()
	for k, v := range map[string]string{MethodVar: method, TaskIDVar: task, ContextIDVar: ctxID} {
		if v != "" {
			caddyhttp.SetVar(ctx, k, v)
		}
	}
}

// WriteHeader sets the variables, then writes the header.
func (w *varsWriter) WriteHeader(code int) {
	w.once.Do(w.set)
	w.ResponseWriterWrapper.WriteHeader(code)
}

// Write sets the variables (first write), then writes.
func (w *varsWriter) Write(b []byte) (int, error) {
	w.once.Do(w.set)
	return w.ResponseWriterWrapper.Write(b)
}

// FlushError sets the variables (an SSE stream's first flush), then flushes.
func (w *varsWriter) FlushError() error {
	w.once.Do(w.set)
	return http.NewResponseController(w.ResponseWriterWrapper.ResponseWriter).Flush()
}

// done records what the call learned after the response started (a stream's
// task id, …) for the access log, and on the request's span when Caddy's
// tracing is on (OPS-4): a2a.method, a2a.principal, a2a.task.id,
// a2a.context.id, a2a.task.state.
func (w *varsWriter) done(principal string) {
	w.set()
	span := trace.SpanFromContext(w.r.Context())
	if !span.IsRecording() {
		return
	}
	method, task, ctxID := w.info.Get()
	if method == "" {
		return // not an A2A call (a download, a 404…)
	}
	attrs := []attribute.KeyValue{agent.AttrMethod.String(method)}
	if principal != "" {
		attrs = append(attrs, agent.AttrPrincipal.String(principal))
	}
	if task != "" {
		attrs = append(attrs, agent.AttrTaskID.String(task))
	}
	if ctxID != "" {
		attrs = append(attrs, agent.AttrContextID.String(ctxID))
	}
	if st := w.info.State(); st != "" {
		attrs = append(attrs, agent.AttrTaskState.String(st))
	}
	span.SetAttributes(attrs...)
	span.SetName("a2a." + method)
}

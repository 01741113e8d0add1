package agent

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// sseWriter writes Server-Sent Events, one JSON document per data line,
// flushing each event at once.
type sseWriter struct {
	mu sync.Mutex
	w  http.ResponseWriter
	rc *http.ResponseController
	// err is the first write error; later writes are skipped.
	err error
}

// startSSE sends the stream's headers and flushes them.
func startSSE(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Del("Content-Length")
	w.WriteHeader(http.StatusOK)
	s := &sseWriter{w: w, rc: http.NewResponseController(w)}
	s.flush()
	return s
}

func (s *sseWriter) flush() {
	if err := s.rc.Flush(); err != nil && s.err == nil {
		s.err = err
	}
}

// data writes one event whose data line is doc (a single-line JSON document).
func (s *sseWriter) data(doc []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	buf := make([]byte, 0, len(doc)+8)
	buf = append(buf, "data: "...)
	buf = append(buf, doc...)
	buf = append(buf, '\n', '\n')
	if _, err := s.w.Write(buf); err != nil {
		s.err = err
		return err
	}
	s.flush()
	return s.err
}

// keepAlive writes a comment every interval until ctx is done.
func (s *sseWriter) keepAlive(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.mu.Lock()
			if s.err == nil && ctx.Err() == nil {
				if _, err := s.w.Write([]byte(": keep-alive\n\n")); err != nil {
					s.err = err
				} else {
					s.flush()
				}
			}
			s.mu.Unlock()
		}
	}
}

// pump writes every event of st, each rendered by render, with keep-alive
// comments while idle, until the stream ends or the client goes away.
func (h *Handler) pump(ctx context.Context, sw *sseWriter, st Stream, render func(any) []byte) {
	defer st.Close()
	h.svc.hub.streams.Add(1)
	defer h.svc.hub.streams.Add(-1)
	kctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sw.keepAlive(kctx, h.svc.cfg.KeepAlive)
	}()
	// The writer must not be touched once the handler returns: stop the
	// keep-alive goroutine and wait for it first.
	defer func() { stop(); <-done }()
	for {
		ev, ok := st.Next(ctx)
		if !ok {
			return
		}
		if err := sw.data(render(ev)); err != nil {
			return
		}
	}
}

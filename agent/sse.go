package agent

import (
	"context"
	"net/http"
)

// sseWriter writes Server-Sent Events, one JSON document per data line,
// flushing each event at once.
type sseWriter struct {
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

// comment writes a keep-alive comment line.
func (s *sseWriter) comment() error {
	if s.err != nil {
		return s.err
	}
	if _, err := s.w.Write([]byte(": keep-alive\n\n")); err != nil {
		s.err = err
		return err
	}
	s.flush()
	return s.err
}

// pump writes every event of st, each rendered by render, with keep-alive
// comments while idle, until the stream ends or the client goes away.
func (h *Handler) pump(ctx context.Context, sw *sseWriter, st Stream, render func(any) []byte) {
	defer st.Close()
	defer h.svc.StreamOpened()()
	every := h.tc.KeepAlive
	for {
		// Wait for the next event at most one keep-alive interval; on an
		// idle stream send a comment instead (no goroutine per stream).
		wctx, cancel := context.WithTimeout(ctx, every)
		ev, ok := st.Next(wctx)
		idle := !ok && ctx.Err() == nil && wctx.Err() != nil
		cancel()
		switch {
		case idle:
			if err := sw.comment(); err != nil {
				return
			}
		case !ok:
			return
		default:
			if err := sw.data(render(ev)); err != nil {
				return
			}
		}
	}
}

package backends

import (
	"context"
	"encoding/json"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/backend"
)

// survives reports whether a per-context process is still usable.
func (e *Exec) survives(p *proc) bool {
	select {
	case <-p.gone:
		return false
	case <-p.exited:
		e.terminate(p)
		return false
	default:
		return true
	}
}

// grace period (for writing it, and for the end event); then (or per turn at
// once) the process group is terminated.
func (e *Exec) cancel(p *proc, taskID string, perContext bool) {
	if perContext {
		line, _ := json.Marshal(map[string]any{"v": backend.EventVersion, "type": "cancel", "taskId": taskID})
		graceEnd := time.Now().Add(e.grace())
		if err := p.writeLine(context.Background(), append(line, '\n'), graceEnd); err == nil {
			t := time.NewTimer(time.Until(graceEnd))
			defer t.Stop()
			for {
				select {
				case m := <-p.lines:
					if m.err != nil {
						e.terminate(p)
						return
					}
					if ev, ok, err := decodeEvent(m.b); err == nil && ok && ev.Type == backend.EventEnd {
						return // the process answered; it stays for the next turn
					} else if err != nil {
						e.terminate(p)
						return
					}
				case <-t.C:
					e.terminate(p)
					return
				}
			}
		}
	}
	e.terminate(p)
}

// CloseSession implements backend.SessionCloser: the context's process gets
// EOF on stdin, then SIGTERM and SIGKILL after the grace periods.
func (e *Exec) CloseSession(s *backend.Session) {
	p, ok := s.Value.(*proc)
	if !ok {
		return
	}
	s.Value = nil
	_ = p.stdin.Close()
	e.awaitExit(p)
}

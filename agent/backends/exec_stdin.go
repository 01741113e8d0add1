package backends

import (
	"context"
	"time"
)

// writeLine writes b to the program's stdin. It gives up when ctx ends or
// at deadline (zero: no deadline), so a program that stops reading its input
// cannot pin the caller; the caller then terminates the process (a partial
// line leaves the stream unusable).
func (p *proc) writeLine(ctx context.Context, b []byte, deadline time.Time) error {
	if err := p.stdin.SetWriteDeadline(deadline); err != nil {
		return err
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		// A deadline in the past wakes a blocked Write at once.
		_ = p.stdin.SetWriteDeadline(time.Unix(1, 0))
		close(fired)
	})
	_, err := p.stdin.Write(b)
	if !stop() {
		<-fired // do not let the past deadline outlive this call
	}
	if err == nil {
		_ = p.stdin.SetWriteDeadline(time.Time{})
	}
	return err
}

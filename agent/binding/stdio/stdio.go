// Package stdio is the stdio carrier of an agent.Service (XPORT-4): JSON-RPC
// 2.0 requests as NDJSON, one per line on an io.Reader (stdin), answered one
// JSON-RPC response per line on an io.Writer (stdout). It runs every line
// through the carrier-neutral jsonrpc.Dispatcher, so methods, errors,
// version rules and metrics are those of the HTTP JSON-RPC binding; the
// events of a stream are responses carrying the request's id, ended by
// {"jsonrpc":"2.0","id":…,"final":true}.
//
// The carrier has no authentication: every request runs as one principal
// the embedding process chose (Options.Call). It trusts its parent process,
// which owns the pipes.
package stdio

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc"
)

// Defaults of Options.
const (
	// DefaultMaxLineBytes is the default of Options.MaxLineBytes (the
	// HTTP bindings' default body limit).
	DefaultMaxLineBytes = 32 << 20
	// DefaultMaxInFlight is the default of Options.MaxInFlight.
	DefaultMaxInFlight = 1024
)

// Options tune Serve. Zero values take the documented defaults.
type Options struct {
	// Call is the call of every request: its principal (the local user or
	// a configured one), version ("1.0" when empty: there are no headers),
	// base URL and extensions.
	Call agent.Call
	// MaxLineBytes bounds one request line, without its line end; a longer
	// line is answered with an Invalid Request error and skipped. Default
	// DefaultMaxLineBytes.
	MaxLineBytes int64
	// MaxInFlight bounds the requests running at once (open streams
	// included); while that many run, reading pauses until one ends
	// (backpressure: a file piped in is worked through, not refused).
	// Default DefaultMaxInFlight.
	MaxInFlight int
	// Grace is how long, once the input ends (EOF) or ctx is done, the
	// requests already read may run before Shutdown is called, like an
	// HTTP server's grace period. 0 waits for them without a bound.
	Grace time.Duration
	// Shutdown stops the service when the grace period is over with
	// requests still running: it makes running turns finish within the
	// shutdown timeout and fail after it (agent.Hub.Close), which ends
	// their streams and unary calls. Serve then waits for those answers; a
	// request still running once Shutdown has returned has its context
	// canceled. Nil: the contexts are canceled when the grace is over.
	Shutdown func()
	// Tenants, when set, serves a request whose params name the tenant of
	// another agent of the site with that agent (TURN-10, see
	// jsonrpc.Tenants). Nil: every request is served by the service.
	Tenants jsonrpc.Tenants
	// Logger receives the carrier's own messages (never written to the
	// output). Default: none.
	Logger *zap.Logger
}

// withDefaults returns o with every zero field set to its default.
func (o Options) withDefaults() Options {
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	o.Call.Binding = agent.BindingStdio
	if o.Call.Version == "" {
		o.Call.Version = "1.0"
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	return o
}

// Serve reads NDJSON requests from in and writes their answers to out until
// in ends (EOF) or ctx is done, then lets the requests already read finish
// (Options.Grace, then Options.Shutdown) and returns: nil after EOF or ctx,
// the read or write error otherwise. Requests run concurrently; their
// answers are written one whole line at a time, in the order they are
// ready. Blank lines are skipped.
//
// Serve does not wait for a Read of in that is still blocked when ctx is
// done; the caller closes in (stdin goes at exit).
func Serve(ctx context.Context, d *jsonrpc.Dispatcher, in io.Reader, out io.Writer, opts Options) error {
	s := newSession(d, out, opts.withDefaults())
	defer s.cancel()
	readErr := s.readAll(ctx, in)
	s.drain()
	if werr := s.w.failure(); werr != nil {
		return werr
	}
	return readErr
}

// session is one Serve run.
type session struct {
	d      *jsonrpc.Dispatcher
	opts   Options
	w      *lineWriter
	ctx    context.Context // the requests' context, canceled by the hard stop
	cancel context.CancelFunc
	slots  chan struct{}
	wg     sync.WaitGroup
}

func newSession(d *jsonrpc.Dispatcher, out io.Writer, opts Options) *session {
	ctx, cancel := context.WithCancel(context.Background())
	if opts.Tenants != nil {
		d = d.WithTenants(opts.Tenants) // TURN-10
	}
	s := &session{
		d: d, opts: opts,
		ctx: ctx, cancel: cancel, slots: make(chan struct{}, opts.MaxInFlight),
	}
	s.w = &lineWriter{w: out, failed: make(chan struct{})}
	return s
}

// line is one read line, or the end of the input.
type line struct {
	b       []byte
	tooLong bool
	err     error // io.EOF at the end
}

// readAll runs every line of in until EOF, a read or write failure, or ctx.
func (s *session) readAll(ctx context.Context, in io.Reader) error {
	lines := make(chan line)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		br := bufio.NewReaderSize(in, 64<<10)
		for {
			b, tooLong, err := readLine(br, s.opts.MaxLineBytes)
			select {
			case lines <- line{b: b, tooLong: tooLong, err: err}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.w.failed:
			return nil
		case l := <-lines:
			if l.tooLong {
				s.w.write(s.d.Refuse(s.ctx, s.opts.Call, nil, "", a2a.NewError(a2a.CodeInvalidRequest, "Invalid Request: the line exceeds %d bytes", s.opts.MaxLineBytes)).Response)
			} else if len(l.b) > 0 && !s.run(ctx, l.b) {
				return nil
			}
			if errors.Is(l.err, io.EOF) {
				return nil
			}
			if l.err != nil {
				return l.err
			}
		}
	}
}

// run starts one request once fewer than MaxInFlight run; false when ctx
// ended or the output failed while it waited.
func (s *session) run(ctx context.Context, msg []byte) bool {
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return false
	case <-s.w.failed:
		return false
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() { <-s.slots }()
		out := s.d.Handle(s.ctx, s.opts.Call, msg)
		if out.Stream != nil {
			s.pump(out)
			return
		}
		if out.Response != nil {
			s.w.write(out.Response)
		}
	}()
	return true
}

// pump writes every event of a stream, then its final line, through the
// dispatcher's Pump (which closes the stream before the final line). The
// stream is closed when the output fails (nobody reads: like a client
// gone away), without a final line; at a hard stop it still ends with one.
func (s *session) pump(out jsonrpc.Outcome) {
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	go func() {
		select {
		case <-s.w.failed:
			cancel()
		case <-ctx.Done():
		}
	}()
	_ = s.d.Pump(ctx, out, jsonrpc.Carrier{
		Send: s.w.send,
		Final: func(id json.RawMessage, _ bool) error {
			return s.w.send(jsonrpc.EndFrame(id))
		},
	})
}

// drain waits for the running requests: Grace, then Shutdown, then the
// hard stop (their contexts canceled).
func (s *session) drain() {
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	var grace <-chan time.Time
	if s.opts.Grace > 0 {
		t := time.NewTimer(s.opts.Grace)
		defer t.Stop()
		grace = t.C
	}
	select {
	case <-done:
		return
	case <-grace:
	}
	s.opts.Logger.Info("stdio: grace period over with requests running; stopping the service")
	if s.opts.Shutdown != nil {
		stopped := make(chan struct{})
		go func() { s.opts.Shutdown(); close(stopped) }()
		select {
		case <-done:
			return
		case <-stopped:
		}
	}
	s.cancel()
	<-done
}

// errOutputFailed is what a write after the output failed returns.
var errOutputFailed = errors.New("stdio: the output failed")

// lineWriter writes whole lines to one output, one at a time; after a
// failed write it writes nothing more.
type lineWriter struct {
	mu     sync.Mutex
	w      io.Writer
	err    error
	failed chan struct{} // closed on the first failure
}

// write writes b and a newline; false once the output has failed.
func (lw *lineWriter) write(b []byte) bool {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.err != nil {
		return false
	}
	buf := make([]byte, 0, len(b)+1)
	buf = append(append(buf, b...), '\n')
	if _, err := lw.w.Write(buf); err != nil {
		lw.err = err
		close(lw.failed)
		return false
	}
	return true
}

// send writes b and a newline; errOutputFailed once the output has
// failed.
func (lw *lineWriter) send(b []byte) error {
	if !lw.write(b) {
		return errOutputFailed
	}
	return nil
}

// failure returns the write error, if any.
func (lw *lineWriter) failure() error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.err
}

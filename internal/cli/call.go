package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/client"
	"github.com/caddy-a2a/caddy-a2a/internal/cardfetch"
)

// Stdio is the terminal side of a command.
type Stdio struct {
	// In, Out and Err are stdin, stdout and stderr.
	In       io.Reader
	Out, Err io.Writer
	// InTTY, OutTTY and ErrTTY say which of them are terminals.
	InTTY, OutTTY, ErrTTY bool
	// Color enables ANSI styling on a terminal.
	Color bool
	// Interrupt delivers Ctrl-C (may be nil).
	Interrupt <-chan os.Signal
}

// Common are the options shared by every network command.
type Common struct {
	// Target is the agent URL (base URL or card URL).
	Target string
	// Options configure the client.
	client.Options
	// JSON selects machine output (NDJSON for streams, one JSON line otherwise).
	JSON bool
	// Timeout bounds the whole command (0: none).
	Timeout time.Duration
	// Trust names the keys the card signature must verify with (none: the
	// signature is not checked).
	Trust client.Trust
	// Namespace is the gateway metadata namespace (default iac_code).
	Namespace string
	// ShowSecrets prints push notification tokens and authentication
	// credentials as the server returned them; by default they are masked
	// (SecretMask).
	ShowSecrets bool
}

func (c Common) context(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.Timeout > 0 {
		return context.WithTimeout(ctx, c.Timeout)
	}
	return context.WithCancel(ctx)
}

// connect discovers the card, verifies it when keys are given and selects
// the interface.
func (c Common) connect(ctx context.Context) (*client.Client, error) {
	card, raw, err := client.FetchCard(ctx, c.Target, c.Options)
	if err != nil {
		return nil, err
	}
	if !c.Trust.Empty() {
		if err := client.VerifyCard(ctx, raw, c.Trust); err != nil {
			return nil, err
		}
	}
	return client.New(card, raw, c.Options)
}

func (c Common) mode(io Stdio) Mode {
	switch {
	case c.JSON:
		return ModeJSON
	case io.OutTTY && io.ErrTTY:
		return ModeTTY
	}
	return ModePlain
}

// CallOptions are the options of `caddy a2a call`.
type CallOptions struct {
	Common
	// Message is the user message; Text "" with ReadStdin reads it from In.
	Message client.MessageInput
	// ReadStdin reads the message text from stdin when Text is empty.
	ReadStdin bool
	// NoStream uses SendMessage instead of SendStreamingMessage.
	NoStream bool
	// CancelOnInterrupt cancels the task on Ctrl-C without asking.
	CancelOnInterrupt bool
	// HistoryLength is sent in the configuration when >= 0.
	HistoryLength int
}

// Call sends a message and renders the answer (CLI-1). The returned error
// carries the exit code (CLI-2); nil means success, including input-required.
func Call(ctx context.Context, o CallOptions, sio Stdio) error {
	if o.Message.Text == "" && o.ReadStdin {
		if sio.InTTY {
			if len(o.Message.Files) == 0 && o.Message.Data == "" {
				return usagef("no message: give MESSAGE as an argument or pipe it on stdin")
			}
		} else if sio.In != nil {
			t, err := client.ReadMessage(sio.In)
			if err != nil {
				return err
			}
			o.Message.Text = t
		}
	}
	if o.Message.Namespace == "" {
		o.Message.Namespace = o.Namespace
	}
	msg, err := client.BuildMessage(o.Message)
	if err != nil {
		return err
	}
	ctx, cancel := o.context(ctx)
	defer cancel()
	cl, err := o.connect(ctx)
	if err != nil {
		return err
	}
	req := &a2a.SendMessageRequest{Message: msg}
	if o.HistoryLength >= 0 {
		h := int32(o.HistoryLength)
		req.Configuration = &a2a.SendMessageConfiguration{HistoryLength: &h}
	}
	r := NewRenderer(sio.Out, sio.Err, o.mode(sio), o.Namespace, sio.Color)
	if o.NoStream || !cl.Streaming() {
		r.Start()
		resp, err := cl.SendMessage(ctx, req)
		if err != nil {
			r.Stop()
			return err
		}
		ev := a2a.StreamResponse{Task: resp.Task, Message: resp.Message}
		if err := r.Event(ev); err != nil {
			r.Stop()
			return transportErr("writing output", err)
		}
		if resp.Task != nil && r.mode != ModeJSON && r.streamed[resp.Task.ID] == "" && len(resp.Task.Artifacts) == 0 {
			// No status text: show the agent's last message from the history.
			for i := len(resp.Task.History) - 1; i >= 0; i-- {
				if h := resp.Task.History[i]; h.Role == a2a.RoleAgent {
					r.mu.Lock()
					r.text(textOf(h.Parts))
					r.mu.Unlock()
					break
				}
			}
		}
		r.Finish()
		return outcome(r, o.Target)
	}
	return stream(ctx, cl, o.Common, r, sio, o.CancelOnInterrupt, func(sctx context.Context, fn func(a2a.StreamResponse) error) error {
		return cl.SendStreamingMessage(sctx, req, fn)
	})
}

// stream runs a streaming operation, handling Ctrl-C.
func stream(ctx context.Context, cl *client.Client, o Common, r *Renderer, sio Stdio, cancelOnInterrupt bool, run func(context.Context, func(a2a.StreamResponse) error) error) error {
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	interrupted := make(chan struct{})
	finished := make(chan struct{})
	defer close(finished)
	if sio.Interrupt != nil {
		go func() {
			select {
			case <-sio.Interrupt:
				close(interrupted)
				stop()
			case <-finished:
			}
		}()
	}
	r.Start()
	err := run(sctx, r.Event)
	select {
	case <-interrupted:
		r.Finish()
		return onInterrupt(ctx, cl, o, r, sio, cancelOnInterrupt)
	default:
	}
	if err != nil {
		r.Stop()
		if errors.Is(err, io.ErrShortWrite) {
			return transportErr("writing output", err)
		}
		return err
	}
	r.Finish()
	if r.TaskID != "" && !r.State.Terminal() && !r.State.Interrupted() {
		return &client.Error{Kind: client.KindTransport, Msg: fmt.Sprintf("the stream ended before task %s finished (state %s); follow it with: caddy a2a task subscribe %s %s",
			r.TaskID, StateName(r.State), cardfetch.RedactURL(o.Target), r.TaskID)}
	}
	return outcome(r, o.Target)
}

// onInterrupt cancels the task when asked to (flag or TTY prompt).
func onInterrupt(ctx context.Context, cl *client.Client, o Common, r *Renderer, sio Stdio, cancelOnInterrupt bool) error {
	id := r.TaskID
	if id == "" || r.State.Terminal() {
		return &client.Error{Kind: client.KindInterrupted, Msg: "interrupted"}
	}
	doCancel := cancelOnInterrupt
	if !doCancel && sio.InTTY && sio.ErrTTY && sio.In != nil {
		fmt.Fprintf(sio.Err, "Cancel task %s on the agent? [y/N] ", id)
		answer := make(chan string, 1)
		go func() {
			line, _ := bufio.NewReader(sio.In).ReadString('\n')
			answer <- strings.TrimSpace(strings.ToLower(line))
		}()
		select {
		case a := <-answer:
			doCancel = a == "y" || a == "yes"
		case <-sio.Interrupt:
			fmt.Fprintln(sio.Err)
		case <-time.After(60 * time.Second):
			fmt.Fprintln(sio.Err)
		}
	}
	if !doCancel {
		return &client.Error{Kind: client.KindInterrupted, Msg: fmt.Sprintf("interrupted; task %s keeps running (follow it with: caddy a2a task subscribe %s %s)", id, cardfetch.RedactURL(o.Target), id)}
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	t, err := cl.CancelTask(cctx, id)
	if err != nil {
		return &client.Error{Kind: client.KindInterrupted, Msg: "interrupted; canceling task " + id + " failed", Err: err}
	}
	return &client.Error{Kind: client.KindTask, Msg: fmt.Sprintf("interrupted; task %s is %s", id, StateName(t.Status.State))}
}

// outcome maps the final state onto the exit code.
func outcome(r *Renderer, target string) error {
	switch r.State {
	case a2a.TaskStateFailed, a2a.TaskStateCanceled, a2a.TaskStateRejected:
		msg := fmt.Sprintf("task %s %s", r.TaskID, StateName(r.State))
		if t := r.LastStatusText(); t != "" && r.mode == ModeJSON {
			msg += ": " + shortLine(t, 200)
		}
		return &client.Error{Kind: client.KindTask, Msg: msg}
	}
	return nil
}

func shortLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// transportErr is a transport failure of the command (exit 3, CLI-2).
func transportErr(msg string, err error) error {
	return &client.Error{Kind: client.KindTransport, Msg: msg, Err: err}
}

// protocolf is a protocol failure of the command (exit 3, CLI-2).
func protocolf(format string, args ...any) error {
	return &client.Error{Kind: client.KindProtocol, Msg: fmt.Sprintf(format, args...)}
}

package backends

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/internal/procsup"
)

// proc is one running program.
type proc struct {
	cmd    *exec.Cmd
	pgid   int
	tree   *procsup.Tree // the supervisor's lifeline (OPS-7); nil without one
	stdin  *os.File      // pollable pipe: writes honour deadlines (writeLine)
	lines  chan lineMsg
	exited chan struct{} // closed once the process is reaped
	gone   chan struct{} // closed when the proc is discarded (stops readers)
	cwd    string
	once   sync.Once
}

type lineMsg struct {
	b   []byte
	err error
}

// PGID returns the process group of the session's process, or 0. For tests
// and diagnostics.
func PGID(s *backend.Session) int {
	if s == nil {
		return 0
	}
	if p, ok := s.Value.(*proc); ok {
		return p.pgid
	}
	return 0
}

// start starts the agent process in cwd; traceparent, when set, is the
// W3C trace context of the turn that starts it (TRACEPARENT, OPS-4; a
// per_context process gets later turns' in the turn request instead).
func (e *Exec) start(cwd, traceparent string) (*proc, error) {
	cmd := exec.Command(e.Argv[0], e.Argv[1:]...)
	cmd.Dir = cwd
	cmd.Env = e.environ()
	if traceparent != "" {
		cmd.Env = append(cmd.Env, "TRACEPARENT="+traceparent)
	}
	cmd.SysProcAttr = sysProcAttr()
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("exec: creating a pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("exec: creating a pipe: %w", err)
	}
	// stdin is our own pipe (not cmd.StdinPipe) so that writes to a program
	// that stops reading can be bounded with a write deadline.
	inR, stdin, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		return nil, fmt.Errorf("exec: creating a pipe: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	// Under the supervisor the whole process tree dies with the gateway
	// (OPS-7); where there is none, the program runs directly.
	tree, err := procsup.Wrap(cmd)
	if err == nil {
		err = startProcess(cmd)
		tree.Started()
	}
	if err != nil {
		tree.Kill()
		inR.Close()
		stdin.Close()
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		// The error names the program, not the workspace.
		return nil, fmt.Errorf("exec: starting %s failed", e.Argv[0])
	}
	inR.Close()
	outW.Close()
	errW.Close()
	p := &proc{cmd: cmd, pgid: cmd.Process.Pid, tree: tree, stdin: stdin, lines: make(chan lineMsg), exited: make(chan struct{}), gone: make(chan struct{}), cwd: cwd}
	go func() {
		err := cmd.Wait()
		// Reap done; take down anything the program left in its group.
		tree.Kill()
		signalGroup(p.pgid, syscall.SIGKILL)
		if err != nil {
			e.logger().Debug("agent process exited", zap.Int("pid", p.pgid), zap.String("status", err.Error()))
		}
		close(p.exited)
	}()
	go e.readStdout(p, outR)
	go e.logStderr(p, errR)
	return p, nil
}

func (e *Exec) readStdout(p *proc, r *os.File) {
	defer r.Close()
	lr := newLineReader(r, e.MaxLineBytes, 1<<62)
	for {
		b, err := lr.next()
		select {
		case p.lines <- lineMsg{b: b, err: err}:
		case <-p.gone:
			return
		}
		if err != nil {
			return
		}
	}
}

func (e *Exec) logStderr(p *proc, r *os.File) {
	defer r.Close()
	max := e.MaxStderrBytes
	if max <= 0 {
		max = 64 << 10
	}
	lr := newLineReader(r, 4<<10, 1<<62)
	logged := 0
	log := e.logger()
	for {
		b, err := lr.next()
		if errors.Is(err, errLineTooLong) {
			continue // keep draining
		}
		if err != nil {
			return
		}
		if logged < max {
			logged += len(b)
			if ce := log.Check(zap.DebugLevel, "agent stderr"); ce != nil {
				ce.Write(zap.Int("pid", p.pgid), zap.ByteString("line", b))
			}
		}
	}
}

// awaitExit gives the process the grace period to exit on its own, then
// terminates it (terminate: SIGTERM, SIGKILL after another grace period);
// it returns once the process has exited.
func (e *Exec) awaitExit(p *proc) {
	t := time.NewTimer(e.grace())
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
	}
	e.terminate(p)
}

// terminate stops the process group: SIGTERM, then SIGKILL after the grace
// period; it returns once the process is reaped.
func (e *Exec) terminate(p *proc) {
	p.once.Do(func() { close(p.gone) })
	_ = p.stdin.Close()
	select {
	case <-p.exited:
		return
	default:
	}
	signalGroup(p.pgid, syscall.SIGTERM)
	t := time.NewTimer(e.grace())
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		p.killTree()
	}
}

// killTree kills the process tree at once: the supervisor kills every
// process of it, including those that left the group (OPS-7); should it
// not exit within a second, the group gets SIGKILL.
func (p *proc) killTree() {
	p.tree.Kill()
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		signalGroup(p.pgid, syscall.SIGKILL)
		<-p.exited
	}
}

//go:build unix

package procsup

import (
	"errors"
	"os"
	"os/exec"
	"sync"
)

// Tree is the handle on one supervised process tree: the write end of the
// supervisor's lifeline. The gateway never writes to it; closing it (Kill)
// or the gateway's death, however it dies, makes the supervisor kill the
// whole tree. A nil *Tree is valid and does nothing.
type Tree struct {
	r, w *os.File
	once sync.Once
}

// Wrap rewrites cmd (built by exec.Command, not started) to run its
// program under the supervisor: a re-exec of the running binary that
// leads the process group, runs the program in it and kills the whole
// tree when the program exits, when Tree.Kill is called or when this
// process dies. cmd.Dir, cmd.Env (nil: this process's environment), the
// standard streams and cmd.SysProcAttr (which must ask for a new process
// group) apply to the supervisor and through it to the program.
// cmd.ExtraFiles must be empty. Call Started once cmd.Start returned.
func Wrap(cmd *exec.Cmd) (*Tree, error) {
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	if len(cmd.ExtraFiles) != 0 {
		return nil, errors.New("procsup: extra files are not supported")
	}
	if cmd.SysProcAttr == nil || !cmd.SysProcAttr.Setpgid {
		return nil, errors.New("procsup: the supervisor must lead a new process group")
	}
	self, err := selfExe()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe() // close-on-exec: no other child inherits w
	if err != nil {
		return nil, err
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	// Fd 3 is the first of ExtraFiles in the child.
	cmd.Env = append(append([]string(nil), env...), EnvVar+"=3")
	cmd.Args = append([]string{Name, cmd.Path}, cmd.Args...)
	cmd.Path = self
	cmd.ExtraFiles = []*os.File{r}
	return &Tree{r: r, w: w}, nil
}

// Started closes this process's copy of the lifeline's read end; call it
// after cmd.Start, whether it succeeded or not.
func (t *Tree) Started() {
	if t != nil && t.r != nil {
		_ = t.r.Close()
	}
}

// Kill makes the supervisor kill the whole tree, itself included; it
// returns at once (wait for the command to learn when it is done). Safe
// to call twice.
func (t *Tree) Kill() {
	if t == nil {
		return
	}
	t.once.Do(func() { _ = t.w.Close() })
}

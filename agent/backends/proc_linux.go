//go:build linux

package backends

import (
	"os/exec"
	"syscall"
)

// sysProcAttr puts the agent's supervisor (internal/procsup) in its own
// process group, which the agent program and everything it forks join, so
// that terminate reaches all of them. The whole tree dies with the gateway
// even on kill -9 or the OOM killer (OPS-7): the supervisor sees its
// lifeline to the gateway close and kills the group and, as a child
// subreaper, every descendant that left it. No parent-death signal on the
// supervisor: it must outlive the gateway for that moment.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// startProcess starts cmd.
func startProcess(cmd *exec.Cmd) error { return cmd.Start() }

//go:build unix && !linux

package backends

import (
	"os/exec"
	"syscall"
)

// sysProcAttr puts the agent's supervisor (internal/procsup) in its own
// process group, which the agent program joins. There is no subreaper
// outside Linux: after a kill -9 of the gateway the supervisor kills the
// group, but processes that left it (setsid) survive.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func startProcess(cmd *exec.Cmd) error { return cmd.Start() }

//go:build unix && !linux

package backends

import (
	"os/exec"
	"syscall"
)

// sysProcAttr puts the agent program in its own process group. There is
// no parent-death signal outside Linux: after a kill -9 of the gateway the
// program sees its stdin close and should exit then.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func startProcess(cmd *exec.Cmd) error { return cmd.Start() }

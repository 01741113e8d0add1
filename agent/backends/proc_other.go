//go:build !unix

package backends

import (
	"os"
	"os/exec"
	"syscall"
)

// sysProcAttr: no process groups here; only the program itself is
// stopped.
func sysProcAttr() *syscall.SysProcAttr { return nil }

func startProcess(cmd *exec.Cmd) error { return cmd.Start() }

// signalGroup kills the process pid (there is no graceful signal: SIGTERM
// kills too).
func signalGroup(pid int, _ syscall.Signal) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

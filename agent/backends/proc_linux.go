//go:build linux

package backends

import (
	"os/exec"
	"runtime"
	"syscall"
)

// sysProcAttr puts the agent program in its own process group (so that
// terminate reaches everything it started) and asks the kernel to SIGKILL
// it when the gateway dies, even on kill -9 or the OOM killer (OPS-7).
//
// The parent-death signal covers the program itself, not the processes it
// forks: those are in its process group, which the gateway kills when the
// program exits or is terminated, but after a kill -9 of the gateway they
// are orphaned. Programs that fork long-lived children should exec into
// them or stop them when their own stdin closes.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// startProcess starts cmd on a locked OS thread: the parent-death signal
// fires when the thread that forked the child exits, not the process, and
// a thread locked by another goroutine could exit with it. Locking for the
// duration of Start keeps the fork on this goroutine's thread, which goes
// back to the runtime's pool afterwards (the runtime only ends threads
// whose goroutine exits while locked).
func startProcess(cmd *exec.Cmd) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return cmd.Start()
}

//go:build unix

package procsup

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func init() {
	if v, ok := os.LookupEnv(EnvVar); ok {
		os.Exit(supervise(v, os.Args))
	}
}

// supervise is the supervisor's main: args are [Name, path, argv...]. It
// returns the program's exit status (128+signal when a signal ended it),
// or 127 when it could not be started.
func supervise(fdValue string, args []string) int {
	fd, err := strconv.Atoi(fdValue)
	if err != nil || fd < 3 || len(args) < 3 {
		os.Stderr.WriteString(EnvVar + " is set: this process would be an exec agent supervisor; unset it\n")
		return 127
	}
	syscall.CloseOnExec(fd) // the program must not hold the lifeline
	life := os.NewFile(uintptr(fd), "lifeline")
	becomeSubreaper()
	// The gateway signals the whole group (SIGTERM first): the program
	// gets it directly; the supervisor stays to collect what remains.
	// Caught, not ignored: an ignored signal stays ignored in the program.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)
	cmd := exec.Command(args[1])
	cmd.Args = args[2:]
	cmd.Env = withoutSelf(os.Environ())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = programAttr()
	// Registered before the start, so that no exit goes unnoticed.
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	if err := startLocked(cmd); err != nil {
		return 127
	}
	// Only the program holds the gateway's pipes now, so the gateway sees
	// end of output when the program (and what it forked) closes them.
	_ = os.Stdin.Close()
	_ = os.Stdout.Close()
	_ = os.Stderr.Close()
	gone := make(chan struct{})
	go func() {
		var b [1]byte
		// Returns once the gateway closed its end (Tree.Kill) or died.
		_, _ = life.Read(b[:])
		close(gone)
	}()
	exited := make(chan int, 1)
	go reapUntil(cmd.Process.Pid, chld, exited)
	select {
	case code := <-exited:
		killTree(false)
		return code
	case <-gone:
		killTree(true)
		return 137
	}
}

// startLocked starts cmd from a locked OS thread: the program's
// parent-death signal is tied to the thread that forked it.
func startLocked(cmd *exec.Cmd) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return cmd.Start()
}

// reapUntil reaps every child as it exits — the program and, as a
// subreaper, the orphans re-parented here, which would otherwise stay
// zombies for the life of a long-running program — until the program
// exits; it then sends the program's exit status. The program is reaped
// here, not by exec.Cmd.Wait, which would race with reaping the others.
func reapUntil(pid int, chld <-chan os.Signal, exited chan<- int) {
	tick := time.NewTicker(time.Second) // signals coalesce; poll as well
	defer tick.Stop()
	for {
		for {
			var ws syscall.WaitStatus
			p, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if p <= 0 || err != nil {
				break
			}
			if p == pid {
				exited <- exitCode(ws)
				return
			}
		}
		select {
		case <-chld:
		case <-tick.C:
		}
	}
}

// exitCode maps a wait status to an exit status (128+N for signal N).
func exitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

func withoutSelf(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, EnvVar+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// killTree kills what the program left: its process group and, where the
// platform can tell (Linux), every descendant that left the group. With
// self, the supervisor's own group kill ends the supervisor as well.
func killTree(self bool) {
	if syscall.Getpgrp() != os.Getpid() {
		// Not a group leader (the caller did not ask for a new group):
		// the group is someone else's, leave it alone.
		return
	}
	killDescendants()
	if self {
		_ = syscall.Kill(0, syscall.SIGKILL) // the whole group, this process included
	}
}

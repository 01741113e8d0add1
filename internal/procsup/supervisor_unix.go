//go:build unix

package procsup

import (
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
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
	go func() { exited <- waitStatus(cmd) }()
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

// waitStatus reaps cmd and maps its end to an exit status.
func waitStatus(cmd *exec.Cmd) int {
	_ = cmd.Wait()
	st := cmd.ProcessState
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
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

package backends

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const pdeathHelperEnv = "A2A_TEST_PDEATH_HELPER"

// TestExecPdeathHelper is the "gateway" of the kill -9 tests: it starts an
// agent process the way the exec backend does (the program is the
// helper env's value, run by sh -c), prints its pid and waits to be
// killed.
func TestExecPdeathHelper(t *testing.T) {
	script := os.Getenv(pdeathHelperEnv)
	if script == "" {
		t.Skip("helper process only")
	}
	e := &Exec{Argv: []string{"sh", "-c", script}}
	p, err := e.start(t.TempDir(), "")
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("pid", p.pgid)
	time.Sleep(time.Minute) // sleep: the helper process waits to be killed
	os.Exit(1)
}

// startPdeathHelper runs TestExecPdeathHelper with script and returns the
// helper and the agent's (supervisor's) pid.
func startPdeathHelper(t *testing.T, script string) (*exec.Cmd, int) {
	t.Helper()
	helper := exec.Command(os.Args[0], "-test.run=^TestExecPdeathHelper$", "-test.count=1")
	helper.Env = append(os.Environ(), pdeathHelperEnv+"="+script)
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = helper.Process.Kill(); _ = helper.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "pid ")))
	if err != nil || pid <= 1 {
		t.Fatalf("helper said %q (%v)", line, err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
	return helper, pid
}

// waitGone waits up to d for pid to be gone (a zombie counts as gone).
func waitGone(t *testing.T, pid int, d time.Duration, what string) {
	t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		// Orphans are re-parented and reaped by init (or a subreaper); a
		// zombie left unreaped counts as dead.
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(st), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %d still runs after %v: %s", what, pid, d, st)
		}
	}
}

// readPid waits up to 5s for a pid written to path.
func readPid(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && pid > 1 {
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", path)
		}
	}
}

// OPS-7: after kill -9 of the process that started it, the agent program
// is killed.
func TestExecChildDiesWithParent(t *testing.T) {
	helper, pid := startPdeathHelper(t, "exec sleep 100")
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("agent %d is not running: %v", pid, err)
	}
	_ = helper.Process.Signal(syscall.SIGKILL)
	_ = helper.Wait()
	waitGone(t, pid, 5*time.Second, "agent")
}

// OPS-7: the agent's own children die too after kill -9 of the gateway:
// one in the agent's process group and one that left it (setsid), which
// the supervisor holds as a child subreaper.
func TestExecGrandchildrenDieWithParent(t *testing.T) {
	dir := t.TempDir()
	inGroup, escaped := filepath.Join(dir, "g1"), filepath.Join(dir, "g2")
	script := fmt.Sprintf("sleep 300 & echo $! > %s; setsid sleep 300 & echo $! > %s; wait", inGroup, escaped)
	helper, _ := startPdeathHelper(t, script)
	g1, g2 := readPid(t, inGroup), readPid(t, escaped)
	_ = helper.Process.Signal(syscall.SIGKILL)
	_ = helper.Wait()
	waitGone(t, g1, 5*time.Second, "grandchild in the group")
	waitGone(t, g2, 5*time.Second, "grandchild that left the group")
}

// OPS-7: terminate (a cancel, a turn timeout, shutdown) kills the agent's
// children too, not only the agent.
func TestExecTerminateKillsGrandchildren(t *testing.T) {
	terminateTree(t, "%s wait", 0)
}

// terminateTree starts an agent whose script is pre (with %s) after two
// grandchildren — one in its group, one that left it with setsid — have
// written their pids, terminates it with grace, and checks all three die.
func terminateTree(t *testing.T, pre string, grace time.Duration) {
	t.Helper()
	dir := t.TempDir()
	inGroup, escaped := filepath.Join(dir, "g1"), filepath.Join(dir, "g2")
	children := fmt.Sprintf("sleep 300 & echo $! > %s; setsid sleep 300 & echo $! > %s;", inGroup, escaped)
	e := &Exec{Argv: []string{"sh", "-c", fmt.Sprintf(pre, children)}, GracePeriod: grace}
	p, err := e.start(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	g1, g2 := readPid(t, inGroup), readPid(t, escaped)
	e.terminate(p)
	waitGone(t, p.pgid, 5*time.Second, "agent")
	waitGone(t, g1, 5*time.Second, "grandchild in the group")
	waitGone(t, g2, 5*time.Second, "grandchild that left the group")
}

// OPS-7: the agent's exit status reaches the gateway through the
// supervisor.
func TestExecSupervisorKeepsExitStatus(t *testing.T) {
	e := &Exec{Argv: []string{"sh", "-c", "exit 7"}}
	p, err := e.start(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("agent did not exit")
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 7 {
		t.Fatalf("exit status %d, want 7", code)
	}
}

// OPS-7: a program that ignores SIGTERM is killed after the grace period
// with everything it started, including a child that left the group.
func TestExecKillEscalationKillsTree(t *testing.T) {
	terminateTree(t, "trap '' TERM; %s while :; do sleep 1; done", 200*time.Millisecond)
}

// OPS-7: orphans re-parented to the supervisor (it is a subreaper) are
// reaped as they exit, not left as zombies for the life of a long-running
// agent.
func TestExecSupervisorReapsOrphans(t *testing.T) {
	e := &Exec{Argv: []string{"sh", "-c", "for i in 1 2 3 4 5; do (sleep 0.05 &); done; exec sleep 300"}}
	p, err := e.start(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer e.terminate(p)
	sawOrphan := false
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		zombies, children := 0, 0
		ents, _ := os.ReadDir("/proc")
		for _, ent := range ents {
			st, err := os.ReadFile("/proc/" + ent.Name() + "/stat")
			if err != nil {
				continue
			}
			s := string(st)
			f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
			if len(f) > 2 && f[1] == strconv.Itoa(p.pgid) {
				children++
				if f[0] == "Z" {
					zombies++
				}
			}
		}
		if children > 1 {
			sawOrphan = true
		}
		if sawOrphan && children == 1 && zombies == 0 {
			return // only the program is left
		}
	}
	t.Fatalf("the supervisor %d still has zombie or orphan children after 3s (saw orphans: %v)", p.pgid, sawOrphan)
}

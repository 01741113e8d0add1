package backends

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const pdeathHelperEnv = "A2A_TEST_PDEATH_HELPER"

// TestExecPdeathHelper is the "gateway" of TestExecChildDiesWithParent: it
// starts an agent process the way the exec backend does, prints its pid and
// waits to be killed.
func TestExecPdeathHelper(t *testing.T) {
	if os.Getenv(pdeathHelperEnv) == "" {
		t.Skip("helper process only")
	}
	e := &Exec{Argv: []string{"sleep", "100"}}
	p, err := e.start(t.TempDir(), "")
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("pid", p.pgid)
	time.Sleep(time.Minute) // sleep: the helper process waits to be killed
	os.Exit(1)
}

// OPS-7: after kill -9 of the process that started it, the agent program
// is killed by the kernel (parent-death signal).
func TestExecChildDiesWithParent(t *testing.T) {
	helper := exec.Command(os.Args[0], "-test.run=^TestExecPdeathHelper$", "-test.count=1")
	helper.Env = append(os.Environ(), pdeathHelperEnv+"=1")
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = helper.Process.Kill(); _ = helper.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "pid ")))
	if err != nil || pid <= 1 {
		t.Fatalf("helper said %q (%v)", line, err)
	}
	defer func() { _ = syscall.Kill(pid, syscall.SIGKILL) }()
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("agent %d is not running: %v", pid, err)
	}
	_ = helper.Process.Signal(syscall.SIGKILL)
	_ = helper.Wait()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		// Orphans are re-parented and reaped by init (or a subreaper); a
		// zombie left unreaped counts as dead.
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(st), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent %d outlived its killed parent by 5s: %s", pid, st)
		}
	}
}

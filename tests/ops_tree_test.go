package tests

// OPS-7: an exec agent's whole process tree dies with the turn (cancel,
// timeout) and with the gateway, even on kill -9: the agent's children in
// its process group and those that left it (setsid).

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// treeAgent is an exec agent that reads "dir=D;" from its turn request,
// starts two grandchildren — `sleep 300` in its group and `setsid sleep
// 300` outside it — writes their pids to D/g1 and D/g2, says so, and
// waits for them.
const treeAgent = `#!/bin/sh
IFS= read -r line
d=$(printf '%s' "$line" | sed -n 's/.*dir=\([^;]*\);.*/\1/p')
sleep 300 &
echo $! > "$d/g1.tmp" && mv "$d/g1.tmp" "$d/g1"
setsid sleep 300 &
echo $! > "$d/g2.tmp" && mv "$d/g2.tmp" "$d/g2"
printf '%s\n' '{"v":1,"type":"text","text":"started"}'
wait
`

// treeGateway starts a gateway whose exec agent is treeAgent.
func treeGateway(t *testing.T, options string) *harness.Gateway {
	t.Helper()
	script := filepath.Join(t.TempDir(), "tree.sh")
	if err := os.WriteFile(script, []byte(treeAgent), 0o700); err != nil {
		t.Fatal(err)
	}
	return harness.StartGateway(t, "a2a {\n\tcard {\n\t\tname tree\n\t}\n\tbackend exec "+script+" {\n\t\tgrace_period 500ms\n\t\t"+options+"\n\t}\n}")
}

// treeTurn starts a turn (returnImmediately) whose agent writes its
// grandchildren's pids under a new directory; it returns the task id and
// the two pids, killed at cleanup whatever happens.
func treeTurn(t *testing.T, gw *harness.Gateway) (string, int, int) {
	t.Helper()
	dir := t.TempDir()
	res, rpcErr := harness.At(gw.URL).RPC(t, "SendMessage", map[string]any{"message": bkMessage("dir="+dir+";", "", nil),
		"configuration": map[string]any{"returnImmediately": true}}, harness.Client(opsClient))
	if rpcErr != nil || res["task"] == nil {
		t.Fatalf("SendMessage: %v %v", res, rpcErr)
	}
	return bkStr(res, "task", "id"), treePid(t, filepath.Join(dir, "g1")), treePid(t, filepath.Join(dir, "g2"))
}

// treePid waits up to 10s for a pid in path.
func treePid(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && pid > 1 {
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			if err := syscall.Kill(pid, 0); err != nil {
				t.Fatalf("grandchild %d not running: %v", pid, err)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent wrote no pid to %s", path)
		}
	}
}

// treeGone waits up to 5s for pid to be gone (a zombie waiting for its
// reaper counts as gone).
func treeGone(t *testing.T, pid int, what string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if os.IsNotExist(err) || strings.Contains(string(st), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %d still runs 5s later: %s", what, pid, st)
		}
	}
}

// OPS-7: kill -9 of the gateway mid-turn kills the agent's grandchildren.
func TestOpsExecTreeDiesWithGateway(t *testing.T) {
	t.Parallel()
	gw := treeGateway(t, "")
	_, g1, g2 := treeTurn(t, gw)
	gw.Signal(syscall.SIGKILL) // the gateway only, not its process group
	if !gw.WaitExit(5 * time.Second) {
		t.Fatal("the gateway survived kill -9")
	}
	treeGone(t, g1, "grandchild in the agent's group")
	treeGone(t, g2, "grandchild that left the group (setsid)")
}

// OPS-7: a cancel and a turn timeout kill the agent's grandchildren too.
func TestOpsExecTreeDiesWithTurn(t *testing.T) {
	t.Parallel()
	gw := treeGateway(t, "timeout 2s")
	id, g1, g2 := treeTurn(t, gw)
	if _, rpcErr := harness.At(gw.URL).RPC(t, "CancelTask", map[string]any{"id": id}, harness.Client(opsClient)); rpcErr != nil {
		t.Fatalf("CancelTask: %v", rpcErr)
	}
	treeGone(t, g1, "grandchild in the group, after cancel")
	treeGone(t, g2, "grandchild that left the group, after cancel")

	_, g1, g2 = treeTurn(t, gw) // ends by the 2s timeout
	treeGone(t, g1, "grandchild in the group, after the timeout")
	treeGone(t, g2, "grandchild that left the group, after the timeout")
}

package tests

// Durability end-to-end tests (RPC-12, OPS-3): tasks survive a restart, and
// a task that was running when the process died is failed, with a clear
// message, at the next start.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type protoList struct {
	Tasks         []protoTask `json:"tasks"`
	NextPageToken *string     `json:"nextPageToken"`
	TotalSize     int         `json:"totalSize"`
}

func TestDurabilityRestart(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(t.TempDir(), "a2a-data")
	g := protoStartWith(t, protoOpts{backend: protoFastEcho, dataDir: dataDir})

	task := g.send(map[string]any{"message": protoMsg("remember me", "durable-ctx", "")})
	cont := g.send(map[string]any{"message": protoMsg("and this", "", task.ID)})
	if cont.ID != task.ID || len(cont.History) != 4 {
		t.Fatalf("continuation: id %s, %d messages", cont.ID, len(cont.History))
	}
	other := g.send(map[string]any{"message": protoMsg("another", "", "")})
	var page protoList
	g.result("ListTasks", map[string]any{"pageSize": 1}, &page)
	if page.TotalSize != 2 || page.NextPageToken == nil || *page.NextPageToken == "" {
		t.Fatalf("list before restart: total %d token %v", page.TotalSize, page.NextPageToken)
	}
	token := *page.NextPageToken

	if _, err := os.Stat(filepath.Join(dataDir, "a2a.db")); err != nil {
		t.Errorf("data_dir holds no a2a.db: %v", err)
	}

	g.stop()
	g.start()

	got := g.getTask(task.ID)
	if got.Status.State != "TASK_STATE_INPUT_REQUIRED" || got.ContextID != "durable-ctx" || len(got.History) != 4 {
		t.Fatalf("after restart: %s ctx %s, %d messages", got.Status.State, got.ContextID, len(got.History))
	}
	if got.Status.Message.text() != "Echo: and this" || got.History[0].text() != "remember me" || got.History[3].text() != "Echo: and this" {
		t.Errorf("after restart: status %q, history %+v", got.Status.Message.text(), got.History)
	}
	if g.getTask(other.ID).Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Errorf("second task lost")
	}
	// A page token from before the restart still works (the key is in data_dir).
	var page2 protoList
	g.result("ListTasks", map[string]any{"pageSize": 1, "pageToken": token}, &page2)
	if len(page2.Tasks) != 1 || page2.Tasks[0].ID == page.Tasks[0].ID || page2.TotalSize != 2 {
		t.Errorf("page 2 with a pre-restart token: %+v", page2)
	}
	// The task and its context go on after the restart.
	again := g.send(map[string]any{"message": protoMsg("still there?", "", task.ID)})
	if again.ID != task.ID || again.Status.State != "TASK_STATE_INPUT_REQUIRED" || len(again.History) != 6 {
		t.Errorf("continuing after restart: %s, %d messages", again.Status.State, len(again.History))
	}
	inCtx := g.send(map[string]any{"message": protoMsg("new task, old context", "durable-ctx", "")})
	if inCtx.Status.State != "TASK_STATE_INPUT_REQUIRED" || inCtx.ContextID != "durable-ctx" {
		t.Errorf("new task in the old context: %s %q", inCtx.Status.State, inCtx.Status.Message.text())
	}
}

func TestDurabilityKillFailsRunningTask(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(t.TempDir(), "a2a-data")
	g := protoStartWith(t, protoOpts{backend: protoFastEcho, dataDir: dataDir})
	idle := g.send(map[string]any{"message": protoMsg("waiting for input", "", "")})
	if idle.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("setup: %s", idle.Status.State)
	}
	g.stop()

	// A turn that runs about 10s, killed while it runs.
	g.writeConfig("backend echo {\n\t\t\tdelay 1s\n\t\t\tchunks 10\n\t\t}")
	g.start()
	running := g.send(map[string]any{"message": protoMsg("a long running turn", "kill-ctx", ""), "configuration": map[string]any{"returnImmediately": true}})
	g.waitState(running.ID, "TASK_STATE_WORKING", 5*time.Second)
	// GetTask answers from the live run; wait until the store has the
	// WORKING state too (ListTasks reads the store), then kill.
	if !waitFor(t, 5*time.Second, func() bool {
		var stored protoList
		g.result("ListTasks", map[string]any{"status": "TASK_STATE_WORKING"}, &stored)
		return len(stored.Tasks) == 1 && stored.Tasks[0].ID == running.ID
	}) {
		t.Fatal("the running task's WORKING state never reached the store")
	}
	g.kill()

	g.writeConfig(protoFastEcho)
	g.start()
	got := g.getTask(running.ID)
	if got.Status.State != "TASK_STATE_FAILED" {
		t.Fatalf("task running at SIGKILL is %s after restart, want TASK_STATE_FAILED", got.Status.State)
	}
	msg := got.Status.Message.text()
	if msg == "" || !strings.Contains(strings.ToLower(msg), "stopped") || got.Status.Message.Role != "ROLE_AGENT" {
		t.Errorf("status message %q (role %s): want a clear agent message that the gateway stopped", msg, got.Status.Message.Role)
	}
	if got.Status.Timestamp == "" {
		t.Error("failed status has no timestamp")
	}
	if len(got.History) == 0 || got.History[0].text() != "a long running turn" {
		t.Errorf("history lost: %+v", got.History)
	}
	// Never left working, also in the list.
	var working protoList
	g.result("ListTasks", map[string]any{"status": "TASK_STATE_WORKING"}, &working)
	if len(working.Tasks) != 0 {
		t.Errorf("%d tasks still WORKING after restart", len(working.Tasks))
	}
	var failed protoList
	g.result("ListTasks", map[string]any{"status": "TASK_STATE_FAILED"}, &failed)
	if failed.TotalSize != 1 || len(failed.Tasks) != 1 || failed.Tasks[0].ID != running.ID {
		t.Errorf("FAILED tasks after restart: %+v", failed)
	}
	// Input-required tasks are untouched.
	if st := g.getTask(idle.ID).Status.State; st != "TASK_STATE_INPUT_REQUIRED" {
		t.Errorf("input-required task is %s after the crash", st)
	}
	// The failed task is terminal; its context takes new messages.
	g.rpcErr("SendMessage", map[string]any{"message": protoMsg("retry", "", running.ID)}, -32004, "UNSUPPORTED_OPERATION")
	g.rpcErr("CancelTask", map[string]any{"id": running.ID}, -32002, "TASK_NOT_CANCELABLE")
	next := g.send(map[string]any{"message": protoMsg("retry", "kill-ctx", "")})
	if next.Status.State != "TASK_STATE_INPUT_REQUIRED" || next.Status.Message.text() != "Echo: retry" {
		t.Errorf("new message in the crashed context: %s %q", next.Status.State, next.Status.Message.text())
	}
}

func TestDurabilityGracefulStopLetsTurnsFinish(t *testing.T) {
	t.Parallel()
	// OPS-3: shutdown lets running turns finish up to the grace period, then
	// marks the rest failed.
	dataDir := filepath.Join(t.TempDir(), "a2a-data")
	g := protoStartWith(t, protoOpts{backend: "backend echo {\n\t\t\tdelay 200ms\n\t\t\tchunks 5\n\t\t}", dataDir: dataDir, grace: 10 * time.Second})
	short := g.send(map[string]any{"message": protoMsg("a short turn", "", ""), "configuration": map[string]any{"returnImmediately": true}})
	g.waitState(short.ID, "TASK_STATE_WORKING", 5*time.Second)
	start := time.Now()
	g.stop()
	took := time.Since(start)
	g.start()
	got := g.getTask(short.ID)
	if got.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Errorf("a 1s turn running at SIGINT (grace period 10s) is %s %q after restart, want it to have finished (INPUT_REQUIRED); stop took %v",
			got.Status.State, got.Status.Message.text(), took)
	}
}

package harness

import (
	"testing"
	"time"
)

// WaitTask polls GetTask on url every 25 ms until done(task) or within
// has passed, and returns the last task and whether done held. A GetTask
// error fails the test.
func WaitTask(t testing.TB, url, id string, within time.Duration, done func(task map[string]any) bool, opts ...Option) (map[string]any, bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		task, rpcErr := At(url).RPC(t, "GetTask", map[string]any{"id": id}, opts...)
		if rpcErr != nil {
			t.Fatalf("GetTask %s: %v", id, rpcErr)
		}
		if done(task) {
			return task, true
		}
		if time.Now().After(deadline) {
			return task, false
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// WaitState waits (WaitTask) until the task is in state and returns it;
// it fails the test when the task is not within d.
func WaitState(t testing.TB, url, id, state string, within time.Duration, opts ...Option) map[string]any {
	t.Helper()
	task, ok := WaitTask(t, url, id, within, func(task map[string]any) bool { return TaskState(task) == state }, opts...)
	if !ok {
		t.Fatalf("task %s is %s after %v, want %s", id, TaskState(task), within, state)
	}
	return task
}

// TaskState returns a task's status.state ("" when absent).
func TaskState(task map[string]any) string {
	st, _ := task["status"].(map[string]any)
	s, _ := st["state"].(string)
	return s
}

// SendTask sends SendMessage with params to the endpoint and returns the
// task of its result; it fails the test on a JSON-RPC error and on a
// result without a task.
func (e Endpoint) SendTask(t testing.TB, params any, opts ...Option) map[string]any {
	t.Helper()
	res, rpcErr := e.RPC(t, "SendMessage", params, opts...)
	if rpcErr != nil {
		t.Fatalf("SendMessage: %v", rpcErr)
	}
	task, _ := res["task"].(map[string]any)
	if task == nil {
		t.Fatalf("SendMessage: no task in %v", res)
	}
	return task
}

package tests

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Helpers of the backend end-to-end tests (prefix bk).

var bkSeq atomic.Int64

// bkMessage builds a user message with one text part and optional
// metadata.
func bkMessage(text, contextID string, md map[string]any) map[string]any {
	m := map[string]any{
		"messageId": fmt.Sprintf("bk-msg-%d-%d", time.Now().UnixNano(), bkSeq.Add(1)),
		"role":      "ROLE_USER",
		"parts":     []any{map[string]any{"text": text}},
	}
	if contextID != "" {
		m["contextId"] = contextID
	}
	if md != nil {
		m["metadata"] = md
	}
	return m
}

// bkGet walks a decoded JSON value by keys and indexes.
func bkGet(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func bkStr(v any, path ...any) string {
	s, _ := bkGet(v, path...).(string)
	return s
}

// bkState returns the state of a task or status-update stream event.
func bkState(ev map[string]any) string {
	if s := bkStr(ev, "statusUpdate", "status", "state"); s != "" {
		return s
	}
	return bkStr(ev, "task", "status", "state")
}

// bkFinalText returns the text of the final status message in a stream.
func bkFinalText(events []map[string]any) (state, text string) {
	if len(events) == 0 {
		return "", ""
	}
	last := events[len(events)-1]
	return bkState(last), bkStr(last, "statusUpdate", "status", "message", "parts", 0, "text")
}

// bkGroupGone waits until the process group pgid has no process left.
func bkGroupGone(t *testing.T, pgid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := syscall.Kill(-pgid, 0)
		if err == syscall.ESRCH {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still exists after %v (kill -0: %v)", pgid, within, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// bkPID extracts "pid N" from a text.
func bkPID(t *testing.T, text string) int {
	t.Helper()
	i := strings.Index(text, "pid ")
	if i < 0 {
		t.Fatalf("no pid in %q", text)
	}
	var pid int
	fmt.Sscanf(text[i+4:], "%d", &pid)
	if pid <= 1 {
		t.Fatalf("bad pid in %q", text)
	}
	return pid
}

// lockedFilter returns the elements of *all that keep holds for, read
// under mu (a recording test server's log).
func lockedFilter[T any](mu *sync.Mutex, all *[]T, keep func(T) bool) []T {
	mu.Lock()
	defer mu.Unlock()
	var out []T
	for _, v := range *all {
		if keep(v) {
			out = append(out, v)
		}
	}
	return out
}

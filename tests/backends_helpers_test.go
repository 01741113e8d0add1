package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
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

// bkRPC calls a JSON-RPC method and returns its result or error object.
func bkRPC(t *testing.T, url, method string, params any) (result map[string]any, rpcErr map[string]any) {
	t.Helper()
	return bkRPCAs(t, url, "", method, params)
}

// bkRPCAs is bkRPC with a bearer token ("" for none).
func bkRPCAs(t *testing.T, url, token, method string, params any) (result map[string]any, rpcErr map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest("POST", url+"/", bytes.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	client := &http.Client{Timeout: 60 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out struct {
		Result map[string]any `json:"result"`
		Error  map[string]any `json:"error"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: bad JSON-RPC reply %d %s", method, resp.StatusCode, b)
	}
	return out.Result, out.Error
}

// bkStream opens SendStreamingMessage and returns a channel of the stream
// results (StreamResponse objects), closed at the end of the stream.
func bkStream(t *testing.T, url string, msg map[string]any) <-chan map[string]any {
	t.Helper()
	return bkStreamAs(t, url, "", msg)
}

// bkStreamAs is bkStream with a bearer token ("" for none).
func bkStreamAs(t *testing.T, url, token string, msg map[string]any) <-chan map[string]any {
	t.Helper()
	return streamResults(t, url, token, map[string]any{"message": msg})
}

// streamResults opens SendStreamingMessage with params (and a bearer token,
// "" for none) and returns a channel of the stream's results — an error
// event arrives as {"error": …} — closed at the end of the stream.
func streamResults(t *testing.T, url, token string, params map[string]any) <-chan map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": params})
	req, _ := http.NewRequest("POST", url+"/", bytes.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("stream: Content-Type %q: %s", ct, b)
	}
	ch := make(chan map[string]any, 256)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			line, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var doc struct {
				Result map[string]any `json:"result"`
				Error  map[string]any `json:"error"`
			}
			if json.Unmarshal([]byte(line), &doc) != nil {
				continue
			}
			if doc.Error != nil {
				ch <- map[string]any{"error": doc.Error}
			} else if doc.Result != nil {
				ch <- doc.Result
			}
		}
	}()
	return ch
}

// bkCollect drains a stream with a deadline.
func bkCollect(t *testing.T, ch <-chan map[string]any, d time.Duration) []map[string]any {
	t.Helper()
	var out []map[string]any
	timer := time.After(d)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-timer:
			t.Fatalf("stream did not end within %v; got %d events", d, len(out))
		}
	}
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

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/caddy-a2a/caddy-a2a/internal/sse"
)

// rpcBody encodes a JSON-RPC request.
func rpcBody(method string, params any) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	return b
}

// maxEvent bounds one event of a stream the benchmarks read.
const maxEvent = 8 << 20

// eachEvent reads the events of r (the module's SSE reader) until the
// stream ends, calling each for every event as it arrives; the end of
// the stream is no error.
func eachEvent(r *sse.Reader, each func(ev sse.Event)) error {
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		each(ev)
	}
}

// lastOfStream reads the event stream body to its end and returns how
// many events it carried and the data of the last one.
func lastOfStream(body io.Reader) (n int, last []byte) {
	_ = eachEvent(sse.NewReader(body, maxEvent), func(ev sse.Event) { n, last = n+1, ev.Data })
	return n, last
}

// msgSeq numbers the messages of a run.
var msgSeq atomic.Int64

// sendParams returns SendMessage params with one text part.
func sendParams(text, contextID string) map[string]any {
	// A fresh messageId per send: a resent one starts no turn (RPC-18).
	msg := map[string]any{"messageId": fmt.Sprintf("m-%d", msgSeq.Add(1)), "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
	if contextID != "" {
		msg["contextId"] = contextID
	}
	return map[string]any{"message": msg}
}

// post sends an A2A 1.0 JSON-RPC request, with a bearer token if set.
func post(c *http.Client, url, token string, body []byte) (*http.Response, error) {
	return postHeader(c, url, token, body, nil)
}

// idempotentSendExt is the extension that asks the gateway to answer a
// resent messageId from its dedupe record (opt-in, A2A-Extensions).
const idempotentSendExt = "urn:caddy-a2a:idempotent-send:v1"

// postHeader is post with extra request headers hdr.
func postHeader(c *http.Client, url, token string, body []byte, hdr http.Header) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return c.Do(req)
}

// expect posts and checks that the body contains want.
func expect(c *http.Client, url, token string, body []byte, want string) error {
	_, err := expectBody(c, url, token, body, want, nil)
	return err
}

// expectTask is expect for a request that starts a turn: it returns the
// id of the task the answer names, for drive's distinct-task check.
func expectTask(c *http.Client, url, token string, body []byte, want string, hdr http.Header) (string, error) {
	b, err := expectBody(c, url, token, body, want, hdr)
	if err != nil {
		return "", err
	}
	id := taskIDOf(b)
	if id == "" {
		return "", fmt.Errorf("answer names no task: %.200s", b)
	}
	return id, nil
}

// expectBody posts (with the extra headers hdr) and returns the body,
// checking that it is a 200 containing want.
func expectBody(c *http.Client, url, token string, body []byte, want string, hdr http.Header) ([]byte, error) {
	resp, err := postHeader(c, url, token, body, hdr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 || !bytes.Contains(b, []byte(want)) {
		return nil, fmt.Errorf("unexpected response %d: %.200s", resp.StatusCode, b)
	}
	return b, nil
}

// taskIDOf returns the task id an A2A 1.0 answer or stream event names:
// a Task's "id" or an update event's "taskId" ("" when none).
func taskIDOf(b []byte) string {
	for _, key := range []string{`"task":{"id":"`, `"taskId":"`} {
		if i := bytes.Index(b, []byte(key)); i >= 0 {
			rest := b[i+len(key):]
			if j := bytes.IndexByte(rest, '"'); j > 0 {
				return string(rest[:j])
			}
		}
	}
	var v struct {
		Result struct {
			Task struct {
				ID string `json:"id"`
			} `json:"task"`
		} `json:"result"`
	}
	if json.Unmarshal(b, &v) == nil {
		return v.Result.Task.ID
	}
	return ""
}

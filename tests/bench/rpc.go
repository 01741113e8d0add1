package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
)

// rpcBody encodes a JSON-RPC request.
func rpcBody(method string, params any) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	return b
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
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
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
	resp, err := post(c, url, token, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 || !bytes.Contains(b, []byte(want)) {
		return fmt.Errorf("unexpected response %d: %.200s", resp.StatusCode, b)
	}
	return nil
}

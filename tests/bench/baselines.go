package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// baselines measures Caddy's respond and a bare net/http server, the
// floors the gateway scenarios are compared with.
func (r *runner) baselines() []result {
	// Baselines start no turns (drive's distinct-task check is off: ""),
	// so one body serves every request.
	body := rpcBody("SendMessage", sendParams("Create a VPC with two vSwitches.", ""))
	a := r.drive("baseline: Caddy respond", r.concurrency, r.duration, func(c *http.Client, _, _ int) (string, error) {
		return "", expect(c, r.respond+"/", "", body, "INPUT_REQUIRED")
	})
	b := drive("baseline: bare net/http", r.concurrency, r.duration, func(c *http.Client, _, _ int) (string, error) {
		return "", expect(c, r.bare+"/", "", body, "INPUT_REQUIRED")
	})
	return []result{a, b}
}

// startBareBaseline serves a bare net/http handler that decodes a
// SendMessage request and encodes a Task: the floor of any A2A server.
func startBareBaseline() (func(), string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var env struct {
			ID     json.RawMessage        `json:"id"`
			Params a2a.SendMessageRequest `json:"params"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&env); err != nil || env.Params.Message == nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		t := a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired, Timestamp: a2a.Timestamp(time.Now())},
			History: []a2a.Message{*env.Params.Message}}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": env.ID, "result": map[string]any{"task": t}})
	})}
	go func() { _ = srv.Serve(l) }()
	return func() { _ = srv.Close() }, "http://" + l.Addr().String(), nil
}

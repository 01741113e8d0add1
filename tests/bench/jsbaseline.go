package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// JS SDK baseline names (issue 17: the gateway is compared with the
// official JS SDK server run by the benchmark itself).
const (
	jsSendBaseline   = "baseline: JS SDK 1.3 server (in memory)"
	jsStreamBaseline = "baseline: JS SDK 1.3 server streams"
)

// startJSBaseline starts tests/interop/js/bench_server.mjs when node and
// the interop test's node_modules are present; it returns the JSON-RPC URL,
// or "" and the reason it was not started.
func (r *runner) startJSBaseline() (stop func(), url, why string) {
	dir := filepath.Join(r.root, "tests", "interop", "js")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@a2a-js", "sdk")); err != nil {
		return func() {}, "", "not measured: run `npm ci` in tests/interop/js"
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return func() {}, "", "not measured: node not found"
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return func() {}, "", "not measured: " + err.Error()
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	cmd := exec.Command(node, "bench_server.mjs", fmt.Sprint(port))
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return func() {}, "", "not measured: " + err.Error()
	}
	if err := cmd.Start(); err != nil {
		return func() {}, "", "not measured: " + err.Error()
	}
	stop = func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	r.jsProc = procOf("node", cmd.Process.Pid)
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var m struct {
				Ready bool   `json:"ready"`
				URL   string `json:"url"`
			}
			if json.Unmarshal(sc.Bytes(), &m) == nil && m.Ready {
				ready <- m.URL
				return
			}
		}
	}()
	select {
	case u := <-ready:
		return stop, u + "/a2a/jsonrpc", ""
	case <-time.After(30 * time.Second):
		stop()
		return func() {}, "", "not measured: the JS server did not start"
	}
}

// jsBaselines measures SendMessage and SendStreamingMessage on the JS SDK
// server with the gateway scenarios' bodies (no auth: the SDK server has
// none configured).
func (r *runner) jsBaselines() []result {
	stop, url, why := r.startJSBaseline()
	defer stop()
	if url == "" {
		return []result{{name: jsSendBaseline, extra: why}, {name: jsStreamBaseline, extra: why}}
	}
	// Bodies built per request (a fresh messageId each, like the gateway
	// scenarios); the JS server's task ids are not checked (noTurns).
	a := driveOn(r.jsProc, jsSendBaseline, r.concurrency, r.duration, noTurns(func(c *http.Client, _, _ int) error {
		send := rpcBody("SendMessage", sendParams("Create a VPC with two vSwitches.", ""))
		return expect(c, url, "", send, "TASK_STATE_INPUT_REQUIRED")
	}))
	var mu sync.Mutex
	events := 0
	b := driveOn(r.jsProc, jsStreamBaseline, r.concurrency, r.duration, noTurns(func(c *http.Client, _, _ int) error {
		stream := rpcBody("SendStreamingMessage", sendParams("Create a VPC with two vSwitches.", ""))
		resp, err := post(c, url, "", stream)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		n, last := lastOfStream(resp.Body)
		if !bytes.Contains(last, []byte("TASK_STATE_INPUT_REQUIRED")) {
			return fmt.Errorf("JS stream did not end input-required")
		}
		mu.Lock()
		events += n
		mu.Unlock()
		return nil
	}))
	b.extra = fmt.Sprintf("%.0f events/s", float64(events)/b.elapsed.Seconds())
	return []result{a, b}
}

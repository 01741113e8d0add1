package tests

// Interop (CLI-1): the `caddy a2a` client drives a
// third-party A2A 1.0 server, the @a2a-js/sdk reference server started from
// tests/interop/js/server.mjs, for call (streaming and not, both
// bindings), task get, task cancel and a failing task.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// clientStartJSServer starts server.mjs and returns its base URL.
func clientStartJSServer(t *testing.T) string {
	t.Helper()
	return startJSScript(t, "server.mjs")
}

// startJSScript starts a server script of tests/interop/js (it prints
// {"ready":true,"url":…}) and returns its base URL.
func startJSScript(t *testing.T, script string) string {
	t.Helper()
	node, dir := interopNodeSDK(t)
	func() {
		interopJSInstallMu.Lock()
		defer interopJSInstallMu.Unlock()
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "express", "package.json")); err == nil {
			return
		}
		// The SDK is installed but express (added for server.mjs) is not.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
		}
	}()
	port := harness.FreePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, script, fmt.Sprint(port))
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting server.mjs: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("server.mjs stderr:\n%s", errb.String())
		}
	})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var r struct {
				Ready bool   `json:"ready"`
				URL   string `json:"url"`
			}
			if json.Unmarshal(sc.Bytes(), &r) == nil && r.Ready {
				ready <- r.URL
			}
		}
	}()
	select {
	case u := <-ready:
		return u
	case <-time.After(30 * time.Second):
		t.Fatalf("server.mjs did not start: %s", errb.String())
	}
	return ""
}

func TestClientInteropJSServer(t *testing.T) {
	t.Parallel()
	base := clientStartJSServer(t)

	// The card names the SDK server and its JSONRPC interface first.
	r := clientRun(t, "", nil, "card", "get", "--json", base)
	r.wantCode(t, 0)
	var card a2a.AgentCard
	if err := json.Unmarshal([]byte(r.Stdout), &card); err != nil || card.Name != "js-reference" || len(card.SupportedInterfaces) != 2 {
		t.Fatalf("card get: %v %s", err, r.Stdout)
	}

	for _, binding := range []string{"jsonrpc", "rest"} {
		t.Run(binding, func(t *testing.T) {
			// Streaming call, plain output: the answer once.
			r := clientRun(t, "", nil, "call", "--binding", binding, base, "hello from caddy")
			r.wantCode(t, 0)
			if r.Stdout != "JS echo: hello from caddy\n" || !strings.Contains(r.Stderr, "state=completed") {
				t.Fatalf("call: stdout %q stderr %q", r.Stdout, r.Stderr)
			}

			// Streaming call, NDJSON: task first, deltas, artifact, completed.
			r = clientRun(t, "", nil, "call", "--json", "--binding", binding, base, "stream me")
			r.wantCode(t, 0)
			evs := clientEvents(t, r.Stdout)
			if len(evs) < 4 || evs[0].Task == nil {
				t.Fatalf("stream: %s", r.Stdout)
			}
			var sawArtifact bool
			for _, ev := range evs {
				if ev.ArtifactUpdate != nil && ev.ArtifactUpdate.Artifact.ArtifactID == "answer" {
					sawArtifact = true
				}
			}
			tid, cid, st := finalOf(evs)
			if !sawArtifact || st != a2a.TaskStateCompleted {
				t.Fatalf("stream: artifact %v, final state %s", sawArtifact, st)
			}

			// Non-streaming SendMessage.
			r = clientRun(t, "", nil, "call", "--no-stream", "--binding", binding, base, "--context", cid, "no stream")
			r.wantCode(t, 0)
			if r.Stdout != "JS echo: no stream\n" || !strings.Contains(r.Stderr, "context="+cid) {
				t.Fatalf("--no-stream: stdout %q stderr %q", r.Stdout, r.Stderr)
			}

			// GetTask.
			r = clientRun(t, "", nil, "task", "get", "--json", "--binding", binding, base, tid)
			r.wantCode(t, 0)
			var task a2a.Task
			if err := json.Unmarshal([]byte(r.Stdout), &task); err != nil || task.ID != tid || task.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("task get: %v %s", err, r.Stdout)
			}
			r = clientRun(t, "", nil, "task", "get", "--binding", binding, base, "00000000-0000-0000-0000-000000000000")
			r.wantCode(t, 3)

			// A failed task exits 1.
			r = clientRun(t, "", nil, "call", "--binding", binding, base, "please fail")
			r.wantCode(t, 1)
			if !strings.Contains(r.Stderr, "failed") {
				t.Fatalf("failed task stderr %q", r.Stderr)
			}

			// Cancel a running task from a second process.
			call := clientStart(t, "call", "--json", "--binding", binding, base, "slow one")
			slowID := call.taskID()
			if slowID == "" {
				t.Fatalf("no task from the slow call: %s", call.stderr.String())
			}
			r = clientRun(t, "", nil, "task", "cancel", "--json", "--binding", binding, base, slowID)
			r.wantCode(t, 0)
			var ct a2a.Task
			if err := json.Unmarshal([]byte(r.Stdout), &ct); err != nil || ct.ID != slowID {
				t.Fatalf("task cancel --json: %v %s", err, r.Stdout)
			}
			err := call.wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(call.stderr.String(), "canceled") {
				t.Fatalf("slow call after cancel: %v stderr %q", err, call.stderr.String())
			}
			r = clientRun(t, "", nil, "task", "get", "--json", "--binding", binding, base, slowID)
			r.wantCode(t, 0)
			if err := json.Unmarshal([]byte(r.Stdout), &ct); err != nil || ct.Status.State != a2a.TaskStateCanceled {
				t.Fatalf("canceled task state: %v %s", err, r.Stdout)
			}
		})
	}
}

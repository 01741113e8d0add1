package tests

// The method/error conformance table (issue 14 "Tests"; XPORT-1..6,
// RPC-1, RPC-13, AUTH-1, PUSH-1): ONE table of calls and their expected
// outcome, run in order over every binding of ONE gateway process —
// JSON-RPC over HTTP, HTTP+JSON, gRPC (h2c), the gRPC JSON-RPC envelope
// (h2c), WebSocket and Redis Streams —
// and over `caddy a2a stdio` on the same Caddyfile.
//
// stdio runs as a second process: only one gateway may own a data_dir
// (OPS-6), so it gets a directory of its own (the same Caddyfile, its own
// XDG_DATA_HOME) and therefore its own tasks; the stdio run drops the
// Caddyfile's redis_rpc block (it serves stdin/stdout only). stdio trusts
// its parent (no auth: one principal, given by --principal) and has no
// headers (every call is A2A 1.0): the cases that need either are marked
// not applicable for it in the table.
//
// Errors are compared in each carrier's own form: the JSON-RPC code, the
// HTTP status of HTTP+JSON, the gRPC status code — each with the
// google.rpc.ErrorInfo reason (in error.data, in the google.rpc.Status
// details, in grpc-status-details-bin).

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// The principals of the conformance gateway: alice and bob may do
// everything; monitor may only read (limits allow_methods), ratebot may
// make one request an hour (limits rate), AUTH-6.
const (
	confAlice   = "alice"
	confBob     = "bob"
	confMonitor = "monitor"
	confRateBot = "ratebot"
)

// Binding names of the table.
const (
	bJSONRPC = "jsonrpc-http"
	bREST    = "http+json"
	bGRPC    = "grpc"
	bWS      = "websocket"
	bRedis   = "redis"
	bStdio   = "stdio"
)

// confBindings is the order the bindings run in.
var confBindings = []string{bJSONRPC, bREST, bGRPC, bGRPCJSONRPC, bWS, bRedis, bStdio}

// confError is an expected error in every carrier's form.
type confError struct {
	RPC    int        // JSON-RPC code (JSON-RPC over HTTP, WebSocket, Redis, stdio)
	HTTP   int        // HTTP status (HTTP+JSON; an HTTP refusal before JSON-RPC)
	GRPC   codes.Code // gRPC status code
	Reason string     // ErrorInfo reason ("" = none expected)
	// Meta, when set, must be the ErrorInfo metadata.
	Meta map[string]string
	// Retry: the refusal must say when to retry (HTTP Retry-After, or a
	// google.rpc.RetryInfo detail on the other carriers).
	Retry bool
}

// code is the expected code in the code space of kind (-1: none).
func (w confError) code(kind string) int {
	switch kind {
	case confKindRPC:
		return w.RPC
	case confKindHTTP:
		return w.HTTP
	case confKindGRPC:
		return int(w.GRPC)
	}
	return -1
}

// confEnv is what the cases of one binding remember (task ids).
type confEnv struct {
	binding string
	base    string // the gateway's base URL
	task    string // alice's first task (input-required)
	task2   string // alice's task that is canceled
}

// confOutcome is what a case expects.
type confOutcome struct {
	// Err, when set, is the expected error; else Check judges the result
	// (or the stream's events).
	Err   *confError
	Check func(t *testing.T, e *confEnv, res map[string]any, events []map[string]any)
	// NA, when set, marks the case not applicable on the binding, with
	// the reason (logged; the case does not run there).
	NA string
}

// confCase is one row of the table.
type confCase struct {
	Name      string
	Method    string
	Principal string // default alice; "-" for no credentials
	Version   string // A2A-Version; "" is 1.0
	Stream    bool
	Params    func(e *confEnv) map[string]any
	Want      confOutcome
	// Differs overrides Want on a binding whose carrier legitimately
	// differs (documented per entry).
	Differs map[string]confOutcome
	// Save records what later cases need.
	Save func(e *confEnv, res map[string]any)
	// Warm is how many times the call is made first, unchecked (to spend
	// a rate limit's burst).
	Warm int
}

const confText = "conformance check"

func confMessage(text string) map[string]any {
	return map[string]any{"message": map[string]any{
		"role": "ROLE_USER", "messageId": fmt.Sprintf("conf-%d", time.Now().UnixNano()),
		"parts": []any{map[string]any{"text": text}},
	}}
}

// taskOf is the task of a SendMessage result ({"task": …}) or a Task.
func taskOf(t *testing.T, res map[string]any) map[string]any {
	t.Helper()
	if tk, ok := res["task"].(map[string]any); ok {
		return tk
	}
	if _, ok := res["id"].(string); ok {
		return res
	}
	t.Fatalf("result is not a task: %v", res)
	return nil
}

// sentTaskID is the task id of a SendMessage result ("" when none).
func sentTaskID(res map[string]any) string {
	tk, _ := res["task"].(map[string]any)
	id, _ := tk["id"].(string)
	return id
}

func taskID(t *testing.T, res map[string]any) string {
	t.Helper()
	id, _ := taskOf(t, res)["id"].(string)
	if id == "" {
		t.Fatalf("task without id: %v", res)
	}
	return id
}

func wantState(t *testing.T, task map[string]any, state string) {
	t.Helper()
	if got := harness.TaskState(task); got != state {
		t.Fatalf("task state %q, want %q", got, state)
	}
}

// confPushURL is a loopback callback (allow_private_networks
// 127.0.0.0/8); nothing is delivered to it: the task does not change.
const confPushURL = "http://127.0.0.1:9/conformance-hook"

// confTable is the conformance table.
func confTable() []confCase {
	noStdioHeaders := "stdio has no headers: every call is A2A 1.0 (XPORT-4)"
	noStdioAuth := "stdio trusts its parent: one principal, no auth (XPORT-4)"
	taskParams := func(id func(e *confEnv) string) func(e *confEnv) map[string]any {
		return func(e *confEnv) map[string]any { return map[string]any{"id": id(e)} }
	}
	first := func(e *confEnv) string { return e.task }
	notFound := &confError{RPC: -32001, HTTP: 404, GRPC: codes.NotFound, Reason: "TASK_NOT_FOUND"}
	return append(confCoreRows(taskParams, first, notFound, noStdioHeaders, noStdioAuth), append(append(confPolicyRows(), confScopeRows()...), confV03Rows()...)...)
}

// confCoreRows are the 1.0 methods, errors and principal isolation.
func confCoreRows(taskParams func(id func(e *confEnv) string) func(e *confEnv) map[string]any, first func(e *confEnv) string,
	notFound *confError, noStdioHeaders, noStdioAuth string) []confCase {
	return []confCase{
		{
			Name: "SendMessage ok", Method: "SendMessage",
			Params: func(*confEnv) map[string]any { return confMessage(confText) },
			Want: confOutcome{Check: func(t *testing.T, _ *confEnv, res map[string]any, _ []map[string]any) {
				task := taskOf(t, res)
				wantState(t, task, "TASK_STATE_INPUT_REQUIRED")
				if b, _ := json.Marshal(task); !strings.Contains(string(b), "Echo: "+confText) {
					t.Fatalf("task holds no echo of the prompt: %s", b)
				}
			}},
			Save: func(e *confEnv, res map[string]any) { e.task = sentTaskID(res) },
		},
		{
			Name: "GetTask ok", Method: "GetTask", Params: taskParams(first),
			Want: confOutcome{Check: func(t *testing.T, e *confEnv, res map[string]any, _ []map[string]any) {
				if id := taskID(t, res); id != e.task {
					t.Fatalf("GetTask returned %s, want %s", id, e.task)
				}
				wantState(t, res, "TASK_STATE_INPUT_REQUIRED")
				if h, _ := res["history"].([]any); len(h) < 2 {
					t.Fatalf("history %v, want the prompt and the answer", res["history"])
				}
			}},
		},
		{
			Name: "SendMessage follow-up continues the task", Method: "SendMessage",
			Params: func(e *confEnv) map[string]any {
				m := confMessage("follow up")
				m["message"].(map[string]any)["taskId"] = e.task
				return m
			},
			Want: confOutcome{Check: func(t *testing.T, e *confEnv, res map[string]any, _ []map[string]any) {
				task := taskOf(t, res)
				wantState(t, task, "TASK_STATE_INPUT_REQUIRED")
				if task["id"] != e.task {
					t.Fatalf("follow-up answered task %v, want %s", task["id"], e.task)
				}
				if b, _ := json.Marshal(task); !strings.Contains(string(b), "Echo: follow up") {
					t.Fatalf("no echo of the follow-up: %s", b)
				}
			}},
		},
		{
			Name: "GetTask unknown id", Method: "GetTask",
			Params: func(*confEnv) map[string]any { return map[string]any{"id": "no-such-task"} },
			Want: confOutcome{Err: &confError{RPC: -32001, HTTP: 404, GRPC: codes.NotFound, Reason: "TASK_NOT_FOUND",
				Meta: map[string]string{"taskId": "no-such-task"}}},
		},
		{
			Name: "ListTasks ok", Method: "ListTasks",
			Params: func(*confEnv) map[string]any { return map[string]any{} },
			Want: confOutcome{Check: func(t *testing.T, e *confEnv, res map[string]any, _ []map[string]any) {
				total, _ := res["totalSize"].(float64)
				tasks, _ := res["tasks"].([]any)
				found := false
				for _, tk := range tasks {
					if m, _ := tk.(map[string]any); m["id"] == e.task {
						found = true
					}
				}
				if total < 1 || int(total) != len(tasks) || !found {
					t.Fatalf("ListTasks totalSize %v, %d tasks, has %s: %v; want totalSize = the tasks, with it", res["totalSize"], len(tasks), e.task, found)
				}
			}},
		},
		{
			Name: "ListTasks of another principal excludes the task", Method: "ListTasks", Principal: confBob,
			Params: func(*confEnv) map[string]any { return map[string]any{} },
			Want: confOutcome{Check: func(t *testing.T, e *confEnv, res map[string]any, _ []map[string]any) {
				if b, _ := json.Marshal(res); strings.Contains(string(b), e.task) {
					t.Fatalf("bob lists alice's task %s: %s", e.task, b)
				}
			}},
			Differs: map[string]confOutcome{bStdio: {NA: noStdioAuth}},
		},
		{
			Name: "GetTask of another principal", Method: "GetTask", Principal: confBob, Params: taskParams(first),
			Want:    confOutcome{Err: notFound},
			Differs: map[string]confOutcome{bStdio: {NA: noStdioAuth}},
		},
		{
			Name: "CancelTask of another principal", Method: "CancelTask", Principal: confBob, Params: taskParams(first),
			Want:    confOutcome{Err: notFound},
			Differs: map[string]confOutcome{bStdio: {NA: noStdioAuth}},
		},
		{
			Name: "no credentials", Method: "GetTask", Principal: "-", Params: taskParams(first),
			// Each carrier refuses in its own form before the service runs,
			// each with the ErrorInfo reason UNAUTHENTICATED (issue 25).
			Want: confOutcome{Err: &confError{HTTP: 401, GRPC: codes.Unauthenticated, Reason: "UNAUTHENTICATED"}},
			Differs: map[string]confOutcome{
				// Redis has no HTTP status: a JSON-RPC error entry (AUTH-1).
				bRedis: {Err: &confError{RPC: -31401, Reason: "UNAUTHENTICATED"}},
				bStdio: {NA: noStdioAuth},
			},
		},
		{
			Name: "SendMessage for the task to cancel", Method: "SendMessage",
			Params: func(*confEnv) map[string]any { return confMessage("cancel me") },
			Want: confOutcome{Check: func(t *testing.T, _ *confEnv, res map[string]any, _ []map[string]any) {
				wantState(t, taskOf(t, res), "TASK_STATE_INPUT_REQUIRED")
			}},
			Save: func(e *confEnv, res map[string]any) { e.task2 = sentTaskID(res) },
		},
		{
			Name: "CancelTask ok", Method: "CancelTask", Params: taskParams(func(e *confEnv) string { return e.task2 }),
			Want: confOutcome{Check: func(t *testing.T, e *confEnv, res map[string]any, _ []map[string]any) {
				if id := taskID(t, res); id != e.task2 {
					t.Fatalf("canceled %s, want %s", id, e.task2)
				}
				wantState(t, res, "TASK_STATE_CANCELED")
			}},
		},
		{
			// Cancel is idempotent (A2A 1.0 §3.3.1): the canceled task again
			// (a COMPLETED task is TaskNotCancelable: tests/error_table_test.go).
			Name: "CancelTask of a canceled task", Method: "CancelTask", Params: taskParams(func(e *confEnv) string { return e.task2 }),
			Want: confOutcome{Check: func(t *testing.T, e *confEnv, res map[string]any, _ []map[string]any) {
				if id := taskID(t, res); id != e.task2 {
					t.Fatalf("canceled %s, want %s", id, e.task2)
				}
				wantState(t, res, "TASK_STATE_CANCELED")
			}},
		},
		{
			Name: "invalid params: message missing", Method: "SendMessage",
			Params: func(*confEnv) map[string]any { return map[string]any{} },
			Want:   confOutcome{Err: &confError{RPC: -32602, HTTP: 400, GRPC: codes.InvalidArgument, Reason: "INVALID_PARAMS"}},
		},
		{
			Name: "unknown method", Method: "NoSuchMethod",
			Params: func(*confEnv) map[string]any { return map[string]any{} },
			// gRPC: a method lf.a2a.v1.A2AService lacks.
			Want: confOutcome{Err: &confError{RPC: -32601, GRPC: codes.Unimplemented, Reason: "METHOD_NOT_FOUND"}},
			Differs: map[string]confOutcome{
				bREST: {NA: "HTTP+JSON has no method names: an unknown path is no A2A route"},
			},
		},
		{
			Name: "version unsupported", Method: "GetTask", Version: "0.9", Params: taskParams(first),
			Want:    confOutcome{Err: &confError{RPC: -32009, HTTP: 400, GRPC: codes.FailedPrecondition, Reason: "VERSION_NOT_SUPPORTED"}},
			Differs: map[string]confOutcome{bStdio: {NA: noStdioHeaders}},
		},
		{
			Name: "version with a patch number", Method: "GetTask", Version: "1.0.7", Params: taskParams(first),
			Want: confOutcome{Check: func(t *testing.T, e *confEnv, res map[string]any, _ []map[string]any) {
				if id := taskID(t, res); id != e.task {
					t.Fatalf("GetTask returned %s, want %s", id, e.task)
				}
			}},
			Differs: map[string]confOutcome{bStdio: {NA: noStdioHeaders}},
		},
		{
			Name: "CreateTaskPushNotificationConfig", Method: "CreateTaskPushNotificationConfig",
			Params: func(e *confEnv) map[string]any {
				return map[string]any{"taskId": e.task, "id": "cfg-1", "url": confPushURL, "token": "conf-push-token"}
			},
			Want: confOutcome{Check: func(t *testing.T, e *confEnv, res map[string]any, _ []map[string]any) {
				if res["id"] != "cfg-1" || res["taskId"] != e.task || res["url"] != confPushURL {
					t.Fatalf("created config %v", res)
				}
			}},
		},
		{
			Name: "GetTaskPushNotificationConfig", Method: "GetTaskPushNotificationConfig",
			Params: func(e *confEnv) map[string]any { return map[string]any{"taskId": e.task, "id": "cfg-1"} },
			Want: confOutcome{Check: func(t *testing.T, e *confEnv, res map[string]any, _ []map[string]any) {
				if res["id"] != "cfg-1" || res["taskId"] != e.task || res["url"] != confPushURL || res["token"] != "conf-push-token" {
					t.Fatalf("config %v", res)
				}
			}},
		},
		{
			Name: "GetTaskPushNotificationConfig of another principal", Method: "GetTaskPushNotificationConfig", Principal: confBob,
			Params:  func(e *confEnv) map[string]any { return map[string]any{"taskId": e.task, "id": "cfg-1"} },
			Want:    confOutcome{Err: notFound},
			Differs: map[string]confOutcome{bStdio: {NA: noStdioAuth}},
		},
		{
			Name: "ListTaskPushNotificationConfigs", Method: "ListTaskPushNotificationConfigs",
			Params: func(e *confEnv) map[string]any { return map[string]any{"taskId": e.task} },
			Want: confOutcome{Check: func(t *testing.T, e *confEnv, res map[string]any, _ []map[string]any) {
				cfgs, _ := res["configs"].([]any)
				if len(cfgs) != 1 || cfgs[0].(map[string]any)["id"] != "cfg-1" {
					t.Fatalf("configs %v, want cfg-1 only", res)
				}
			}},
		},
		{
			Name: "DeleteTaskPushNotificationConfig", Method: "DeleteTaskPushNotificationConfig",
			Params: func(e *confEnv) map[string]any { return map[string]any{"taskId": e.task, "id": "cfg-1"} },
			Want: confOutcome{Check: func(t *testing.T, e *confEnv, res map[string]any, _ []map[string]any) {
				if len(res) != 0 {
					t.Fatalf("delete answered %v, want an empty result", res)
				}
			}},
		},
		{
			Name: "GetTaskPushNotificationConfig after delete", Method: "GetTaskPushNotificationConfig",
			Params: func(e *confEnv) map[string]any { return map[string]any{"taskId": e.task, "id": "cfg-1"} },
			Want:   confOutcome{Err: notFound},
		},
		{
			Name: "GetExtendedAgentCard", Method: "GetExtendedAgentCard",
			Params: func(*confEnv) map[string]any { return map[string]any{} },
			Want: confOutcome{Check: func(t *testing.T, e *confEnv, res map[string]any, _ []map[string]any) {
				confCheckExtendedCard(t, res, e.base)
			}},
		},
		{
			Name: "SendStreamingMessage ends input-required", Method: "SendStreamingMessage", Stream: true,
			Params: func(*confEnv) map[string]any { return confMessage("stream " + confText) },
			Want: confOutcome{Check: func(t *testing.T, _ *confEnv, _ map[string]any, evs []map[string]any) {
				if len(evs) < 2 || evs[0]["task"] == nil {
					t.Fatalf("events %v, want the task first, then updates", evs)
				}
				last, _ := evs[len(evs)-1]["statusUpdate"].(map[string]any)
				st, _ := last["status"].(map[string]any)
				if st["state"] != "TASK_STATE_INPUT_REQUIRED" {
					t.Fatalf("last event %v, want a statusUpdate input-required", evs[len(evs)-1])
				}
				if b, _ := json.Marshal(evs); !strings.Contains(string(b), "Echo: stream "+confText) {
					t.Fatalf("no event carries the echo: %s", b)
				}
			}},
		},
		{
			Name: "SubscribeToTask unknown id", Method: "SubscribeToTask", Stream: true,
			Params: func(*confEnv) map[string]any { return map[string]any{"id": "no-such-task"} },
			Want:   confOutcome{Err: notFound},
		},
		{
			Name: "SubscribeToTask of another principal", Method: "SubscribeToTask", Stream: true, Principal: confBob,
			Params:  taskParams(first),
			Want:    confOutcome{Err: notFound},
			Differs: map[string]confOutcome{bStdio: {NA: noStdioAuth}},
		},
		{
			Name: "SendStreamingMessage invalid params", Method: "SendStreamingMessage", Stream: true,
			Params: func(*confEnv) map[string]any { return map[string]any{} },
			Want:   confOutcome{Err: &confError{RPC: -32602, HTTP: 400, GRPC: codes.InvalidArgument, Reason: "INVALID_PARAMS"}},
		},
	}
}

// confCheckExtendedCard checks the extended card of the conformance
// gateway: its name and the four interfaces, at base when base is set.
func confCheckExtendedCard(t *testing.T, res map[string]any, base string) {
	t.Helper()
	ifaces, _ := res["supportedInterfaces"].([]any)
	got := map[string]string{}
	for _, i := range ifaces {
		m, _ := i.(map[string]any)
		u, _ := m["url"].(string)
		b, _ := m["protocolBinding"].(string)
		got[b] = u
	}
	if res["name"] != "conf" || len(got) != 5 || got["JSONRPC"] == "" || got["HTTP+JSON"] == "" || got["GRPC"] == "" || got["websocket"] == "" ||
		got[bGRPCJSONRPC] == "" {
		t.Fatalf("extended card %v, want conf with JSONRPC, HTTP+JSON, GRPC, grpc-jsonrpc (XPORT-6) and websocket", res)
	}
	if base == "" {
		return
	}
	hostPort := strings.TrimPrefix(base, "http://")
	if got["JSONRPC"] != base+"/" || got["HTTP+JSON"] != base+"/" || got["GRPC"] != hostPort || got["websocket"] != "ws://"+hostPort+"/ws" {
		t.Fatalf("extended card interfaces %v, want them at %s", got, base)
	}
	confGRPCJSONRPCCard(t, got, base)
}

// confSite is the one gateway: auth with four principals and their
// limits, A2A 0.3 (legacy_v03), push, gRPC, WebSocket and Redis Streams
// JSON-RPC on redisAddr.
func confSite(redisAddr string) string {
	return `a2a {
	card {
		name conf` + confScopeSkill + `
	}
	auth {
		principal alice bearer ` + confTokens[confAlice] + `
		principal bob bearer ` + confTokens[confBob] + `
		principal monitor bearer ` + confTokens[confMonitor] + `
		principal ratebot bearer ` + confTokens[confRateBot] + confScopeJWT + `
		no_env
	}
	limits monitor {
		allow_methods GetTask ListTasks
	}
	limits ratebot {
		rate 1/h burst 1
	}` + confScopeLimits + `
	legacy_v03
	grpc
	grpc_jsonrpc
	websocket /ws
	push {
		queue local-file
		allow_private_networks 127.0.0.0/8
	}
	redis_rpc {
		url redis://` + redisAddr + `/0
	}
}`
}

// TestConformanceBindings runs the conformance table over every binding.
func TestConformanceBindings(t *testing.T) {
	t.Parallel()
	redisAddr := harness.StartRedis(t)
	gw := harness.StartGatewayWith(t, confSite(redisAddr), harness.Options{Global: "servers {\n\tprotocols h1 h2 h2c\n}"})

	// stdio: the same Caddyfile in a directory of its own (its own
	// XDG_DATA_HOME, hence data_dir), as alice.
	stdioDir := t.TempDir()
	cfg, err := os.ReadFile(gw.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stdioDir, "Caddyfile"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}

	drivers := map[string]func(t *testing.T) confDriver{
		bJSONRPC:     func(*testing.T) confDriver { return jsonrpcHTTPDriver{httpBase{gw.URL}} },
		bREST:        func(*testing.T) confDriver { return restDriver{httpBase{gw.URL}} },
		bGRPC:        func(t *testing.T) confDriver { return newGRPCDriver(t, gw.Addr) },
		bGRPCJSONRPC: func(t *testing.T) confDriver { return newGRPCJSONRPCDriver(t, gw.Addr) }, // XPORT-6
		bWS: func(t *testing.T) confDriver {
			return &wsDriver{t: t, url: wsURL(gw.URL, "/ws"), conns: map[string]*wsTestConn{}}
		},
		bRedis: func(t *testing.T) confDriver { return &redisDriver{t: t, rdb: rrpcClient(t, redisAddr)} },
		bStdio: func(t *testing.T) confDriver {
			return &stdioDriver{start: func(principal string) *stdioProc {
				dir := stdioDir // alice's; another principal's process needs a data_dir of its own (OPS-6)
				if principal != confAlice {
					dir = t.TempDir()
					if err := os.WriteFile(filepath.Join(dir, "Caddyfile"), cfg, 0o600); err != nil {
						t.Fatal(err)
					}
				}
				return startStdio(t, dir, "--principal", principal)
			}}
		},
	}
	table := confTable()
	for _, binding := range confBindings {
		t.Run(binding, func(t *testing.T) {
			d := drivers[binding](t)
			env := &confEnv{binding: binding, base: gw.URL}
			for _, c := range table {
				want := c.Want
				if o, ok := c.Differs[binding]; ok {
					want = o
				}
				if want.NA != "" {
					t.Logf("%s: not applicable on %s: %s", c.Name, binding, want.NA)
					continue
				}
				if !t.Run(c.Name, func(t *testing.T) { confRun(t, d, env, c, want) }) && c.Save != nil {
					t.Fatalf("%s failed; the cases after it depend on it", c.Name)
				}
			}
		})
	}
}

// confRun runs one case on one binding.
func confRun(t *testing.T, d confDriver, env *confEnv, c confCase, want confOutcome) {
	principal := c.Principal
	switch principal {
	case "":
		principal = confAlice
	case "-":
		principal = ""
	}
	r := confReq{Principal: principal, Method: c.Method, Version: c.Version}
	if c.Params != nil {
		r.Params = c.Params(env)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range c.Warm {
		if c.Stream {
			_, _ = d.stream(ctx, r)
		} else {
			_, _ = d.call(ctx, r)
		}
	}
	var res json.RawMessage
	var events []json.RawMessage
	var got *confErr
	if c.Stream {
		events, got = d.stream(ctx, r)
	} else {
		res, got = d.call(ctx, r)
	}
	if want.Err != nil {
		if got == nil {
			t.Fatalf("%s: got a result %s %s, want error %+v", c.Method, res, events, *want.Err)
		}
		if code := want.Err.code(got.Kind); code == 0 || code == -1 || code != got.Code || got.Reason != want.Err.Reason ||
			want.Err.Meta != nil && !maps.Equal(want.Err.Meta, got.Meta) || want.Err.Retry && got.Retry == "" {
			t.Fatalf("%s: got %s, want %+v", c.Method, got, *want.Err)
		}
		return
	}
	if got != nil {
		t.Fatalf("%s: error %s, want a result", c.Method, got)
	}
	var m map[string]any
	if len(res) > 0 && string(res) != "null" {
		if err := json.Unmarshal(res, &m); err != nil {
			t.Fatalf("result is not an object: %s", res)
		}
	}
	var evs []map[string]any
	for _, e := range events {
		var ev map[string]any
		if err := json.Unmarshal(e, &ev); err != nil {
			t.Fatalf("event is not an object: %s", e)
		}
		evs = append(evs, ev)
	}
	want.Check(t, env, m, evs)
	if c.Save != nil {
		c.Save(env, m)
	}
}

package tests

// Rows of the conformance table (conformance_bindings_test.go) for policy
// refusals (AUTH-6, issue 33.2) and A2A 0.3 principal isolation (RPC-2,
// AUTH-3; issue 33.3), on every binding.

import (
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

// confPolicyRows: a method outside the caller's allow-list is refused as
// PERMISSION_DENIED, a request over the caller's rate as
// RESOURCE_EXHAUSTED saying when to retry — in each carrier's form: HTTP
// 403/429 (+ Retry-After) on the HTTP bindings, gRPC PERMISSION_DENIED (7)
// and RESOURCE_EXHAUSTED (8) with RetryInfo, the JSON-RPC codes with the
// ErrorInfo (and RetryInfo) on WebSocket, Redis Streams and stdio (a stdio
// process per principal: --principal monitor, --principal ratebot).
func confPolicyRows() []confCase {
	denied := &confError{RPC: -32050, HTTP: 403, GRPC: codes.PermissionDenied, Reason: "PERMISSION_DENIED"}
	exhausted := &confError{RPC: -32051, HTTP: 429, GRPC: codes.ResourceExhausted, Reason: "RESOURCE_EXHAUSTED", Retry: true}
	return []confCase{
		{
			Name: "SendMessage outside the allow-list", Method: "SendMessage", Principal: confMonitor,
			Params: func(*confEnv) map[string]any { return confMessage("not allowed") },
			Want:   confOutcome{Err: denied},
		},
		{
			Name: "SendStreamingMessage outside the allow-list", Method: "SendStreamingMessage", Principal: confMonitor, Stream: true,
			Params: func(*confEnv) map[string]any { return confMessage("not allowed") },
			Want:   confOutcome{Err: denied},
		},
		{
			Name: "GetTask inside the allow-list is served", Method: "GetTask", Principal: confMonitor,
			// The allow-list admits the method; the owner scope still
			// hides alice's task (and stdio's monitor has none).
			Params: func(*confEnv) map[string]any { return map[string]any{"id": "no-such-task"} },
			Want:   confOutcome{Err: &confError{RPC: -32001, HTTP: 404, GRPC: codes.NotFound, Reason: "TASK_NOT_FOUND"}},
		},
		{
			Name: "ListTasks over the rate", Method: "ListTasks", Principal: confRateBot, Warm: 1,
			// rate 1/h burst 1: the warm-up call spends the burst (on the
			// first binding; the bucket is shared by every binding).
			Params: func(*confEnv) map[string]any { return map[string]any{} },
			Want:   confOutcome{Err: exhausted},
		},
		{
			Name: "SendMessage over the rate", Method: "SendMessage", Principal: confRateBot,
			Params: func(*confEnv) map[string]any { return confMessage("too fast") },
			Want:   confOutcome{Err: exhausted},
		},
	}
}

// confV03Rows: the A2A 0.3 method names (legacy_v03) keep the owner
// scope: bob's 0.3 calls on alice's task find no task, as his 1.0 calls
// do; alice's own 0.3 tasks/get works, so the refusals are not a broken
// 0.3 path. 0.3 names exist on the JSON-RPC carriers only.
func confV03Rows() []confCase {
	na := map[string]confOutcome{
		bREST:  {NA: "HTTP+JSON has no A2A 0.3 method names"},
		bGRPC:  {NA: "gRPC has no A2A 0.3 method names"},
		bStdio: {NA: "stdio trusts its parent: one principal, no auth (XPORT-4)"},
	}
	notFound03 := &confError{RPC: -32001, Reason: "TASK_NOT_FOUND"}
	id := func(e *confEnv) map[string]any { return map[string]any{"id": e.task} }
	own := map[string]confOutcome{bREST: na[bREST], bGRPC: na[bGRPC]}
	return []confCase{
		{
			Name: "0.3 tasks/get ok", Method: "tasks/get", Version: "0.3", Params: id,
			Want: confOutcome{Check: func(t *testing.T, e *confEnv, res map[string]any, _ []map[string]any) {
				if res["id"] != e.task || res["kind"] != "task" {
					t.Fatalf("0.3 tasks/get: %v, want the 0.3 task %s", res, e.task)
				}
			}},
			Differs: own,
		},
		{Name: "0.3 tasks/get of another principal", Method: "tasks/get", Version: "0.3", Principal: confBob, Params: id,
			Want: confOutcome{Err: notFound03}, Differs: na},
		{Name: "0.3 tasks/cancel of another principal", Method: "tasks/cancel", Version: "0.3", Principal: confBob, Params: id,
			Want: confOutcome{Err: notFound03}, Differs: na},
		{Name: "0.3 tasks/resubscribe of another principal", Method: "tasks/resubscribe", Version: "0.3", Principal: confBob, Stream: true, Params: id,
			Want: confOutcome{Err: notFound03}, Differs: na},
		{Name: "0.3 tasks/pushNotificationConfig/list of another principal", Method: "tasks/pushNotificationConfig/list", Version: "0.3", Principal: confBob, Params: id,
			Want: confOutcome{Err: notFound03}, Differs: na},
		{
			Name: "0.3 message/send to another principal's task", Method: "message/send", Version: "0.3", Principal: confBob,
			Params: func(e *confEnv) map[string]any {
				return map[string]any{"message": map[string]any{"kind": "message", "messageId": fmt.Sprintf("conf-v03-%d", time.Now().UnixNano()), "role": "user", "taskId": e.task,
					"parts": []any{map[string]any{"kind": "text", "text": "not yours"}}}}
			},
			Want: confOutcome{Err: notFound03}, Differs: na,
		},
	}
}

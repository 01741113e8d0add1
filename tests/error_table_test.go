package tests

// The A2A 1.0 §5.4 error table over the real binary (issue 34; RPC-1,
// RPC-13, XPORT-2, AUTH-6, issue 26 item 4): for each error type, a
// request that really causes it, sent over JSON-RPC, HTTP+JSON and gRPC,
// asserting what each binding answers — the JSON-RPC code, the HTTP status,
// the google.rpc.Status `code` and `status` (AIP-193) of the HTTP+JSON
// body, the gRPC status code, and the ErrorInfo reason everywhere.
//
// The expected values are written out here from the spec's table (the
// 1.0.1 columns, which a2a-go v2 follows), never read back from the
// gateway's own table. ExtendedAgentCardNotConfiguredError has no row: the
// gateway declares the extended card only with auth on and then always
// builds it from the public card, so no request can cause it; its mapping
// on the bindings is covered by agent.TestExtendedCard* over a Service
// whose card source returns none.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	gpj "google.golang.org/protobuf/encoding/protojson"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// Tokens of the error-table gateway's principals.
const (
	etAlice   = "et-alice-token-0123456789"
	etMonitor = "et-monitor-token-0123456789" // limits: GetTask only
	etBot     = "et-bot-token-0123456789"     // limits: rate 1/m burst 1
	etAPIKey  = "et-api-key-0123456789"
	etKeyName = "X-Gw-Key"
	etOddType = "application/x-unsupported-tck-type"
)

// etAgentScript is an exec agent (turn-event protocol v1) whose prompt
// picks the outcome: "complete" ends the task COMPLETED, "malformed"
// writes a line that is not JSON (InvalidAgentResponseError), anything
// else ends the turn input-required.
const etAgentScript = `#!/bin/sh
while IFS= read -r line; do
	case "$line" in
	*'"type":"cancel"'*) ;;
	*complete*)
		printf '%s\n' '{"v":1,"type":"text","text":"done"}'
		printf '%s\n' '{"v":1,"type":"end","outcome":"completed"}' ;;
	*malformed*)
		echo 'this is not json' ;;
	*)
		printf '%s\n' '{"v":1,"type":"text","text":"ok"}'
		printf '%s\n' '{"v":1,"type":"end","outcome":"input_required"}' ;;
	esac
done
`

// etGRPCGlobal turns on h2c for the gRPC binding.
var etGRPCGlobal = harness.Options{Global: "servers {\n\tprotocols h1 h2c\n}"}

// startErrorTableGateway starts the gateway with auth (bearer principals
// and an API key under a custom header), limits, gRPC, no push, and the
// exec agent above; the card's max_age is 30s.
func startErrorTableGateway(t *testing.T) *harness.Gateway {
	t.Helper()
	script := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(script, []byte(etAgentScript), 0o755); err != nil {
		t.Fatal(err)
	}
	return harness.StartGatewayWith(t, `a2a {
	card {
		name et
		max_age 30s
	}
	auth {
		principal alice bearer `+etAlice+`
		principal alice api_key `+etAPIKey+`
		principal monitor bearer `+etMonitor+`
		principal bot bearer `+etBot+`
		api_key_header `+etKeyName+`
		no_env
	}
	limits monitor {
		allow_methods GetTask
	}
	limits bot {
		rate 1/m burst 1
	}
	grpc
	backend exec `+script+` {
		mode per_turn
		grace_period 500ms
	}
}`, etGRPCGlobal)
}

// etRow is one row of §5.4 as each binding must carry it.
type etRow struct {
	rpc    int        // JSON-RPC error code
	http   int        // HTTP+JSON status and the body's error.code
	status string     // the body's error.status: the gRPC code name (AIP-193)
	grpc   codes.Code // gRPC status code
	reason string     // google.rpc.ErrorInfo reason
}

// The rows, as A2A 1.0.1 §5.4 writes them, plus the gateway's limits rows
// (docs/configuration.md "Authorization and rate limits").
var (
	etTaskNotFound     = etRow{-32001, 404, "NOT_FOUND", codes.NotFound, "TASK_NOT_FOUND"}
	etNotCancelable    = etRow{-32002, 400, "FAILED_PRECONDITION", codes.FailedPrecondition, "TASK_NOT_CANCELABLE"}
	etPushNotSupported = etRow{-32003, 400, "FAILED_PRECONDITION", codes.FailedPrecondition, "PUSH_NOTIFICATION_NOT_SUPPORTED"}
	etUnsupportedOp    = etRow{-32004, 400, "FAILED_PRECONDITION", codes.FailedPrecondition, "UNSUPPORTED_OPERATION"}
	etContentType      = etRow{-32005, 415, "INVALID_ARGUMENT", codes.InvalidArgument, "CONTENT_TYPE_NOT_SUPPORTED"}
	etInvalidAgent     = etRow{-32006, 500, "INTERNAL", codes.Internal, "INVALID_AGENT_RESPONSE"}
	etExtRequired      = etRow{-32008, 400, "FAILED_PRECONDITION", codes.FailedPrecondition, "EXTENSION_SUPPORT_REQUIRED"}
	etVersion          = etRow{-32009, 400, "FAILED_PRECONDITION", codes.FailedPrecondition, "VERSION_NOT_SUPPORTED"}
	etParse            = etRow{-32700, 400, "INVALID_ARGUMENT", codes.InvalidArgument, "PARSE_ERROR"}
	etInvalidRequest   = etRow{-32600, 400, "INVALID_ARGUMENT", codes.InvalidArgument, "INVALID_REQUEST"}
	etMethodNotFound   = etRow{-32601, 404, "UNIMPLEMENTED", codes.Unimplemented, "METHOD_NOT_FOUND"}
	etInvalidParams    = etRow{-32602, 400, "INVALID_ARGUMENT", codes.InvalidArgument, "INVALID_PARAMS"}
	etPermission       = etRow{-32050, 403, "PERMISSION_DENIED", codes.PermissionDenied, "PERMISSION_DENIED"}
	etExhausted        = etRow{-32051, 429, "RESOURCE_EXHAUSTED", codes.ResourceExhausted, "RESOURCE_EXHAUSTED"}
)

// etCase is one request of the table.
type etCase struct {
	name    string
	site    string // "main" (startErrorTableGateway) or "ext" (a required extension)
	token   string // bearer token ("" for none)
	method  string
	params  func() map[string]any
	version string // A2A-Version; "" is 1.0
	want    etRow
	// rpcBody, when set, is the JSON-RPC body sent as is.
	rpcBody string
	// rpcHTTP is the HTTP status of the JSON-RPC answer (0: 200; limits
	// refusals keep their HTTP meaning).
	rpcHTTP int
	// rest, when set, replaces the route of method: verb, path, body.
	rest *[3]string
	// restHTTP, when set, is the HTTP status instead of want.http.
	restHTTP int
	// na names the bindings the case does not apply to, with the reason.
	na map[string]string
	// retry: the gRPC status must carry a google.rpc.RetryInfo, and the
	// HTTP answers a Retry-After.
	retry bool
}

// etEnv is what the cases need from the running gateways.
type etEnv struct {
	sites     map[string]*harness.Gateway
	completed string // alice's COMPLETED task
	conns     map[string]*grpc.ClientConn
}

func etMsg(text string) map[string]any {
	return map[string]any{"message": map[string]any{
		"role": "ROLE_USER", "messageId": fmt.Sprintf("et-%d", time.Now().UnixNano()),
		"parts": []any{map[string]any{"text": text}},
	}}
}

func etTable(env *etEnv) []etCase {
	noParse := "gRPC messages are protobuf: there is no JSON to break"
	noEnvelope := "only JSON-RPC has a request envelope"
	return []etCase{
		{name: "TaskNotFound", token: etAlice, method: "GetTask",
			params: func() map[string]any { return map[string]any{"id": "no-such-task"} }, want: etTaskNotFound},
		{name: "TaskNotCancelable (COMPLETED task)", token: etAlice, method: "CancelTask",
			params: func() map[string]any { return map[string]any{"id": env.completed} }, want: etNotCancelable},
		{name: "PushNotificationNotSupported", token: etAlice, method: "CreateTaskPushNotificationConfig",
			params: func() map[string]any {
				return map[string]any{"taskId": env.completed, "url": "https://hooks.example.com/a2a", "token": "t"}
			}, want: etPushNotSupported},
		{name: "UnsupportedOperation (message to a terminal task)", token: etAlice, method: "SendMessage",
			params: func() map[string]any {
				m := etMsg("more")
				m["message"].(map[string]any)["taskId"] = env.completed
				return m
			}, want: etUnsupportedOp},
		{name: "ContentTypeNotSupported", token: etAlice, method: "SendMessage",
			params: func() map[string]any {
				m := etMsg("x")
				m["message"].(map[string]any)["parts"] = []any{map[string]any{"text": "x", "mediaType": etOddType}}
				return m
			}, want: etContentType},
		{name: "InvalidAgentResponse (non-JSON backend line)", token: etAlice, method: "SendMessage",
			params: func() map[string]any { return etMsg("malformed") }, want: etInvalidAgent},
		{name: "ExtensionSupportRequired (SendMessage)", site: "ext", method: "SendMessage",
			params: func() map[string]any { return etMsg("hi") }, want: etExtRequired},
		{name: "ExtensionSupportRequired (GetTask, a read)", site: "ext", method: "GetTask",
			params: func() map[string]any { return map[string]any{"id": "any"} }, want: etExtRequired},
		{name: "VersionNotSupported", token: etAlice, method: "GetTask", version: "2.0",
			params: func() map[string]any { return map[string]any{"id": "any"} }, want: etVersion},
		{name: "JSONParseError", token: etAlice, method: "SendMessage", want: etParse,
			rpcBody: `{"jsonrpc":"2.0","id":1,"method":`, rest: &[3]string{"POST", "/message:send", `{"message":`},
			na: map[string]string{bGRPC: noParse}},
		{name: "InvalidRequest", token: etAlice, method: "SendMessage", want: etInvalidRequest,
			rpcBody: `{"jsonrpc":"2.0","id":1,"params":{}}`,
			na:      map[string]string{bREST: noEnvelope, bGRPC: noEnvelope}},
		{name: "MethodNotFound", token: etAlice, method: "NoSuchMethod", want: etMethodNotFound,
			// HTTP+JSON has no method names: an unserved verb on a route is
			// 405 with the same reason and status.
			rest: &[3]string{"DELETE", "/tasks", ""}, restHTTP: http.StatusMethodNotAllowed},
		{name: "InvalidParams", token: etAlice, method: "SendMessage",
			params: func() map[string]any { return map[string]any{} }, want: etInvalidParams},
		{name: "limits: method not allowed", token: etMonitor, method: "SendMessage",
			params: func() map[string]any { return etMsg("hi") }, want: etPermission, rpcHTTP: 403},
		{name: "limits: over the rate", token: etBot, method: "ListTasks",
			params: func() map[string]any { return map[string]any{} }, want: etExhausted, rpcHTTP: 429, retry: true},
	}
}

// TestErrorTable runs the §5.4 table over JSON-RPC, HTTP+JSON and gRPC.
func TestErrorTable(t *testing.T) {
	t.Parallel()
	env := &etEnv{sites: map[string]*harness.Gateway{
		"main": startErrorTableGateway(t),
		"ext": harness.StartGatewayWith(t, `a2a {
	card {
		name et-ext
		extension urn:example:required-ext required
	}
	grpc
}`, etGRPCGlobal),
	}, conns: map[string]*grpc.ClientConn{}}
	main := env.sites["main"]
	res, rerr := harness.At(main.URL, harness.Bearer(etAlice)).RPC(t, "SendMessage", etMsg("complete"))
	if rerr != nil || harness.TaskState(taskOf(t, res)) != "TASK_STATE_COMPLETED" {
		t.Fatalf("the COMPLETED task: %v %v", res, rerr)
	}
	env.completed = sentTaskID(res)
	// bot spends its one request of the minute: every later one is refused.
	if r := harness.At(main.URL, harness.Bearer(etBot)).Call(t, "ListTasks", map[string]any{}); r.StatusCode != http.StatusOK {
		t.Fatalf("bot's first request: %d %s", r.StatusCode, r.Raw)
	}
	for name, gw := range env.sites {
		conn, err := grpc.NewClient(gw.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		env.conns[name] = conn
	}
	for _, c := range etTable(env) {
		if c.site == "" {
			c.site = "main"
		}
		t.Run(c.name, func(t *testing.T) {
			for _, b := range []string{bJSONRPC, bREST, bGRPC} {
				if why := c.na[b]; why != "" {
					t.Logf("%s: not applicable: %s", b, why)
					continue
				}
				t.Run(b, func(t *testing.T) { etRun(t, env, c, b) })
			}
		})
	}
}

func etRun(t *testing.T, env *etEnv, c etCase, binding string) {
	gw := env.sites[c.site]
	var params map[string]any
	if c.params != nil {
		params = c.params()
	}
	version := c.version
	if version == "" {
		version = "1.0"
	}
	switch binding {
	case bJSONRPC:
		body := c.rpcBody
		if body == "" {
			body = harness.Envelope(c.method, params)
		}
		r := harness.At(gw.URL+"/").Do(t, http.MethodPost, body, harness.Bearer(c.token), harness.Header("A2A-Version", version))
		want := c.rpcHTTP
		if want == 0 {
			want = http.StatusOK
		}
		code, _ := r.Error["code"].(float64)
		if r.StatusCode != want || int(code) != c.want.rpc || reasonIn(r.Error) != c.want.reason {
			t.Errorf("JSON-RPC: HTTP %d %s; want HTTP %d, code %d, reason %s", r.StatusCode, r.Raw, want, c.want.rpc, c.want.reason)
		}
		if c.retry && r.Header.Get("Retry-After") == "" {
			t.Errorf("JSON-RPC: no Retry-After on %d", r.StatusCode)
		}
	case bREST:
		etRunREST(t, gw, c, params, version)
	case bGRPC:
		etRunGRPC(t, env.conns[c.site], c, params, version)
	}
}

// etRESTError is the google.rpc.Status body of an HTTP+JSON error.
type etRESTError struct {
	Error struct {
		Code    int             `json:"code"`
		Status  string          `json:"status"`
		Message string          `json:"message"`
		Details json.RawMessage `json:"details"`
	} `json:"error"`
}

func etRunREST(t *testing.T, gw *harness.Gateway, c etCase, params map[string]any, version string) {
	var verb, path, body string
	if c.rest != nil {
		verb, path, body = c.rest[0], c.rest[1], c.rest[2]
	} else {
		v, p, b, ok := restRouteOf(confReq{Method: c.method, Params: params})
		if !ok {
			t.Fatalf("no HTTP+JSON route for %s", c.method)
		}
		verb, path, body = v, p, string(b)
	}
	r := harness.At(gw.URL+path).Do(t, verb, body, harness.Bearer(c.token), harness.Header("A2A-Version", version))
	want := c.want.http
	if c.restHTTP != 0 {
		want = c.restHTTP
	}
	var st etRESTError
	_ = json.Unmarshal(r.Raw, &st)
	reason, _ := errorInfoOf(st.Error.Details)
	if r.StatusCode != want || st.Error.Code != want || st.Error.Status != c.want.status || reason != c.want.reason ||
		!strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Errorf("HTTP+JSON %s %s: HTTP %d %q %s; want %d, status %s, reason %s", verb, path, r.StatusCode, r.Header.Get("Content-Type"), r.Raw, want, c.want.status, c.want.reason)
	}
	if c.retry && r.Header.Get("Retry-After") == "" {
		t.Errorf("HTTP+JSON: no Retry-After on %d", r.StatusCode)
	}
}

func etRunGRPC(t *testing.T, conn *grpc.ClientConn, c etCase, params map[string]any, version string) {
	req, resp := grpcMessagesOf(c.method)
	if params != nil {
		b, _ := json.Marshal(params)
		if err := (gpj.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, req); err != nil {
			t.Fatalf("encoding the request: %v", err)
		}
	}
	md := metadata.Pairs("a2a-version", version)
	if c.token != "" {
		md.Append("authorization", "Bearer "+c.token)
	}
	ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(context.Background(), md), 30*time.Second)
	defer cancel()
	err := conn.Invoke(ctx, "/lf.a2a.v1.A2AService/"+c.method, req, resp)
	st := status.Convert(err)
	var reason string
	var retry *errdetails.RetryInfo
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			if d.GetDomain() == a2a.ErrorDomain {
				reason = d.GetReason()
			}
		case *errdetails.RetryInfo:
			retry = d
		}
	}
	if err == nil || st.Code() != c.want.grpc || reason != c.want.reason {
		t.Errorf("gRPC %s: %v %q reason %q; want %v (%d), reason %s", c.method, st.Code(), st.Message(), reason, c.want.grpc, c.want.grpc, c.want.reason)
	}
	if c.retry && (retry == nil || retry.GetRetryDelay().AsDuration() < time.Second) {
		t.Errorf("gRPC %s: RetryInfo %v, want a retry delay of at least 1s", c.method, retry)
	}
}

package tests

// XPORT-6: the gRPC JSON-RPC envelope service
// (iac_code.a2a.transports.proto.A2AJsonRpc), called with the stubs
// generated from its .proto by a raw grpc-go client (not our client):
// unary and streaming calls, auth from the metadata (missing, wrong,
// right; bearer and API key), carrier-level refusals, a payload above the
// size limit, a stream across a config reload (OPS-3), the card's
// interface and `caddy a2a call --binding grpc-jsonrpc` (CLI-1).

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/caddy-a2a/caddy-a2a/agent/binding/grpcjsonrpc/envelopepb"
	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

const (
	gjToken  = "gj-bearer-token-0123456789"
	gjAPIKey = "gj-api-key-0123456789abcdef"
)

// gjSite serves the envelope service only (no official gRPC service),
// with a bearer principal and an API-key principal, and the given extra
// options.
func gjSite(name, extra string) string {
	return "a2a {\n\tcard {\n\t\tname " + name + "\n\t}\n\towner_scope shared\n\tauth {\n\t\tprincipal alice bearer " + gjToken +
		"\n\t\tprincipal keybot api_key " + gjAPIKey + "\n\t\tapi_key_header X-Gj-Key\n\t\tno_env\n\t}\n\t" + extra + "\n\tgrpc_jsonrpc\n}"
}

// gjStart starts a gateway with gjSite on an h2c listener.
func gjStart(t *testing.T, extra string, admin bool) *harness.Gateway {
	t.Helper()
	return harness.StartGatewayWith(t, gjSite("gj-a", extra), harness.Options{Global: "servers {\n\tprotocols h1 h2c\n}", Admin: admin})
}

// gjClient is a raw client of the envelope service on target (h2c).
func gjClient(t *testing.T, target string) envelopepb.A2AJsonRpcClient {
	t.Helper()
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return envelopepb.NewA2AJsonRpcClient(conn)
}

// gjCtx carries the metadata pairs kv and A2A-Version 1.0.
func gjCtx(t *testing.T, kv ...string) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return metadata.NewOutgoingContext(ctx, metadata.Pairs(append([]string{"a2a-version", "1.0"}, kv...)...))
}

// gjRequest is a JSON-RPC request payload.
func gjRequest(id any, method string, params any) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return b
}

// gjSendParams are SendMessage params with text.
func gjSendParams(text string) map[string]any {
	return map[string]any{"message": map[string]any{"role": "ROLE_USER", "messageId": "gj-" + text + time.Now().Format("150405.000000000"),
		"parts": []any{map[string]any{"text": text}}}}
}

// gjResponse is a decoded response payload.
type gjResponse struct {
	ID     json.RawMessage `json:"id"`
	Result map[string]any  `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Final *bool `json:"final"`
}

func gjDecode(t *testing.T, payload []byte) gjResponse {
	t.Helper()
	var r gjResponse
	if err := json.Unmarshal(payload, &r); err != nil {
		t.Fatalf("payload %q is not a JSON object: %v", payload, err)
	}
	return r
}

// gjStream reads every envelope of a stream.
func gjStream(t *testing.T, st grpc.ServerStreamingClient[envelopepb.JsonRpcEnvelope]) []*envelopepb.JsonRpcEnvelope {
	t.Helper()
	var envs []*envelopepb.JsonRpcEnvelope
	for {
		env, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return envs
		}
		if err != nil {
			t.Fatalf("stream broke after %d envelopes: %v", len(envs), err)
		}
		envs = append(envs, env)
	}
}

// TestGRPCJSONRPCRawClient: unary and streaming calls, and auth from the
// metadata, with the generated stubs.
func TestGRPCJSONRPCRawClient(t *testing.T) {
	t.Parallel()
	gw := gjStart(t, "", false)
	c := gjClient(t, gw.Addr)

	// Auth (AUTH-1 via the metadata): missing and wrong credentials get
	// UNAUTHENTICATED with the ErrorInfo reason, on both methods.
	for name, ctx := range map[string]context.Context{
		"missing":     gjCtx(t),
		"wrong":       gjCtx(t, "authorization", "Bearer not-the-token-0123456789"),
		"wrong key":   gjCtx(t, "x-gj-key", "not-the-key-0123456789"),
		"wrong basic": gjCtx(t, "authorization", "Basic YWxpY2U6eA=="),
	} {
		_, err := c.Send(ctx, &envelopepb.JsonRpcEnvelope{Payload: gjRequest(1, "ListTasks", map[string]any{})})
		code, _, info := grpcStatus(t, err)
		if code != codes.Unauthenticated || info == nil || info.GetReason() != "UNAUTHENTICATED" {
			t.Fatalf("Send with %s credentials: %v, %v; want UNAUTHENTICATED with its ErrorInfo", name, code, info)
		}
		st, err := c.Stream(ctx, &envelopepb.JsonRpcEnvelope{Payload: gjRequest(1, "SubscribeToTask", map[string]any{"id": "x"})})
		if err == nil {
			_, err = st.Recv()
		}
		if code, _, _ := grpcStatus(t, err); code != codes.Unauthenticated {
			t.Fatalf("Stream with %s credentials: %v, want UNAUTHENTICATED", name, err)
		}
	}

	alice := gjCtx(t, "authorization", "Bearer "+gjToken)
	// Unary: SendMessage, then GetTask of its task.
	out, err := c.Send(alice, &envelopepb.JsonRpcEnvelope{Payload: gjRequest("s1", "SendMessage", gjSendParams("hello envelope"))})
	if err != nil {
		t.Fatal(err)
	}
	r := gjDecode(t, out.GetPayload())
	task, _ := r.Result["task"].(map[string]any)
	taskID, _ := task["id"].(string)
	if string(r.ID) != `"s1"` || r.Error != nil || taskID == "" || !strings.Contains(string(out.GetPayload()), "Echo: hello envelope") {
		t.Fatalf("SendMessage answered %s", out.GetPayload())
	}
	out, err = c.Send(alice, &envelopepb.JsonRpcEnvelope{Payload: gjRequest(2, "GetTask", map[string]any{"id": taskID})})
	if err != nil || gjDecode(t, out.GetPayload()).Result["id"] != taskID {
		t.Fatalf("GetTask answered %s, %v", out.GetPayload(), err)
	}
	// The API-key principal (the configured header, in the metadata) does
	// not see alice's task (AUTH-4).
	keybot := gjCtx(t, "x-gj-key", gjAPIKey)
	out, err = c.Send(keybot, &envelopepb.JsonRpcEnvelope{Payload: gjRequest(3, "GetTask", map[string]any{"id": taskID})})
	if err != nil {
		t.Fatal(err)
	}
	if r := gjDecode(t, out.GetPayload()); r.Error == nil || r.Error.Code != -32001 {
		t.Fatalf("keybot's GetTask of alice's task answered %s, want TaskNotFoundError", out.GetPayload())
	}

	// Streaming: one envelope per event, only the last final, with
	// "final": true in its payload too.
	st, err := c.Stream(alice, &envelopepb.JsonRpcEnvelope{Payload: gjRequest(7, "SendStreamingMessage", gjSendParams("stream envelope"))})
	if err != nil {
		t.Fatal(err)
	}
	envs := gjStream(t, st)
	if len(envs) < 3 {
		t.Fatalf("%d envelopes, want the task, updates and the end", len(envs))
	}
	for i, env := range envs {
		r := gjDecode(t, env.GetPayload())
		last := i == len(envs)-1
		if env.GetFinal() != last || (r.Final != nil && *r.Final) != last || string(r.ID) != "7" {
			t.Fatalf("envelope %d/%d: final %v, payload %s", i+1, len(envs), env.GetFinal(), env.GetPayload())
		}
		if r.Result == nil {
			t.Fatalf("envelope %d holds no event: %s", i+1, env.GetPayload())
		}
	}
	lastEv := gjDecode(t, envs[len(envs)-1].GetPayload()).Result
	su, _ := lastEv["statusUpdate"].(map[string]any)
	if s, _ := su["status"].(map[string]any); s["state"] != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("last event %v, want the input-required status update", lastEv)
	}

	// A unary method on Stream: one final envelope.
	st, err = c.Stream(alice, &envelopepb.JsonRpcEnvelope{Payload: gjRequest(8, "GetTask", map[string]any{"id": taskID})})
	if err != nil {
		t.Fatal(err)
	}
	if envs := gjStream(t, st); len(envs) != 1 || !envs[0].GetFinal() || gjDecode(t, envs[0].GetPayload()).Result["id"] != taskID {
		t.Fatalf("GetTask on Stream: %v", envs)
	}
}

// TestGRPCJSONRPCRefusals: payloads that are not one JSON-RPC request
// object are answered with an error envelope (gRPC status OK), a
// streaming method on Send is refused before any turn, and an envelope
// above max_body_size is RESOURCE_EXHAUSTED.
func TestGRPCJSONRPCRefusals(t *testing.T) {
	t.Parallel()
	gw := gjStart(t, "max_body_size 4MiB", false)
	c := gjClient(t, gw.Addr)
	alice := gjCtx(t, "authorization", "Bearer "+gjToken)
	for _, tc := range []struct {
		name    string
		payload []byte
		code    int
	}{
		{"not JSON", []byte("{not json"), -32700},
		{"empty", nil, -32700},
		{"a string", []byte(`"GetTask"`), -32600},
		{"a batch", []byte(`[{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}]`), -32600},
		{"no method", []byte(`{"jsonrpc":"2.0","id":1}`), -32600},
		{"streaming on Send", gjRequest(5, "SendStreamingMessage", gjSendParams("not on send")), -32600},
	} {
		out, err := c.Send(alice, &envelopepb.JsonRpcEnvelope{Payload: tc.payload})
		if err != nil {
			t.Fatalf("%s: %v, want an error envelope", tc.name, err)
		}
		if r := gjDecode(t, out.GetPayload()); r.Error == nil || r.Error.Code != tc.code {
			t.Fatalf("%s: answered %s, want JSON-RPC error %d", tc.name, out.GetPayload(), tc.code)
		}
		if tc.name == "streaming on Send" {
			continue // a valid call on Stream
		}
		st, err := c.Stream(alice, &envelopepb.JsonRpcEnvelope{Payload: tc.payload})
		if err != nil {
			t.Fatal(err)
		}
		envs := gjStream(t, st)
		if len(envs) != 1 || !envs[0].GetFinal() || gjDecode(t, envs[0].GetPayload()).Error == nil {
			t.Fatalf("%s on Stream: %v, want one final error envelope", tc.name, envs)
		}
	}
	// The refused streaming Send started no turn.
	out, err := c.Send(alice, &envelopepb.JsonRpcEnvelope{Payload: gjRequest(9, "ListTasks", map[string]any{})})
	if err != nil || strings.Contains(string(out.GetPayload()), "not on send") {
		t.Fatalf("ListTasks after the refused Send: %s, %v", out.GetPayload(), err)
	}

	// Above the 4 MiB limit: RESOURCE_EXHAUSTED naming the sizes; the
	// connection stays usable.
	big := gjRequest(10, "SendMessage", gjSendParams(strings.Repeat("x", 4<<20+1024)))
	_, err = c.Send(alice, &envelopepb.JsonRpcEnvelope{Payload: big})
	if st, _ := status.FromError(err); st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "larger than max") {
		t.Fatalf("a %d-byte envelope: %v, want RESOURCE_EXHAUSTED (larger than max)", len(big), err)
	}
	if _, err := c.Send(alice, &envelopepb.JsonRpcEnvelope{Payload: gjRequest(11, "ListTasks", map[string]any{})}); err != nil {
		t.Fatalf("a call after the refused one: %v", err)
	}
}

// TestGRPCJSONRPCStreamOutlivesReload: an envelope stream open across a
// config reload runs to its final envelope (OPS-3), and the new config
// serves the next call.
func TestGRPCJSONRPCStreamOutlivesReload(t *testing.T) {
	t.Parallel()
	gw := gjStart(t, interopSlowEcho, true)
	c := gjClient(t, gw.Addr)
	alice := gjCtx(t, "authorization", "Bearer "+gjToken)
	st, err := c.Stream(alice, &envelopepb.JsonRpcEnvelope{Payload: gjRequest(1, "SendStreamingMessage", gjSendParams("across a reload"))})
	if err != nil {
		t.Fatal(err)
	}
	first, err := st.Recv()
	if err != nil || first.GetFinal() {
		t.Fatalf("first envelope %v, %v", first, err)
	}
	task, _ := gjDecode(t, first.GetPayload()).Result["task"].(map[string]any)
	taskID, _ := task["id"].(string)
	start := time.Now()
	gw.Reload(gjSite("gj-b", interopSlowEcho))
	rest := gjStream(t, st)
	if len(rest) == 0 || !rest[len(rest)-1].GetFinal() {
		t.Fatalf("after the reload: %d envelopes, the last not final\n%s", len(rest), gw.Output())
	}
	t.Logf("stream ended %v after the reload began, %d envelopes", time.Since(start), len(rest)+1)
	out, err := c.Send(alice, &envelopepb.JsonRpcEnvelope{Payload: gjRequest(2, "GetTask", map[string]any{"id": taskID})})
	if err != nil {
		t.Fatal(err)
	}
	got := gjDecode(t, out.GetPayload()).Result
	if s, _ := got["status"].(map[string]any); got["id"] != taskID || s["state"] != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("GetTask after the reload: %s", out.GetPayload())
	}
}

// TestGRPCJSONRPCCardAndCLI: the card advertises grpc-jsonrpc at the
// gRPC target, and `caddy a2a call --binding grpc-jsonrpc` streams and
// calls over it (h2c for an http:// agent).
func TestGRPCJSONRPCCardAndCLI(t *testing.T) {
	t.Parallel()
	gw := gjStart(t, "", false)
	ifaces := cardInterfaces(t, gw.URL)
	if ifaces["grpc-jsonrpc"] != gw.Addr {
		t.Fatalf("card interfaces %v, want grpc-jsonrpc at %s", ifaces, gw.Addr)
	}
	if _, ok := ifaces["GRPC"]; ok {
		t.Fatalf("card advertises GRPC, which is off: %v", ifaces)
	}
	r := clientRun(t, "", nil, "call", "--json", "--binding", "grpc-jsonrpc", "--token", gjToken, gw.URL, "hello over the envelope")
	r.wantCode(t, 0)
	taskID, ctxID, st := finalOf(clientEvents(t, r.Stdout))
	if taskID == "" || st != "TASK_STATE_INPUT_REQUIRED" || !strings.Contains(r.Stdout, "Echo: hello over the envelope") {
		t.Fatalf("call over grpc-jsonrpc: task %q state %q\n%s", taskID, st, r.Stdout)
	}
	r = clientRun(t, "", nil, "call", "--json", "--no-stream", "--binding", "grpc-jsonrpc", "--token", gjToken, "--context", ctxID, gw.URL, "second turn")
	r.wantCode(t, 0)
	if !strings.Contains(r.Stdout, "Echo: second turn") {
		t.Fatalf("call --no-stream over grpc-jsonrpc: %s", r.Stdout)
	}
	r = clientRun(t, "", nil, "task", "get", "--json", "--binding", "grpc-jsonrpc", "--token", "wrong-token-0123456789", gw.URL, taskID)
	if r.Code == 0 {
		t.Fatalf("task get with a wrong token succeeded: %s", r.Stdout)
	}
}

package tests

// XPORT-2 over raw grpc-go: the status codes and google.rpc.ErrorInfo
// details of the gRPC binding, a2a_auth's UNAUTHENTICATED answer, the
// version rule, the card's GRPC interface only when enabled, and
// XPORT-1: gRPC over a Unix socket (`bind unix//path`).

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// grpcTestToken is the bearer token of the authenticated gRPC gateway.
const grpcTestToken = "grpc-test-token-0123456789"

// grpcRawClient dials target in plaintext (h2c) with extra dial options.
func grpcRawClient(t *testing.T, target string, opts ...grpc.DialOption) pb.A2AServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(target, append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return pb.NewA2AServiceClient(conn)
}

// grpcStatus returns the code and ErrorInfo of a status error (nil info
// when there is none).
func grpcStatus(t *testing.T, err error) (codes.Code, string, *errdetails.ErrorInfo) {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || err == nil {
		t.Fatalf("want a gRPC status error, got %v", err)
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return st.Code(), st.Message(), info
		}
	}
	return st.Code(), st.Message(), nil
}

// cardInterfaces fetches the card at base and returns its interfaces by
// binding.
func cardInterfaces(t *testing.T, base string) map[string]string {
	t.Helper()
	resp, err := http.Get(base + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var card struct {
		SupportedInterfaces []struct {
			URL             string `json:"url"`
			ProtocolBinding string `json:"protocolBinding"`
		} `json:"supportedInterfaces"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&card); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, i := range card.SupportedInterfaces {
		out[i.ProtocolBinding] = i.URL
	}
	return out
}

func TestGRPCStatusCodes(t *testing.T) {
	t.Parallel()
	gw := harness.StartGatewayWith(t, `a2a {
	card {
		name grpc-agent
	}
	auth {
		bearer `+grpcTestToken+`
		api_key grpc-test-api-key-0123456789
		no_env
	}
	grpc
}`, harness.Options{Global: "servers {\n\tprotocols h1 h2c\n}", Admin: true})
	client := grpcRawClient(t, gw.Addr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	authed := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+grpcTestToken, "a2a-version", "1.0")

	// The card advertises GRPC at host:port, after JSONRPC and HTTP+JSON.
	if got := cardInterfaces(t, gw.URL); got["GRPC"] != gw.Addr || got["JSONRPC"] == "" {
		t.Errorf("card interfaces = %v, want GRPC at %s", got, gw.Addr)
	}

	t.Run("Unauthenticated", func(t *testing.T) {
		_, err := client.GetTask(metadata.AppendToOutgoingContext(ctx, "a2a-version", "1.0"), &pb.GetTaskRequest{Id: "x"})
		if code, msg, info := grpcStatus(t, err); uint32(code) != 16 || msg != "Unauthorized" || info.GetReason() != "UNAUTHENTICATED" || info.GetDomain() != "a2a-protocol.org" {
			t.Errorf("no credentials: %v %q %v, want UNAUTHENTICATED (16) Unauthorized with ErrorInfo UNAUTHENTICATED", code, msg, info)
		}
		_, err = client.GetTask(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer wrong", "a2a-version", "1.0"), &pb.GetTaskRequest{Id: "x"})
		if code, _, _ := grpcStatus(t, err); code != codes.Unauthenticated {
			t.Errorf("wrong token: %v, want UNAUTHENTICATED", code)
		}
	})

	t.Run("TaskNotFound", func(t *testing.T) {
		_, err := client.GetTask(authed, &pb.GetTaskRequest{Id: "no-such-task"})
		code, _, info := grpcStatus(t, err)
		if code != codes.NotFound || info == nil || info.GetReason() != "TASK_NOT_FOUND" || info.GetDomain() != "a2a-protocol.org" || info.GetMetadata()["taskId"] != "no-such-task" {
			t.Errorf("GetTask(unknown) = %v %v, want NOT_FOUND with ErrorInfo TASK_NOT_FOUND", code, info)
		}
	})

	t.Run("APIKeyMetadata", func(t *testing.T) {
		_, err := client.GetTask(metadata.AppendToOutgoingContext(ctx, "x-api-key", "grpc-test-api-key-0123456789", "a2a-version", "1.0"), &pb.GetTaskRequest{Id: "no-such-task"})
		if code, _, _ := grpcStatus(t, err); code != codes.NotFound {
			t.Errorf("API key in metadata: %v, want NOT_FOUND (authenticated)", code)
		}
	})

	t.Run("Version", func(t *testing.T) {
		for _, md := range [][]string{{}, {"a2a-version", "2.0"}, {"a2a-version", "0.3"}, {"a2a-version", "1.1"}} {
			kv := append([]string{"authorization", "Bearer " + grpcTestToken}, md...)
			_, err := client.SendMessage(metadata.AppendToOutgoingContext(ctx, kv...), &pb.SendMessageRequest{
				Message: &pb.Message{MessageId: "m1", Role: pb.Role_ROLE_USER, Parts: []*pb.Part{{Content: &pb.Part_Text{Text: "hi"}}}}})
			code, _, info := grpcStatus(t, err)
			if code != codes.FailedPrecondition || info == nil || info.GetReason() != "VERSION_NOT_SUPPORTED" {
				t.Errorf("version %v: %v %v, want FAILED_PRECONDITION VERSION_NOT_SUPPORTED", md, code, info)
			}
		}
		// A patch number is ignored.
		if _, err := client.ListTasks(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+grpcTestToken, "a2a-version", "1.0.3"), &pb.ListTasksRequest{}); err != nil {
			t.Errorf("a2a-version 1.0.3: %v", err)
		}
	})

	t.Run("UnsupportedAndInvalid", func(t *testing.T) {
		// The status of a server stream arrives with its first Recv.
		s, err := client.SubscribeToTask(authed, &pb.SubscribeToTaskRequest{Id: "no-such-task"})
		if err == nil {
			_, err = s.Recv()
		}
		if code, _, info := grpcStatus(t, err); code != codes.NotFound || info.GetReason() != "TASK_NOT_FOUND" {
			t.Errorf("SubscribeToTask(unknown) = %v %v", code, info)
		}
		_, err = client.SendMessage(authed, &pb.SendMessageRequest{})
		if code, _, info := grpcStatus(t, err); code != codes.InvalidArgument || info.GetReason() != "INVALID_PARAMS" {
			t.Errorf("SendMessage without a message = %v %v, want INVALID_ARGUMENT INVALID_PARAMS", code, info)
		}
	})

	t.Run("ExtendedCard", func(t *testing.T) {
		card, err := client.GetExtendedAgentCard(authed, &pb.GetExtendedAgentCardRequest{})
		if err != nil {
			t.Fatalf("GetExtendedAgentCard: %v", err)
		}
		var grpcURL string
		for _, i := range card.GetSupportedInterfaces() {
			if i.GetProtocolBinding() == "GRPC" {
				grpcURL = i.GetUrl()
			}
		}
		if card.GetName() != "grpc-agent" || grpcURL != gw.Addr {
			t.Errorf("extended card %q, GRPC interface %q; want grpc-agent at %s", card.GetName(), grpcURL, gw.Addr)
		}
	})

	// OPS-2: the requests are counted under binding="grpc".
	t.Run("Metrics", func(t *testing.T) {
		text := metScrape(t, gw)
		for _, want := range []map[string]string{
			{"binding": "grpc", "method": "GetTask", "outcome": "TASK_NOT_FOUND"},
			{"binding": "grpc", "method": "SendMessage", "outcome": "VERSION_NOT_SUPPORTED"},
			{"binding": "grpc", "method": "GetExtendedAgentCard", "outcome": "ok"},
		} {
			if v, found := metValue(text, "caddy_a2a_requests_total", want); !found || v < 1 {
				t.Errorf("caddy_a2a_requests_total%v = %v (found %v), want >= 1", want, v, found)
			}
		}
	})
}

// XPORT-2: without the grpc option the card has no GRPC interface.
func TestGRPCNotAdvertisedWhenOff(t *testing.T) {
	t.Parallel()
	gw := harness.StartGateway(t, "a2a {\n\tcard {\n\t\tname plain-agent\n\t}\n}")
	got := cardInterfaces(t, gw.URL)
	if _, ok := got["GRPC"]; ok || got["JSONRPC"] == "" {
		t.Errorf("card interfaces = %v, want no GRPC", got)
	}
}

// XPORT-1: the gRPC binding over a Unix socket (`bind unix//path`, h2c).
func TestGRPCUnixSocket(t *testing.T) {
	t.Parallel()
	gw := harness.StartGatewayWith(t, `http://{{ADDR}} {
	bind unix/{{DIR}}/a2a.sock
	a2a {
		card {
			name unix-agent
		}
		grpc
	}
}`, harness.Options{Global: "servers {\n\tprotocols h1 h2c\n}", NoHealthWait: true})
	sock := filepath.Join(gw.Dir, "a2a.sock")
	httpc := &http.Client{Timeout: time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := httpc.Get("http://" + gw.Addr + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no /health over %s: %v\n%s", sock, err, gw.Output())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The site matches its host: the socket's gRPC authority is the site's.
	client := grpcRawClient(t, "unix://"+sock, grpc.WithAuthority(gw.Addr))
	ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "a2a-version", "1.0"), 20*time.Second)
	defer cancel()
	resp, err := client.SendMessage(ctx, &pb.SendMessageRequest{
		Message: &pb.Message{MessageId: "m-unix", Role: pb.Role_ROLE_USER, Parts: []*pb.Part{{Content: &pb.Part_Text{Text: "over a unix socket"}}}}})
	if err != nil {
		t.Fatalf("SendMessage over the socket: %v\n%s", err, gw.Output())
	}
	task := resp.GetTask()
	if task.GetStatus().GetState() != pb.TaskState_TASK_STATE_INPUT_REQUIRED || !strings.Contains(task.GetStatus().GetMessage().GetParts()[0].GetText(), "over a unix socket") {
		t.Errorf("SendMessage over the socket = %v", resp)
	}
	got, err := client.GetTask(ctx, &pb.GetTaskRequest{Id: task.GetId()})
	if err != nil || got.GetId() != task.GetId() {
		t.Errorf("GetTask over the socket = %v, %v", got, err)
	}
}

package tests

// issue 29, XPORT-2, AUTH-10, OPS-3, OPS-9: `grpc { listen ADDR }` serves
// the official gRPC service on a dedicated listener with grpc-go's own
// transport: the same calls, auth, version rule and card as the site
// route; a reload keeps the listener and the streams in flight on it; a
// non-loopback address without TLS is refused at start.

import (
	"context"
	"io"
	"strconv"
	"testing"
	"time"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/caddy-a2a/caddy-a2a/agent/binding/grpcjsonrpc/envelopepb"
	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

func TestGRPCListen(t *testing.T) {
	t.Parallel()
	listen := "127.0.0.1:" + strconv.Itoa(harness.FreePort(t))
	site := func(desc string) string {
		return "a2a {\n\tcard {\n\t\tname listen\n\t\tdescription " + desc + "\n\t}\n\tauth {\n\t\tbearer " + grpcTestToken + "\n\t\tno_env\n\t}\n\t" +
			interopSlowEcho + "\n\tgrpc_jsonrpc\n\tgrpc {\n\t\tlisten " + listen + "\n\t}\n}"
	}
	gw := harness.StartGatewayWith(t, site("listen-a"), harness.Options{Admin: true})
	harness.WaitListening(t, listen)
	client := grpcRawClient(t, listen)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	authed := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+grpcTestToken, "a2a-version", "1.0")
	msg := func(id string) *pb.SendMessageRequest {
		return &pb.SendMessageRequest{Message: &pb.Message{MessageId: id, Role: pb.Role_ROLE_USER,
			Parts: []*pb.Part{{Content: &pb.Part_Text{Text: "hello listener"}}}}}
	}

	// The card advertises GRPC at the listener: the site's host, its port.
	if got := cardInterfaces(t, gw.URL); got["GRPC"] != listen || got["JSONRPC"] == "" {
		t.Errorf("card interfaces = %v, want GRPC at %s", got, listen)
	}

	t.Run("Auth", func(t *testing.T) {
		_, err := client.GetTask(metadata.AppendToOutgoingContext(ctx, "a2a-version", "1.0"), &pb.GetTaskRequest{Id: "x"})
		if code, msg, info := grpcStatus(t, err); code != codes.Unauthenticated || msg != "Unauthorized" || info.GetReason() != "UNAUTHENTICATED" || info.GetDomain() != "a2a-protocol.org" {
			t.Errorf("no credentials: %v %q %v, want UNAUTHENTICATED Unauthorized with ErrorInfo UNAUTHENTICATED", code, msg, info)
		}
		_, err = client.GetTask(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer wrong", "a2a-version", "1.0"), &pb.GetTaskRequest{Id: "x"})
		if code, _, info := grpcStatus(t, err); code != codes.Unauthenticated || info.GetReason() != "UNAUTHENTICATED" {
			t.Errorf("wrong token: %v %v, want UNAUTHENTICATED", code, info)
		}
		stream, err := client.SendStreamingMessage(metadata.AppendToOutgoingContext(ctx, "a2a-version", "1.0"), msg("m-noauth"))
		if err == nil {
			_, err = stream.Recv()
		}
		if code, _, _ := grpcStatus(t, err); code != codes.Unauthenticated {
			t.Errorf("stream without credentials: %v, want UNAUTHENTICATED", code)
		}
		_, err = client.GetTask(authed, &pb.GetTaskRequest{Id: "no-such-task"})
		if code, _, info := grpcStatus(t, err); code != codes.NotFound || info.GetReason() != "TASK_NOT_FOUND" {
			t.Errorf("right token: %v %v, want NOT_FOUND TASK_NOT_FOUND (authenticated)", code, info)
		}
	})

	t.Run("Version", func(t *testing.T) {
		for _, md := range [][]string{{}, {"a2a-version", "2.0"}} {
			kv := append([]string{"authorization", "Bearer " + grpcTestToken}, md...)
			_, err := client.SendMessage(metadata.AppendToOutgoingContext(ctx, kv...), msg("m-version"))
			if code, _, info := grpcStatus(t, err); code != codes.FailedPrecondition || info.GetReason() != "VERSION_NOT_SUPPORTED" {
				t.Errorf("version %v: %v %v, want FAILED_PRECONDITION VERSION_NOT_SUPPORTED", md, code, info)
			}
		}
	})

	t.Run("SendMessage", func(t *testing.T) {
		res, err := client.SendMessage(authed, msg("m-send"))
		if err != nil {
			t.Fatal(err)
		}
		task := res.GetTask()
		if task.GetId() == "" || task.GetStatus().GetState() != pb.TaskState_TASK_STATE_INPUT_REQUIRED {
			t.Fatalf("SendMessage = %v, want a task in INPUT_REQUIRED", res)
		}
		// The same principal on the site's JSON-RPC sees the task (owner scope).
		got, err := client.GetTask(authed, &pb.GetTaskRequest{Id: task.GetId()})
		if err != nil || got.GetId() != task.GetId() {
			t.Fatalf("GetTask = %v, %v", got, err)
		}
	})

	// XPORT-6: the envelope service (grpc_jsonrpc) on the same listener,
	// behind the same auth.
	t.Run("Envelope", func(t *testing.T) {
		c := gjClient(t, listen)
		_, err := c.Send(gjCtx(t), &envelopepb.JsonRpcEnvelope{Payload: gjRequest(1, "ListTasks", map[string]any{})})
		if code, _, info := grpcStatus(t, err); code != codes.Unauthenticated || info.GetReason() != "UNAUTHENTICATED" {
			t.Errorf("envelope without credentials: %v %v, want UNAUTHENTICATED", code, info)
		}
		out, err := c.Send(gjCtx(t, "authorization", "Bearer "+grpcTestToken), &envelopepb.JsonRpcEnvelope{Payload: gjRequest(2, "ListTasks", map[string]any{})})
		if err != nil {
			t.Fatal(err)
		}
		if r := gjDecode(t, out.GetPayload()); string(r.ID) != "2" || r.Error != nil || r.Result["tasks"] == nil {
			t.Errorf("envelope ListTasks answered %s", out.GetPayload())
		}
	})

	t.Run("StreamOutlivesReload", func(t *testing.T) {
		stream, err := client.SendStreamingMessage(authed, msg("m-stream"))
		if err != nil {
			t.Fatal(err)
		}
		first, err := stream.Recv()
		if err != nil || first.GetTask() == nil {
			t.Fatalf("first event %v, %v", first, err)
		}
		gw.Reload(site("listen-b")) // keeps the address: no "address in use"
		events := 1
		var last *pb.StreamResponse
		for {
			ev, err := stream.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("stream broke after the reload (%d events): %v\n%s", events, err, gw.Output())
			}
			events++
			last = ev
		}
		if got := last.GetStatusUpdate().GetStatus().GetState(); got != pb.TaskState_TASK_STATE_INPUT_REQUIRED || events < 3 {
			t.Fatalf("stream ended in %v after %d events, want INPUT_REQUIRED after several", got, events)
		}
		// The new config serves the listener (the client reconnects).
		task, err := client.GetTask(authed, &pb.GetTaskRequest{Id: first.GetTask().GetId()})
		if err != nil || task.GetId() != first.GetTask().GetId() {
			t.Fatalf("GetTask on the listener after the reload = %v, %v\n%s", task, err, gw.Output())
		}
		if got := cardInterfaces(t, gw.URL); got["GRPC"] != listen {
			t.Errorf("card after reload: GRPC at %q, want %s", got["GRPC"], listen)
		}
	})
}

// OPS-9: a second gateway asking for the same grpc listen address
// (which SO_REUSEPORT would let it bind) is refused, naming the address.
func TestGRPCListenSecondGatewayRefused(t *testing.T) {
	t.Parallel()
	listen := "127.0.0.1:" + strconv.Itoa(harness.FreePort(t))
	block := "grpc {\n\t\tlisten " + listen + "\n\t}"
	harness.StartGateway(t, "a2a {\n\tcard {\n\t\tname first\n\t}\n\t"+block+"\n}")
	line := startupFails(t, "run", "", "\t\t"+block)
	wantAll(t, line, "another gateway already serves "+listen)
}

// OPS-9: plaintext gRPC is served on loopback only; a non-loopback listen
// address without tls_cert/tls_key stops the start with an error naming
// the option.
func TestGRPCListenNeedsTLSOffLoopback(t *testing.T) {
	t.Parallel()
	line := startupFails(t, "run", "", "\t\tgrpc {\n\t\t\tlisten 0.0.0.0:"+strconv.Itoa(harness.FreePort(t))+"\n\t\t}")
	wantAll(t, line, "grpc listen", "non-loopback", "tls_cert")
}

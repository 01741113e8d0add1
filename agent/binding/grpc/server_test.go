package grpc

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	grpclib "google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/agenttest"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/httpx"
)

// startServer serves a Service (echo backend, SQLite store) through
// Server.ServeHTTP on an h2c test server and returns a client of it.
func startServer(t testing.TB, cfg agent.Config, tc httpx.TransportConfig) (pb.A2AServiceClient, *Server) {
	t.Helper()
	conn, srv := startConn(t, cfg, tc)
	return pb.NewA2AServiceClient(conn), srv
}

// startConn is startServer with the Server built with opts, returning the
// client connection.
func startConn(t testing.TB, cfg agent.Config, tc httpx.TransportConfig, opts ...Option) (*grpclib.ClientConn, *Server) {
	t.Helper()
	svc, _ := agenttest.Service(t, cfg)
	srv := New(agent.NewHandler(svc), tc, nil, opts...)
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !IsGRPC(r) {
			http.Error(w, "not grpc", http.StatusBadRequest)
			return
		}
		srv.ServeHTTP(w, r, "alice")
	}))
	hs.Config.Protocols = new(http.Protocols)
	hs.Config.Protocols.SetHTTP1(true)
	hs.Config.Protocols.SetUnencryptedHTTP2(true)
	hs.Start()
	conn, err := grpclib.NewClient(strings.TrimPrefix(hs.URL, "http://"), grpclib.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		hs.Close()
		srv.Close()
	})
	return conn, srv
}

func v1(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "a2a-version", "1.0")
}

// errorInfo returns the ErrorInfo detail of a status error.
func errorInfo(t *testing.T, err error) (codes.Code, *errdetails.ErrorInfo) {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok {
		t.Fatalf("not a status error: %v", err)
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return st.Code(), info
		}
	}
	t.Fatalf("status %v has no ErrorInfo detail", st.Proto())
	return 0, nil
}

func userMessage(text string) *pb.SendMessageRequest {
	return &pb.SendMessageRequest{Message: &pb.Message{MessageId: "m-" + text, Role: pb.Role_ROLE_USER,
		Parts: []*pb.Part{{Content: &pb.Part_Text{Text: text}}}}}
}

// XPORT-2: unary and streaming RPCs over ServeHTTP, with the error table's
// codes and ErrorInfo details.
func TestServerRPCs(t *testing.T) {
	client, _ := startServer(t, agent.Config{Extensions: []string{"urn:x:ext"}}, httpx.TransportConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	var hdr metadata.MD
	resp, err := client.SendMessage(metadata.AppendToOutgoingContext(v1(ctx), "a2a-extensions", "urn:x:ext, urn:other"), userMessage("hello"), grpclib.Header(&hdr))
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	task := resp.GetTask()
	// The echo backend ends its turns input-required.
	if task.GetId() == "" || task.GetStatus().GetState() != pb.TaskState_TASK_STATE_INPUT_REQUIRED {
		t.Fatalf("SendMessage task = %v", resp)
	}
	if got := hdr.Get("a2a-extensions"); len(got) != 1 || got[0] != "urn:x:ext" {
		t.Errorf("a2a-extensions response metadata = %q, want the activated urn:x:ext", got)
	}

	got, err := client.GetTask(v1(ctx), &pb.GetTaskRequest{Id: task.GetId()})
	if err != nil || got.GetId() != task.GetId() {
		t.Fatalf("GetTask = %v, %v", got, err)
	}
	list, err := client.ListTasks(v1(ctx), &pb.ListTasksRequest{PageSize: ptr(int32(0))}) // 0 = the default
	if err != nil || len(list.GetTasks()) != 1 {
		t.Fatalf("ListTasks = %v, %v", list, err)
	}

	_, err = client.GetTask(v1(ctx), &pb.GetTaskRequest{Id: "nope"})
	if code, info := errorInfo(t, err); code != codes.NotFound || info.GetReason() != "TASK_NOT_FOUND" || info.GetDomain() != "a2a-protocol.org" || info.GetMetadata()["taskId"] != "nope" {
		t.Errorf("GetTask(unknown) = %v %v", code, info)
	}
	_, err = client.GetTask(ctx, &pb.GetTaskRequest{Id: task.GetId()})
	if code, info := errorInfo(t, err); code != codes.FailedPrecondition || info.GetReason() != "VERSION_NOT_SUPPORTED" {
		t.Errorf("GetTask without a2a-version = %v %v", code, info)
	}
	canceled, err := client.CancelTask(v1(ctx), &pb.CancelTaskRequest{Id: task.GetId()})
	if err != nil || canceled.GetStatus().GetState() != pb.TaskState_TASK_STATE_CANCELED {
		t.Fatalf("CancelTask = %v, %v", canceled, err)
	}
	// Cancel is idempotent (A2A 1.0 §3.3.1): the canceled task again.
	again, err := client.CancelTask(v1(ctx), &pb.CancelTaskRequest{Id: task.GetId()})
	if err != nil || again.GetId() != task.GetId() || again.GetStatus().GetState() != pb.TaskState_TASK_STATE_CANCELED {
		t.Errorf("CancelTask(canceled) = %v, %v; want the canceled task", again, err)
	}
	_, err = client.CreateTaskPushNotificationConfig(v1(ctx), &pb.TaskPushNotificationConfig{TaskId: task.GetId(), Url: "https://h.example/x"})
	if code, info := errorInfo(t, err); code != codes.FailedPrecondition || info.GetReason() != "PUSH_NOTIFICATION_NOT_SUPPORTED" {
		t.Errorf("CreateTaskPushNotificationConfig without push = %v %v", code, info)
	}
	_, err = client.GetTask(v1(ctx), &pb.GetTaskRequest{Id: task.GetId(), HistoryLength: ptr(int32(-1))})
	if code, info := errorInfo(t, err); code != codes.InvalidArgument || info.GetReason() != "INVALID_PARAMS" {
		t.Errorf("GetTask(historyLength -1) = %v %v", code, info)
	} else if st, _ := status.FromError(err); len(st.Details()) < 2 {
		t.Errorf("invalid params without a BadRequest detail: %v", st.Details())
	}

	stream, err := client.SendStreamingMessage(v1(ctx), userMessage("stream me"))
	if err != nil {
		t.Fatal(err)
	}
	var events int
	var last *pb.StreamResponse
	for {
		ev, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		events++
		last = ev
	}
	if events < 2 || last.GetStatusUpdate().GetStatus().GetState() != pb.TaskState_TASK_STATE_INPUT_REQUIRED {
		t.Errorf("stream: %d events, last %v", events, last)
	}
}

// XPORT-2: a message larger than the transport's body limit is refused
// with RESOURCE_EXHAUSTED before it is decoded.
func TestServerMessageLimit(t *testing.T) {
	client, _ := startServer(t, agent.Config{}, httpx.TransportConfig{MaxBodyBytes: 4096})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := client.SendMessage(v1(ctx), userMessage(strings.Repeat("x", 8192)))
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("oversized SendMessage = %v, want RESOURCE_EXHAUSTED", err)
	}
}

// After Close new requests are refused with UNAVAILABLE.
func TestServerClose(t *testing.T) {
	client, srv := startServer(t, agent.Config{}, httpx.TransportConfig{})
	srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := client.GetTask(v1(ctx), &pb.GetTaskRequest{Id: "x"})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("GetTask after Close = %v, want UNAVAILABLE", err)
	}
	// With nothing in flight the gRPC server is stopped (its resources
	// released): Serve then fails at once with ErrServerStopped.
	deadline := time.Now().Add(5 * time.Second)
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		err = srv.gs.Serve(l)
		if errors.Is(err, grpclib.ErrServerStopped) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gRPC server not stopped after Close: Serve = %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func ptr[T any](v T) *T { return &v }

// A panic in a call is the sanitised INTERNAL status, not a crash.
func TestRecoverPanic(t *testing.T) {
	_, srv := startServer(t, agent.Config{}, httpx.TransportConfig{})
	_, err := srv.recoverUnary(context.Background(), nil, &grpclib.UnaryServerInfo{FullMethod: "/x/Y"}, func(context.Context, any) (any, error) {
		panic("boom")
	})
	if code, info := errorInfo(t, err); code != codes.Internal || info.GetReason() != "INTERNAL_ERROR" {
		t.Errorf("unary panic = %v %v", code, info)
	}
	err = srv.recoverStream(nil, nil, &grpclib.StreamServerInfo{FullMethod: "/x/Z"}, func(any, grpclib.ServerStream) error {
		panic("boom")
	})
	if status.Code(err) != codes.Internal || strings.Contains(err.Error(), "boom") {
		t.Errorf("stream panic = %v", err)
	}
}

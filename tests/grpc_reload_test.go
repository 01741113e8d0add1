package tests

// XPORT-2 with OPS-3: a gRPC stream open across a config reload runs to
// its end, and calls after the reload are served by the new config's gRPC
// server.

import (
	"context"
	"io"
	"testing"
	"time"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc/metadata"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

func TestGRPCStreamOutlivesReload(t *testing.T) {
	t.Parallel()
	site := func(name string) string {
		return "a2a {\n\tcard {\n\t\tname " + name + "\n\t}\n\towner_scope shared\n\t" + interopSlowEcho + "\n\tgrpc\n}"
	}
	gw := harness.StartGatewayWith(t, site("reload-a"), harness.Options{Global: "servers {\n\tprotocols h1 h2c\n}", Admin: true})
	client := grpcRawClient(t, gw.Addr)
	ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "a2a-version", "1.0"), 60*time.Second)
	defer cancel()
	prompt := "stream me across a reload, please"
	stream, err := client.SendStreamingMessage(ctx, &pb.SendMessageRequest{Message: &pb.Message{MessageId: "m-reload", Role: pb.Role_ROLE_USER,
		Parts: []*pb.Part{{Content: &pb.Part_Text{Text: prompt}}}}})
	if err != nil {
		t.Fatal(err)
	}
	first, err := stream.Recv()
	if err != nil || first.GetTask() == nil {
		t.Fatalf("first event %v, %v", first, err)
	}
	start := time.Now()
	gw.Reload(site("reload-b"))
	t.Logf("reload took %v", time.Since(start))
	var last *pb.StreamResponse
	events := 1
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
	t.Logf("stream ended %v after the reload began, %d events", time.Since(start), events)
	if got := last.GetStatusUpdate().GetStatus().GetState(); got != pb.TaskState_TASK_STATE_INPUT_REQUIRED {
		t.Fatalf("stream ended in %v after %d events, want INPUT_REQUIRED", got, events)
	}
	// The new config's gRPC server answers (same owner scope: same tasks).
	task, err := client.GetTask(ctx, &pb.GetTaskRequest{Id: first.GetTask().GetId()})
	if err != nil || task.GetStatus().GetState() != pb.TaskState_TASK_STATE_INPUT_REQUIRED {
		t.Fatalf("GetTask after the reload = %v, %v", task, err)
	}
}

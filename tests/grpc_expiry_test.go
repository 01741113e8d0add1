package tests

import (
	"context"
	"io"
	"testing"
	"time"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc/metadata"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// TestGRPCStreamEndsAtCredentialExpiry (AUTH-10, issue 26.2): a gRPC
// stream opened with a JWT whose exp is 3 s away (clock_skew 1s) ends at
// the expiry, long before its 10 s turn would, and does not end as if the
// turn had completed.
func TestGRPCStreamEndsAtCredentialExpiry(t *testing.T) {
	gw := harness.StartGatewayWith(t, expirySite("grpc-expiry", "", "grpc"), harness.Options{Global: "servers {\n\tprotocols h1 h2c\n}", Env: []string{"WS_JWT_SECRET=" + wsJWTSecret}})
	tok := trustJWT(t, wsJWTSecret, "https://issuer.example.com", "caddy-a2a", "alice", time.Now().Add(3*time.Second))
	client := grpcRawClient(t, gw.Addr)
	ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "a2a-version", "1.0", "authorization", "Bearer "+tok), 30*time.Second)
	defer cancel()
	start := time.Now()
	stream, err := client.SendStreamingMessage(ctx, &pb.SendMessageRequest{Message: &pb.Message{MessageId: "m-expiry", Role: pb.Role_ROLE_USER,
		Parts: []*pb.Part{{Content: &pb.Part_Text{Text: "a prompt long enough to stream for ten seconds"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	events := 0
	var last *pb.StreamResponse
	for {
		ev, err := stream.Recv()
		if err != nil {
			t.Logf("stream ended after %v and %d events: %v", time.Since(start), events, err)
			if err == io.EOF && last.GetStatusUpdate().GetStatus().GetState() == pb.TaskState_TASK_STATE_INPUT_REQUIRED {
				t.Fatal("the stream ran to the end of its turn")
			}
			break
		}
		events++
		last = ev
	}
	if took := time.Since(start); took > 7*time.Second || events == 0 {
		t.Fatalf("gRPC stream with a 3 s JWT: %d events over %v, want it ended at the expiry", events, took)
	}
}

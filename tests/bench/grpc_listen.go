package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// grpcListenAddr is the dedicated gRPC listener of the fast site
// (`grpc { listen … }`, issue 29), picked once per run.
var grpcListenAddr = sync.OnceValue(func() string {
	port, err := freePort()
	if err != nil {
		return ""
	}
	return fmt.Sprintf("127.0.0.1:%d", port)
})

// grpcBlock is the fast site's grpc option: the site route plus the
// dedicated listener.
func grpcBlock() string {
	if grpcListenAddr() == "" {
		return "grpc"
	}
	return "grpc {\n\t\t\tlisten " + grpcListenAddr() + "\n\t\t}"
}

// grpcListenSend measures SendMessage over the gRPC binding on its
// dedicated listener (grpc-go's own transport, issue 29), same agent,
// backend, concurrency and single shared connection as "grpc-send".
func (r *runner) grpcListenSend() []result {
	const name = "SendMessage over gRPC, dedicated listener (one connection)"
	if grpcListenAddr() == "" {
		return []result{{name: name, errors: 1, extra: "no free port"}}
	}
	conn, err := grpc.NewClient(grpcListenAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return []result{{name: name, errors: 1, extra: err.Error()}}
	}
	defer conn.Close()
	client := pb.NewA2AServiceClient(conn)
	md := metadata.Pairs("authorization", "Bearer "+benchToken, "a2a-version", "1.0")
	res := r.drive(name, r.concurrency, r.duration, func(_ *http.Client, _, _ int) (string, error) {
		// A fresh messageId per send: a resent one starts no turn (RPC-18).
		req := &pb.SendMessageRequest{Message: &pb.Message{MessageId: fmt.Sprintf("gl-%d", msgSeq.Add(1)), Role: pb.Role_ROLE_USER,
			Parts: []*pb.Part{{Content: &pb.Part_Text{Text: "Create a VPC with two vSwitches."}}}}}
		ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(context.Background(), md), 60*time.Second)
		defer cancel()
		resp, err := client.SendMessage(ctx, req)
		if err != nil {
			return "", err
		}
		if resp.GetTask().GetStatus().GetState() != pb.TaskState_TASK_STATE_INPUT_REQUIRED {
			return "", fmt.Errorf("unexpected state %v", resp.GetTask().GetStatus().GetState())
		}
		return resp.GetTask().GetId(), nil
	})
	res.ratioTo = []string{"SendMessage (echo, durable store, auth)", "SendMessage over gRPC (one connection)", "baseline: Caddy respond"}
	return []result{res}
}

package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// grpcSend measures SendMessage over the gRPC binding (XPORT-2) on the
// same site, backend and concurrency as the JSON-RPC "send" scenario, all
// workers sharing one HTTP/2 (h2c) connection.
func (r *runner) grpcSend() []result {
	conn, err := grpc.NewClient(strings.TrimPrefix(r.fast, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return []result{{name: "SendMessage over gRPC (one connection)", errors: 1, extra: err.Error()}}
	}
	defer conn.Close()
	client := pb.NewA2AServiceClient(conn)
	res := r.drive("SendMessage over gRPC (one connection)", r.concurrency, r.duration, func(_ *http.Client, _, _ int) (string, error) {
		return grpcSendOnce(client, "g-")
	})
	res.ratioTo = []string{"SendMessage (echo, durable store, auth)", "baseline: Caddy respond"}
	return []result{res}
}

// grpcSendOnce sends one SendMessage with a fresh messageId (a resent one
// starts no turn, RPC-18) and returns the task id of its INPUT_REQUIRED
// answer.
func grpcSendOnce(client pb.A2AServiceClient, idPrefix string) (string, error) {
	md := metadata.Pairs("authorization", "Bearer "+benchToken, "a2a-version", "1.0")
	req := &pb.SendMessageRequest{Message: &pb.Message{MessageId: fmt.Sprintf("%s%d", idPrefix, msgSeq.Add(1)), Role: pb.Role_ROLE_USER,
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
}

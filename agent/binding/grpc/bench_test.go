package grpc

import (
	"context"
	"testing"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/httpx"
)

func benchTask() *a2a.Task {
	msg := func(id string, role a2a.Role, text string) a2a.Message {
		return a2a.Message{MessageID: id, ContextID: "c1", TaskID: "t1", Role: role, Parts: []a2a.Part{a2a.TextPart(text)}}
	}
	reply := msg("m2", a2a.RoleAgent, "Echo: Create a VPC with two vSwitches.")
	return &a2a.Task{ID: "492c73a2-df80-419e-93f5-a88c52c75714", ContextID: "350b6e8b-47f6-481b-ae16-90990b45c5f5",
		Status:  a2a.TaskStatus{State: a2a.TaskStateInputRequired, Timestamp: "2026-01-02T03:04:05.000Z", Message: &reply},
		History: []a2a.Message{msg("m1", a2a.RoleUser, "Create a VPC with two vSwitches."), reply}}
}

// BenchmarkConvert measures the ProtoJSON conversion of one SendMessage:
// the request in, the task out.
func BenchmarkConvert(b *testing.B) {
	in := userMessage("Create a VPC with two vSwitches.")
	res := &a2a.SendMessageResponse{Task: benchTask()}
	b.ReportAllocs()
	for b.Loop() {
		var req a2a.SendMessageRequest
		if err := fromPB(in, &req); err != nil {
			b.Fatal(err)
		}
		if err := toPB(res, new(pb.SendMessageResponse)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSendMessage measures SendMessage through ServeHTTP (h2c,
// SQLite store, echo backend) from one client connection.
func BenchmarkSendMessage(b *testing.B) {
	client, _ := startServer(b, agent.Config{}, httpx.TransportConfig{})
	req := userMessage("Create a VPC with two vSwitches.")
	ctx := v1(context.Background())
	b.ReportAllocs()
	b.SetParallelism(16)
	b.RunParallel(func(pbt *testing.PB) {
		for pbt.Next() {
			if _, err := client.SendMessage(ctx, req); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

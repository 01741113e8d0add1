package grpc

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/httpx"
)

// RPC-18 over gRPC: the request metadata a2a-extensions activates
// idempotent sends; without it the same messageId is a new task each time
// (a plain A2A 1.0 client).
func TestIdempotentSendByMetadata(t *testing.T) {
	client, _ := startServer(t, agent.Config{}, httpx.TransportConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	taskOf := func(ctx context.Context, text string) string {
		t.Helper()
		resp, err := client.SendMessage(ctx, userMessage(text))
		if err != nil {
			t.Fatalf("SendMessage %q: %v", text, err)
		}
		return resp.GetTask().GetId()
	}
	plain := v1(ctx)
	if a, b := taskOf(plain, "plain"), taskOf(plain, "plain"); a == "" || a == b {
		t.Fatalf("plain sends under one messageId: tasks %q and %q, want two", a, b)
	}
	act := metadata.AppendToOutgoingContext(v1(ctx), "a2a-extensions", agent.IdempotentSendExtension)
	if a, b := taskOf(act, "once"), taskOf(act, "once"); a == "" || a != b {
		t.Fatalf("activated sends under one messageId: tasks %q and %q, want one", a, b)
	}
	other := userMessage("once")
	other.Message.Parts[0].Content = userMessage("changed").Message.Parts[0].Content
	_, err := client.SendMessage(act, other)
	if code, info := errorInfo(t, err); code != codes.InvalidArgument || info.GetReason() != "INVALID_PARAMS" {
		t.Fatalf("activated resend with another body: %v %v, want InvalidArgument INVALID_PARAMS", code, info.GetReason())
	}
}

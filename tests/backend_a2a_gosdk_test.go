package tests

// The official a2a-go v2 SDK client against the gateway in front of the
// official JS SDK reference server (`backend a2a`, TURN-9): the 1.0
// interop passes through the gateway.

import (
	"context"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

func TestBackendA2AGoSDKThroughGateway(t *testing.T) {
	t.Parallel()
	js := clientStartJSServer(t)
	proxy := newRecordingProxy(t, js)
	gw := harness.StartGatewayWith(t, `a2a {
	card {
		name front
	}
	backend a2a `+proxy.srv.URL+` {
		bearer `+a2aUpstreamToken+`
	}
}`, harness.Options{Global: "storage file_system {{DIR}}/storage\na2a {\n\tdata_dir {{DIR}}/data\n}", StartTimeout: 30 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// The upstream card is discovered in the background after the start:
	// resolve until its skill is merged in (bounded).
	card, err := agentcard.DefaultResolver.Resolve(ctx, gw.URL)
	for deadline := time.Now().Add(20 * time.Second); err == nil && len(card.Skills) == 0 && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		card, err = agentcard.DefaultResolver.Resolve(ctx, gw.URL)
	}
	if err != nil {
		t.Fatalf("resolve: %v", err)
	}
	cl, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC}}))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cl.Destroy() }()
	var ids []string
	for _, s := range card.Skills {
		ids = append(ids, s.ID)
	}
	if len(ids) != 1 || ids[0] != "echo" {
		t.Errorf("card skills %v, want the upstream's echo merged in", ids)
	}

	res, err := cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi from a2a-go"))})
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 {
		t.Fatalf("SendMessage through the gateway: %#v", res)
	}

	var last a2a.Event
	n := 0
	for ev, err := range cl.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("stream it through"))}) {
		if err != nil {
			t.Fatalf("stream error after %d events: %v", n, err)
		}
		last, n = ev, n+1
	}
	su, ok := last.(*a2a.TaskStatusUpdateEvent)
	if n < 4 || !ok || su.Status.State != a2a.TaskStateCompleted {
		t.Errorf("stream: %d events, last %#v", n, last)
	}

	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("a slow one for cancel"))
	res, err = cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatalf("SendMessage returnImmediately: %v", err)
	}
	slow := res.(*a2a.Task)
	if !waitFor(t, 10*time.Second, func() bool {
		got, err := cl.GetTask(ctx, &a2a.GetTaskRequest{ID: slow.ID})
		// A text update relayed: the gateway knows the upstream task id.
		return err == nil && got.Status.State == a2a.TaskStateWorking && got.Status.Message != nil
	}) {
		t.Fatal("the slow task never relayed an upstream update")
	}
	canceled, err := cl.CancelTask(ctx, &a2a.CancelTaskRequest{ID: slow.ID})
	if err != nil || canceled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask: %v %v", canceled, err)
	}
	if !waitFor(t, 10*time.Second, func() bool { return len(proxy.sends("CancelTask")) == 1 }) {
		t.Error("the cancel did not reach the upstream")
	}
}

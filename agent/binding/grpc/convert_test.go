package grpc

import (
	"encoding/json"
	"reflect"
	"testing"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	gpj "google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// XPORT-2: a request message decodes into the agent/a2a type with every
// part kind, the role and the configuration intact.
func TestFromPBSendMessageRequest(t *testing.T) {
	data, _ := structpb.NewValue(map[string]any{"k": 1.5})
	meta, _ := structpb.NewStruct(map[string]any{"ns": map[string]any{"cwd": "/tmp"}})
	hl := int32(3)
	in := &pb.SendMessageRequest{
		Tenant: "t1",
		Message: &pb.Message{
			MessageId: "m1", ContextId: "c1", Role: pb.Role_ROLE_USER, Metadata: meta,
			Parts: []*pb.Part{
				{Content: &pb.Part_Text{Text: "hello"}},
				{Content: &pb.Part_Raw{Raw: []byte{0, 1, 2, 255}}, MediaType: "application/octet-stream", Filename: "b.bin"},
				{Content: &pb.Part_Url{Url: "https://example.com/f"}},
				{Content: &pb.Part_Data{Data: data}},
			},
		},
		Configuration: &pb.SendMessageConfiguration{AcceptedOutputModes: []string{"text/plain"}, HistoryLength: &hl},
	}
	var got a2a.SendMessageRequest
	if err := fromPB(in, &got); err != nil {
		t.Fatalf("fromPB: %v", err)
	}
	m := got.Message
	if got.Tenant != "t1" || m == nil || m.MessageID != "m1" || m.ContextID != "c1" || m.Role != a2a.RoleUser {
		t.Fatalf("message = %+v (tenant %q)", m, got.Tenant)
	}
	if len(m.Parts) != 4 || m.Parts[0].Text == nil || *m.Parts[0].Text != "hello" {
		t.Fatalf("parts = %+v", m.Parts)
	}
	if !reflect.DeepEqual(m.Parts[1].Raw, []byte{0, 1, 2, 255}) || m.Parts[1].Filename != "b.bin" || m.Parts[1].MediaType != "application/octet-stream" {
		t.Errorf("raw part = %+v", m.Parts[1])
	}
	if m.Parts[2].URL != "https://example.com/f" {
		t.Errorf("url part = %+v", m.Parts[2])
	}
	if string(m.Parts[3].Data) != `{"k":1.5}` {
		t.Errorf("data part = %s", m.Parts[3].Data)
	}
	if got.Configuration == nil || got.Configuration.HistoryLength == nil || *got.Configuration.HistoryLength != 3 {
		t.Errorf("configuration = %+v", got.Configuration)
	}
}

// XPORT-2: a result renders into the proto message (strictly: no field of
// ours is unknown to the proto), task states and roles as enums.
func TestToPBTaskAndStream(t *testing.T) {
	task := a2a.Task{
		ID: "t1", ContextID: "c1",
		Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired, Timestamp: "2026-01-02T03:04:05.000Z",
			Message: &a2a.Message{MessageID: "m2", Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart("more?")}}},
		Artifacts: []a2a.Artifact{{ArtifactID: "a1", Parts: []a2a.Part{{Raw: []byte("xyz"), MediaType: "text/plain"}}}},
	}
	b, _ := json.Marshal(task)
	if err := (gpj.UnmarshalOptions{}).Unmarshal(b, new(pb.Task)); err != nil {
		t.Fatalf("our Task JSON is not a strict lf.a2a.v1.Task: %v\n%s", err, b)
	}
	out := new(pb.Task)
	if err := toPB(&task, out); err != nil {
		t.Fatal(err)
	}
	if out.GetId() != "t1" || out.GetStatus().GetState() != pb.TaskState_TASK_STATE_INPUT_REQUIRED ||
		out.GetStatus().GetMessage().GetRole() != pb.Role_ROLE_AGENT || out.GetStatus().GetTimestamp().GetSeconds() == 0 {
		t.Errorf("task = %v", out)
	}
	if string(out.GetArtifacts()[0].GetParts()[0].GetRaw()) != "xyz" {
		t.Errorf("artifact = %v", out.GetArtifacts())
	}
	ev := a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}}
	sr := new(pb.StreamResponse)
	if err := toPB(ev, sr); err != nil {
		t.Fatal(err)
	}
	if sr.GetStatusUpdate().GetStatus().GetState() != pb.TaskState_TASK_STATE_WORKING || sr.GetStatusUpdate().GetTaskId() != "t1" {
		t.Errorf("stream response = %v", sr)
	}
}

// The round trip pb → ours → pb keeps a push config (the request of
// CreateTaskPushNotificationConfig is also its result).
func TestPushConfigRoundTrip(t *testing.T) {
	in := &pb.TaskPushNotificationConfig{TaskId: "t1", Id: "p1", Url: "https://hook.example/x", Token: "tok",
		Authentication: &pb.AuthenticationInfo{Scheme: "Bearer", Credentials: "c"}}
	var ours a2a.TaskPushNotificationConfig
	if err := fromPB(in, &ours); err != nil {
		t.Fatal(err)
	}
	out := new(pb.TaskPushNotificationConfig)
	if err := toPB(&ours, out); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(in, out) {
		t.Errorf("round trip:\n in %v\nout %v", in, out)
	}
}

// A value our types refuse is InvalidParams naming the field, as over
// JSON-RPC (RPC-14).
func TestFromPBInvalidParams(t *testing.T) {
	in := &pb.SendMessageRequest{Message: &pb.Message{MessageId: "m", Role: pb.Role(99)}}
	var got a2a.SendMessageRequest
	err := fromPB(in, &got)
	e := a2a.AsError(err)
	if err == nil || e.Code != a2a.CodeInvalidParams {
		t.Fatalf("err = %v, want invalid params", err)
	}
}

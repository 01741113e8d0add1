package grpc

import (
	"encoding/json"
	"math"
	"time"
	"unicode/utf8"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// The results a turn sends most (a SendMessage answer, a task, a stream
// event) are converted field by field (issue 29: the ProtoJSON round trip
// cost about as much as the rest of a gRPC turn's encoding). Every value
// the direct path cannot render exactly as the ProtoJSON path would — a
// metadata value structpb does not know, an unparsable timestamp, an enum
// name the proto lacks, invalid UTF-8, a part with two contents — makes it
// give up, and toPB falls back to ProtoJSON: the answer is the same either
// way (TestDirectMatchesProtoJSON).

// directPB fills out from v when both are of a kind the direct path knows;
// it reports false (out possibly half-filled) otherwise.
func directPB(v any, out proto.Message) bool {
	var c pbConv
	switch o := out.(type) {
	case *pb.SendMessageResponse:
		r, ok := v.(*a2a.SendMessageResponse)
		if !ok || r == nil {
			return false
		}
		switch {
		case r.Task != nil && r.Message == nil:
			o.Payload = &pb.SendMessageResponse_Task{Task: c.task(r.Task)}
		case r.Message != nil && r.Task == nil:
			o.Payload = &pb.SendMessageResponse_Message{Message: c.message(r.Message)}
		default:
			return false
		}
	case *pb.StreamResponse:
		ev, ok := v.(a2a.StreamResponse)
		if !ok || !c.event(&ev, o) {
			return false
		}
	case *pb.Task:
		t, ok := v.(*a2a.Task)
		if !ok || t == nil {
			return false
		}
		c.taskInto(o, t)
	default:
		return false
	}
	return !c.failed
}

// pbConv converts agent/a2a values into proto messages; failed records
// that some value cannot be rendered exactly as ProtoJSON would.
type pbConv struct{ failed bool }

func (c *pbConv) str(s string) string {
	if !utf8.ValidString(s) {
		c.failed = true // ProtoJSON would have replaced the bad bytes
	}
	return s
}

func (c *pbConv) strs(ss []string) []string {
	for _, s := range ss {
		c.str(s)
	}
	return ss
}

// event fills o from ev: exactly one of its members must be set.
func (c *pbConv) event(ev *a2a.StreamResponse, o *pb.StreamResponse) bool {
	n := 0
	if ev.Task != nil {
		n++
		o.Payload = &pb.StreamResponse_Task{Task: c.task(ev.Task)}
	}
	if ev.Message != nil {
		n++
		o.Payload = &pb.StreamResponse_Message{Message: c.message(ev.Message)}
	}
	if u := ev.StatusUpdate; u != nil {
		n++
		o.Payload = &pb.StreamResponse_StatusUpdate{StatusUpdate: &pb.TaskStatusUpdateEvent{
			TaskId: c.str(u.TaskID), ContextId: c.str(u.ContextID), Status: c.status(&u.Status), Metadata: c.meta(u.Metadata)}}
	}
	if u := ev.ArtifactUpdate; u != nil {
		n++
		o.Payload = &pb.StreamResponse_ArtifactUpdate{ArtifactUpdate: &pb.TaskArtifactUpdateEvent{
			TaskId: c.str(u.TaskID), ContextId: c.str(u.ContextID), Artifact: c.artifact(&u.Artifact),
			Append: u.Append, LastChunk: u.LastChunk, Metadata: c.meta(u.Metadata)}}
	}
	return n == 1
}

func (c *pbConv) task(t *a2a.Task) *pb.Task {
	out := new(pb.Task)
	c.taskInto(out, t)
	return out
}

func (c *pbConv) taskInto(out *pb.Task, t *a2a.Task) {
	out.Id, out.ContextId, out.Status, out.Metadata = c.str(t.ID), c.str(t.ContextID), c.status(&t.Status), c.meta(t.Metadata)
	if len(t.Artifacts) > 0 {
		out.Artifacts = make([]*pb.Artifact, len(t.Artifacts))
		for i := range t.Artifacts {
			out.Artifacts[i] = c.artifact(&t.Artifacts[i])
		}
	}
	if len(t.History) > 0 {
		out.History = make([]*pb.Message, len(t.History))
		for i := range t.History {
			out.History[i] = c.message(&t.History[i])
		}
	}
}

func (c *pbConv) status(s *a2a.TaskStatus) *pb.TaskStatus {
	out := &pb.TaskStatus{}
	if s.State != "" {
		n, ok := pb.TaskState_value[string(s.State)]
		if !ok {
			c.failed = true
		}
		out.State = pb.TaskState(n)
	}
	if s.Message != nil {
		out.Message = c.message(s.Message)
	}
	if s.Timestamp != "" {
		ts, err := time.Parse(time.RFC3339Nano, s.Timestamp)
		if err != nil {
			c.failed = true
		} else {
			out.Timestamp = timestamppb.New(ts)
		}
	}
	return out
}

func (c *pbConv) message(m *a2a.Message) *pb.Message {
	out := &pb.Message{MessageId: c.str(m.MessageID), ContextId: c.str(m.ContextID), TaskId: c.str(m.TaskID),
		Parts: c.parts(m.Parts), Metadata: c.meta(m.Metadata), Extensions: c.strs(m.Extensions), ReferenceTaskIds: c.strs(m.ReferenceTaskIDs)}
	if m.Role != "" {
		n, ok := pb.Role_value[string(m.Role)]
		if !ok {
			c.failed = true
		}
		out.Role = pb.Role(n)
	}
	return out
}

func (c *pbConv) artifact(a *a2a.Artifact) *pb.Artifact {
	return &pb.Artifact{ArtifactId: c.str(a.ArtifactID), Name: c.str(a.Name), Description: c.str(a.Description),
		Parts: c.parts(a.Parts), Metadata: c.meta(a.Metadata), Extensions: c.strs(a.Extensions)}
}

func (c *pbConv) parts(ps []a2a.Part) []*pb.Part {
	if len(ps) == 0 {
		return nil
	}
	out := make([]*pb.Part, len(ps))
	for i := range ps {
		out[i] = c.part(&ps[i])
	}
	return out
}

func (c *pbConv) part(p *a2a.Part) *pb.Part {
	out := &pb.Part{MediaType: c.str(p.MediaType), Filename: c.str(p.Filename), Metadata: c.meta(p.Metadata)}
	n := 0
	if p.Text != nil {
		n++
		out.Content = &pb.Part_Text{Text: c.str(*p.Text)}
	}
	if len(p.Raw) > 0 {
		n++
		out.Content = &pb.Part_Raw{Raw: p.Raw}
	}
	if p.URL != "" {
		n++
		out.Content = &pb.Part_Url{Url: c.str(p.URL)}
	}
	if len(p.Data) > 0 {
		n++
		v := new(structpb.Value)
		if err := pbUnmarshal.Unmarshal(p.Data, v); err != nil {
			c.failed = true
		}
		out.Content = &pb.Part_Data{Data: v}
	}
	if n > 1 {
		c.failed = true // ProtoJSON refuses two members of a oneof
	}
	return out
}

// meta converts a metadata map; values structpb does not take directly
// (json.Number, typed slices…) go through their JSON form.
func (c *pbConv) meta(m map[string]any) *structpb.Struct {
	if len(m) == 0 {
		return nil
	}
	s, err := structpb.NewStruct(m)
	if err != nil || !c.validStruct(s) {
		raw, jerr := json.Marshal(m)
		s = new(structpb.Struct)
		if jerr != nil || pbUnmarshal.Unmarshal(raw, s) != nil {
			c.failed = true
		}
	}
	return s
}

// validStruct reports whether every key and string of s is valid UTF-8
// (structpb.NewStruct checks only keys).
func (c *pbConv) validStruct(s *structpb.Struct) bool {
	for k, v := range s.GetFields() {
		if !utf8.ValidString(k) || !c.validValue(v) {
			return false
		}
	}
	return true
}

func (c *pbConv) validValue(v *structpb.Value) bool {
	switch k := v.GetKind().(type) {
	case *structpb.Value_NumberValue:
		return !math.IsNaN(k.NumberValue) && !math.IsInf(k.NumberValue, 0) // JSON has neither
	case *structpb.Value_StringValue:
		return utf8.ValidString(k.StringValue)
	case *structpb.Value_StructValue:
		return c.validStruct(k.StructValue)
	case *structpb.Value_ListValue:
		for _, e := range k.ListValue.GetValues() {
			if !c.validValue(e) {
				return false
			}
		}
	}
	return true
}

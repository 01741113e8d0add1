package grpc

import (
	"context"
	"strings"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	grpclib "google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// service implements lf.a2a.v1.A2AService over the Server's agent.Handler.
type service struct {
	pb.UnimplementedA2AServiceServer
	s *Server
}

// callOf returns the call of an RPC (see ServeHTTP).
func callOf(ctx context.Context) agent.Call {
	c, _ := ctx.Value(callKey{}).(agent.Call)
	if c.Info == nil {
		c.Info = new(agent.RequestInfo)
	}
	return c
}

// extensionsMD is the response metadata echoing the activated extensions.
func extensionsMD(active []string) metadata.MD {
	return metadata.Pairs("a2a-extensions", strings.Join(active, ", "))
}

// unary runs one unary RPC: the request decoded into R, the operation op
// (through the handler's interceptors: version and extension rules,
// metrics) and its result rendered into out; an error becomes its gRPC
// status.
func unary[R, T any, O proto.Message](ctx context.Context, s *Server, method string, in proto.Message, out O, op func(context.Context, agent.Call, *R) (T, error)) (O, error) {
	c := callOf(ctx)
	req := new(R)
	err := fromPB(in, req)
	if err != nil {
		err = s.h.Invalid(ctx, c, method, err)
	} else {
		var res T
		if res, err = op(ctx, c, req); err == nil {
			err = toPB(res, out)
		}
	}
	if err != nil {
		var zero O
		return zero, Status(err).Err()
	}
	if active := c.Info.Extensions(); len(active) > 0 {
		_ = grpclib.SetHeader(ctx, extensionsMD(active))
	}
	return out, nil
}

// stream runs one server-streaming RPC: the request decoded into R, then
// open starts the event stream (errors come before any event), then every
// event is sent until the stream ends or the client goes away (the same
// events as SSE).
func stream[R any](s *Server, ss grpclib.ServerStreamingServer[pb.StreamResponse], method string, in proto.Message, open func(context.Context, agent.Call, *R) (agent.Stream, error)) error {
	ctx := ss.Context()
	c := callOf(ctx)
	req := new(R)
	var st agent.Stream
	err := fromPB(in, req)
	if err != nil {
		err = s.h.Invalid(ctx, c, method, err)
	} else {
		st, err = open(ctx, c, req)
	}
	if err != nil {
		return Status(err).Err()
	}
	defer st.Close()
	if active := c.Info.Extensions(); len(active) > 0 {
		_ = ss.SetHeader(extensionsMD(active))
	}
	for {
		ev, ok := st.Next(ctx)
		if !ok {
			break
		}
		out := new(pb.StreamResponse)
		if err := toPB(ev, out); err != nil {
			return Status(err).Err()
		}
		if err := ss.Send(out); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	return nil
}

// SendMessage implements A2AServiceServer.
func (v *service) SendMessage(ctx context.Context, in *pb.SendMessageRequest) (*pb.SendMessageResponse, error) {
	return unary(ctx, v.s, a2a.MethodSendMessage, in, new(pb.SendMessageResponse), v.s.h.SendMessage)
}

// SendStreamingMessage implements A2AServiceServer.
func (v *service) SendStreamingMessage(in *pb.SendMessageRequest, ss grpclib.ServerStreamingServer[pb.StreamResponse]) error {
	return stream(v.s, ss, a2a.MethodSendStreamingMessage, in, v.s.h.SendStreamingMessage)
}

// GetTask implements A2AServiceServer.
func (v *service) GetTask(ctx context.Context, in *pb.GetTaskRequest) (*pb.Task, error) {
	return unary(ctx, v.s, a2a.MethodGetTask, in, new(pb.Task), v.s.h.GetTask)
}

// ListTasks implements A2AServiceServer. A page_size of 0 counts as unset:
// proto clients (the a2a-go SDK among them) always send the field, 0
// meaning "the default", which JSON clients express by omitting it.
func (v *service) ListTasks(ctx context.Context, in *pb.ListTasksRequest) (*pb.ListTasksResponse, error) {
	if in.PageSize != nil && *in.PageSize == 0 {
		in = proto.CloneOf(in)
		in.PageSize = nil
	}
	return unary(ctx, v.s, a2a.MethodListTasks, in, new(pb.ListTasksResponse), v.s.h.ListTasks)
}

// CancelTask implements A2AServiceServer.
func (v *service) CancelTask(ctx context.Context, in *pb.CancelTaskRequest) (*pb.Task, error) {
	return unary(ctx, v.s, a2a.MethodCancelTask, in, new(pb.Task), v.s.h.CancelTask)
}

// SubscribeToTask implements A2AServiceServer.
func (v *service) SubscribeToTask(in *pb.SubscribeToTaskRequest, ss grpclib.ServerStreamingServer[pb.StreamResponse]) error {
	return stream(v.s, ss, a2a.MethodSubscribeToTask, in, v.s.h.SubscribeToTask)
}

// CreateTaskPushNotificationConfig implements A2AServiceServer.
func (v *service) CreateTaskPushNotificationConfig(ctx context.Context, in *pb.TaskPushNotificationConfig) (*pb.TaskPushNotificationConfig, error) {
	return unary(ctx, v.s, a2a.MethodCreatePushConfig, in, new(pb.TaskPushNotificationConfig), v.s.h.CreateTaskPushNotificationConfig)
}

// GetTaskPushNotificationConfig implements A2AServiceServer.
func (v *service) GetTaskPushNotificationConfig(ctx context.Context, in *pb.GetTaskPushNotificationConfigRequest) (*pb.TaskPushNotificationConfig, error) {
	return unary(ctx, v.s, a2a.MethodGetPushConfig, in, new(pb.TaskPushNotificationConfig), v.s.h.GetTaskPushNotificationConfig)
}

// ListTaskPushNotificationConfigs implements A2AServiceServer.
func (v *service) ListTaskPushNotificationConfigs(ctx context.Context, in *pb.ListTaskPushNotificationConfigsRequest) (*pb.ListTaskPushNotificationConfigsResponse, error) {
	return unary(ctx, v.s, a2a.MethodListPushConfigs, in, new(pb.ListTaskPushNotificationConfigsResponse), v.s.h.ListTaskPushNotificationConfigs)
}

// DeleteTaskPushNotificationConfig implements A2AServiceServer.
func (v *service) DeleteTaskPushNotificationConfig(ctx context.Context, in *pb.DeleteTaskPushNotificationConfigRequest) (*emptypb.Empty, error) {
	return unary(ctx, v.s, a2a.MethodDeletePushConfig, in, new(emptypb.Empty), v.s.h.DeleteTaskPushNotificationConfig)
}

// extendedCardRequest is GetExtendedAgentCardRequest: only a tenant.
type extendedCardRequest struct {
	Tenant string `json:"tenant"`
}

// GetExtendedAgentCard implements A2AServiceServer.
func (v *service) GetExtendedAgentCard(ctx context.Context, in *pb.GetExtendedAgentCardRequest) (*pb.AgentCard, error) {
	return unary(ctx, v.s, a2a.MethodGetExtendedAgentCard, in, new(pb.AgentCard), func(ctx context.Context, c agent.Call, req *extendedCardRequest) (*a2a.AgentCard, error) {
		c.Tenant = req.Tenant
		card, err := v.s.h.GetExtendedAgentCard(ctx, c)
		// Proto has one form of securityRequirements: the a2a-go form of
		// security_requirements_form (CARD-4) is for JSON only. The
		// signatures stay valid: their payload is the ProtoJSON form.
		return card.WithRequirementsForm(a2a.RequirementsProtoJSON), err
	})
}

package grpc

import (
	"context"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/httpx"
)

// listServices asks the server's reflection service for its services, as
// `grpcurl list` does, then for the file describing A2AService, as
// `grpcurl describe` and a call without the .proto files do.
func listServices(t *testing.T, opts ...Option) ([]string, error) {
	t.Helper()
	conn, _ := startConn(t, agent.Config{}, httpx.TransportConfig{}, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	stream, err := rpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		return nil, err
	}
	req := &rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{}}
	if err := stream.Send(req); err != nil {
		return nil, err
	}
	resp, err := stream.Recv()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	req = &rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "lf.a2a.v1.A2AService"}}
	if err := stream.Send(req); err != nil {
		return nil, err
	}
	if resp, err = stream.Recv(); err != nil {
		return nil, err
	}
	if len(resp.GetFileDescriptorResponse().GetFileDescriptorProto()) == 0 {
		t.Errorf("no file descriptor for lf.a2a.v1.A2AService: %v", resp.GetErrorResponse())
	}
	return names, nil
}

func TestReflectionListsA2AService(t *testing.T) {
	names, err := listServices(t, WithReflection())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(names, "lf.a2a.v1.A2AService") {
		t.Errorf("services = %v, want lf.a2a.v1.A2AService among them", names)
	}
}

func TestReflectionOffByDefault(t *testing.T) {
	_, err := listServices(t)
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("err = %v, want UNIMPLEMENTED", err)
	}
}

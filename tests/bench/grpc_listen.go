package main

import (
	"fmt"
	"net/http"
	"sync"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
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
	res := r.drive(name, r.concurrency, r.duration, func(_ *http.Client, _, _ int) (string, error) {
		return grpcSendOnce(client, "gl-")
	})
	res.ratioTo = []string{"SendMessage (echo, durable store, auth)", "SendMessage over gRPC (one connection)", "baseline: Caddy respond"}
	return []result{res}
}

// Package envelopepb is the generated code of the seed system's gRPC
// JSON-RPC envelope service, iac_code.a2a.transports.proto.A2AJsonRpc
// (XPORT-6), from a2a_jsonrpc.proto in this directory.
//
// Regenerate with protoc (Debian's protobuf-compiler, 3.21.12) and the
// plugins from the module proxy at the versions go.mod pins:
//
//	go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
//	go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
//	go generate ./agent/binding/grpcjsonrpc/envelopepb/
package envelopepb

//go:generate protoc --proto_path=. --go_out=. --go_opt=paths=source_relative --go_opt=Ma2a_jsonrpc.proto=github.com/caddy-a2a/caddy-a2a/agent/binding/grpcjsonrpc/envelopepb --go-grpc_out=. --go-grpc_opt=paths=source_relative --go-grpc_opt=Ma2a_jsonrpc.proto=github.com/caddy-a2a/caddy-a2a/agent/binding/grpcjsonrpc/envelopepb a2a_jsonrpc.proto

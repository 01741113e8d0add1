package grpc

import (
	gpj "google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	pjson "github.com/caddy-a2a/caddy-a2a/internal/protojson"
)

// The conversion between the generated proto messages and the agent/a2a
// types is defined by ProtoJSON, which is what both are defined by: the
// proto message is rendered with its JSON names and decoded by the one
// ProtoJSON input rule of the other bindings (RPC-14), so a gRPC request
// is read exactly like the same request over JSON-RPC; a result is
// rendered as the JSON the other bindings send and parsed into the proto
// message. The hot results take a direct path with the same outcome
// (topb.go).

var (
	pbMarshal   = gpj.MarshalOptions{}
	pbUnmarshal = gpj.UnmarshalOptions{DiscardUnknown: true}
)

// fromPB decodes the request message in into v (a pointer to an agent/a2a
// request type). A field our types refuse is an InvalidParams error naming
// it, as over JSON-RPC.
func fromPB(in proto.Message, v any) error {
	raw, err := pbMarshal.Marshal(in)
	if err != nil {
		return a2a.ErrInvalidParams("request", "cannot be rendered as ProtoJSON")
	}
	return pjson.Decode(raw, v)
}

// toPB fills out (a proto message) from v, an agent/a2a value; nil or a
// value that does not fit the proto message is an internal error.
func toPB(v any, out proto.Message) error {
	if directPB(v, out) {
		return nil
	}
	proto.Reset(out) // the direct path may have half-filled it
	return viaProtoJSON(v, out)
}

// viaProtoJSON is toPB through v's JSON and ProtoJSON's decoder.
func viaProtoJSON(v any, out proto.Message) error {
	var perr error
	err := a2a.UseJSON(v, func(b []byte) {
		if string(b) == "null" {
			b = []byte("{}")
		}
		perr = pbUnmarshal.Unmarshal(b, out)
	})
	if err != nil || perr != nil {
		return a2a.ErrInternal()
	}
	return nil
}

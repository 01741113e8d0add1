package tests

// The gRPC JSON-RPC envelope driver of the conformance table (XPORT-6):
// the seed system's iac_code.a2a.transports.proto.A2AJsonRpc service,
// called with its generated stubs (not our client), JSON-RPC objects as
// payloads, the credentials and version in the gRPC metadata.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/caddy-a2a/caddy-a2a/agent/binding/grpcjsonrpc/envelopepb"
)

// bGRPCJSONRPC is the envelope binding's name in the table.
const bGRPCJSONRPC = "grpc-jsonrpc"

// grpcJSONRPCDriver calls the envelope service over h2c.
type grpcJSONRPCDriver struct {
	c   envelopepb.A2AJsonRpcClient
	ids *atomic.Int64
}

func newGRPCJSONRPCDriver(t *testing.T, target string) grpcJSONRPCDriver {
	t.Helper()
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return grpcJSONRPCDriver{c: envelopepb.NewA2AJsonRpcClient(conn), ids: new(atomic.Int64)}
}

// prepare is the request envelope and the metadata of r.
func (d grpcJSONRPCDriver) prepare(ctx context.Context, r confReq) (context.Context, *envelopepb.JsonRpcEnvelope) {
	md := metadata.Pairs("a2a-version", r.version())
	if tok := confTokens[r.Principal]; tok != "" {
		md.Append("authorization", "Bearer "+tok)
	}
	return metadata.NewOutgoingContext(ctx, md), &envelopepb.JsonRpcEnvelope{Payload: envelope(d.ids.Add(1), r)}
}

func (d grpcJSONRPCDriver) call(ctx context.Context, r confReq) (json.RawMessage, *confErr) {
	ctx, in := d.prepare(ctx, r)
	out, err := d.c.Send(ctx, in)
	if err != nil {
		return nil, grpcConfErr(err)
	}
	return rpcOutcome(out.GetPayload())
}

func (d grpcJSONRPCDriver) stream(ctx context.Context, r confReq) ([]json.RawMessage, *confErr) {
	ctx, in := d.prepare(ctx, r)
	st, err := d.c.Stream(ctx, in)
	if err != nil {
		return nil, grpcConfErr(err)
	}
	var evs []json.RawMessage
	final := false
	for {
		env, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return evs, grpcConfErr(err)
		}
		if final {
			return evs, &confErr{Kind: "bad", Msg: "an envelope after the final one"}
		}
		final = env.GetFinal()
		var p struct {
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
			Final  bool            `json:"final"`
		}
		if err := json.Unmarshal(env.GetPayload(), &p); err != nil {
			return evs, &confErr{Kind: "bad", Msg: fmt.Sprintf("payload %q is not JSON", env.GetPayload())}
		}
		if final && p.Result == nil && p.Error == nil && p.Final {
			break // the end frame
		}
		if p.Final != final && p.Error == nil {
			return evs, &confErr{Kind: "bad", Msg: "payload final member and envelope final differ: " + string(env.GetPayload())}
		}
		res, e := rpcOutcome(env.GetPayload())
		if e != nil {
			return evs, e
		}
		evs = append(evs, res)
	}
	if !final {
		return evs, &confErr{Kind: "bad", Msg: "the stream ended without a final envelope"}
	}
	return evs, nil
}

// confGRPCJSONRPCCard checks the card's grpc-jsonrpc interface: the gRPC
// target (host:port) of base, as for GRPC.
func confGRPCJSONRPCCard(t *testing.T, got map[string]string, base string) {
	t.Helper()
	if want := strings.TrimPrefix(base, "http://"); got[bGRPCJSONRPC] != want {
		t.Fatalf("grpc-jsonrpc interface %q, want %q", got[bGRPCJSONRPC], want)
	}
}

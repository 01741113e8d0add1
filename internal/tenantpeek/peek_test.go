package tenantpeek

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// TURN-10: the tenant of a JSON-RPC request is its top-level
// params.tenant string, found without reading past it.
func TestJSONRPC(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"tenant":"shell","id":"x"}}`, "shell"},
		{`{"params":{"message":{"parts":[{"text":"a"}],"metadata":{"tenant":"no"}},"tenant":"llm"}}`, "llm"},
		{`{"id":{"tenant":"no"},"params":{"id":"x"}}`, ""},
		{`{"params":{"tenant":7}}`, ""},
		{`[{"params":{"tenant":"shell"}}]`, ""},
		{`{"params":[1,2]}`, ""},
		{`not json`, ""},
		{`{"params":{"tenant":"a"},"params":{"tenant":"b"}}`, "a"},
		{`{"params":{"tenant":"sh\u0065ll"}}`, "shell"},
	} {
		got, err := JSONRPC(strings.NewReader(tc.in))
		if err != nil || got != tc.want {
			t.Errorf("JSONRPC(%s) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// stopReader fails any read after its data, so a scan that reads past the
// tenant fails the test.
type stopReader struct{ r io.Reader }

func (s *stopReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err == io.EOF {
		return n, io.ErrClosedPipe
	}
	return n, err
}

// The scan stops at the tenant: the rest of the body is never needed.
func TestJSONRPCStopsAtTenant(t *testing.T) {
	got, err := JSONRPC(&stopReader{strings.NewReader(`{"params":{"tenant":"shell",`)})
	if got != "shell" || err != nil {
		t.Fatalf("got %q, %v", got, err)
	}
}

// A reader error other than the end is returned (the router's deadline).
func TestJSONRPCReaderError(t *testing.T) {
	_, err := JSONRPC(&stopReader{strings.NewReader(`{"params":{"message":{`)})
	if err != io.ErrClosedPipe {
		t.Fatalf("err %v", err)
	}
}

// grpcMsg frames a protobuf message as a gRPC body.
func grpcMsg(m []byte) []byte {
	n := len(m)
	return append([]byte{0, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, m...)
}

// TURN-10 on gRPC: the tenant field of the first message, by method.
func TestGRPC(t *testing.T) {
	var m []byte
	m = protowire.AppendTag(m, 1, protowire.BytesType)
	m = protowire.AppendString(m, "task-1")
	m = protowire.AppendTag(m, 2, protowire.VarintType)
	m = protowire.AppendVarint(m, 5)
	m = protowire.AppendTag(m, 4, protowire.BytesType)
	m = protowire.AppendString(m, "shell")
	if got, _ := GRPC(bytes.NewReader(grpcMsg(m)), GRPCFieldOf("ListTaskPushNotificationConfigs"), 1024); got != "shell" {
		t.Errorf("field 4: %q", got)
	}
	if got, _ := GRPC(bytes.NewReader(grpcMsg(m)), GRPCFieldOf("GetTask"), 1024); got != "task-1" {
		t.Errorf("field 1: %q", got)
	}
	if got, _ := GRPC(bytes.NewReader(grpcMsg(m)), 4, 8); got != "" {
		t.Errorf("beyond the limit: %q", got)
	}
	c := grpcMsg(m)
	c[0] = 1
	if got, _ := GRPC(bytes.NewReader(c), 4, 1024); got != "" {
		t.Errorf("compressed: %q", got)
	}
	if GRPCFieldOf("Nope") != 0 {
		t.Error("unknown method")
	}
}

// FuzzTenantPreRead: the pre-read scanners never panic, agree with
// encoding/json on a found tenant, and never read more than they are given
// (TURN-10, issue 26).
func FuzzTenantPreRead(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"tenant":"shell","message":{}}}`))
	f.Add([]byte(`{"params":{"message":{"parts":[[[[{}]]]]},"tenant":"x"}}`))
	f.Add([]byte("\x00\x00\x00\x00\x07\x0a\x05shell"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := JSONRPC(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("error from a bytes reader: %v", err)
		}
		if got != "" {
			var env struct {
				Params map[string]json.RawMessage `json:"params"`
			}
			if json.Unmarshal(data, &env) == nil {
				var s string
				if raw, ok := env.Params["tenant"]; ok && json.Unmarshal(raw, &s) == nil && s != got && bytes.Count(data, []byte("params")) == 1 && bytes.Count(data, []byte("tenant")) == 1 {
					t.Fatalf("tenant %q, encoding/json %q", got, s)
				}
			}
		}
		if _, err := GRPC(bytes.NewReader(data), 1, 64); err != nil {
			t.Fatalf("grpc error from a bytes reader: %v", err)
		}
	})
}

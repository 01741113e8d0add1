package tests

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/net/http2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// unauthSite is an authenticated site with the WebSocket binding and,
// when grpc is set, the gRPC binding.
func unauthSite(grpc bool) string {
	g := ""
	if grpc {
		g = "grpc"
	}
	return `a2a {
	card {
		name unauth
	}
	auth {
		bearer unauth-token-0123456789
		no_env
	}
	websocket
	` + g + `
}`
}

// errorInfoReason is the reason of the A2A ErrorInfo in details (a JSON
// list of google.protobuf.Any), "" when there is none.
func errorInfoReason(t *testing.T, details json.RawMessage) string {
	t.Helper()
	var ds []struct {
		Type   string `json:"@type"`
		Reason string `json:"reason"`
		Domain string `json:"domain"`
	}
	if err := json.Unmarshal(details, &ds); err != nil {
		t.Fatalf("details %s: %v", details, err)
	}
	for _, d := range ds {
		if d.Type == "type.googleapis.com/google.rpc.ErrorInfo" && d.Domain == "a2a-protocol.org" {
			return d.Reason
		}
	}
	return ""
}

// checkRESTUnauth checks an AIP-193 401 body.
func checkRESTUnauth(t *testing.T, what string, b []byte) {
	t.Helper()
	var body struct {
		Error struct {
			Code    int
			Status  string
			Message string
			Details json.RawMessage
		}
	}
	if err := json.Unmarshal(b, &body); err != nil || body.Error.Code != 401 || body.Error.Status != "UNAUTHENTICATED" || body.Error.Message == "" {
		t.Fatalf("%s: body %s, want the AIP-193 error 401 UNAUTHENTICATED", what, b)
	}
	if r := errorInfoReason(t, body.Error.Details); r != "UNAUTHENTICATED" {
		t.Fatalf("%s: ErrorInfo reason %q in %s", what, r, b)
	}
}

// h2cPost sends a gRPC-shaped POST (HTTP/2 without TLS, Content-Type
// application/grpc) and returns the response.
func h2cPost(t *testing.T, url string) *http.Response {
	t.Helper()
	tr := &http2.Transport{AllowHTTP: true, DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader("\x00\x00\x00\x00\x00"))
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("h2c POST: %v", err)
	}
	return resp
}

// TestUnauthenticatedAnswers (issue 25, issue 34 item 8, AUTH-1): one
// unauthenticated answer per carrier family, each with the ErrorInfo
// reason UNAUTHENTICATED: JSON-RPC (POST /) gets 401 and a JSON-RPC error
// -31401; HTTP+JSON and a WebSocket upgrade get 401 and the AIP-193 body;
// a gRPC request gets the gRPC status UNAUTHENTICATED with the ErrorInfo
// detail where grpc is on, and the HTTP answer where it is off. (Redis
// Streams: the conformance table's "no credentials" row.)
func TestUnauthenticatedAnswers(t *testing.T) {
	t.Parallel()
	for _, grpcOn := range []bool{true, false} {
		name := "grpc off"
		if grpcOn {
			name = "grpc on"
		}
		t.Run(name, func(t *testing.T) {
			gw := harness.StartGatewayWith(t, unauthSite(grpcOn), harness.Options{Global: "servers {\n\tprotocols h1 h2c\n}"})
			// JSON-RPC.
			resp, err := http.Post(gw.URL+"/", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"x"}}`))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var rpcResp struct {
				JSONRPC string
				ID      json.RawMessage
				Error   struct {
					Code    int
					Message string
					Data    json.RawMessage
				}
			}
			if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" || json.Unmarshal(b, &rpcResp) != nil ||
				rpcResp.JSONRPC != "2.0" || string(rpcResp.ID) != "null" || rpcResp.Error.Code != -31401 {
				t.Fatalf("JSON-RPC: HTTP %d %q %s, want 401 with a JSON-RPC error -31401", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), b)
			}
			if r := errorInfoReason(t, rpcResp.Error.Data); r != "UNAUTHENTICATED" {
				t.Fatalf("JSON-RPC: reason %q in %s", r, b)
			}
			// HTTP+JSON.
			resp, err = http.Get(gw.URL + "/tasks")
			if err != nil {
				t.Fatal(err)
			}
			b, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("REST: HTTP %d %v", resp.StatusCode, resp.Header)
			}
			checkRESTUnauth(t, "REST", b)
			// WebSocket upgrade.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, wresp, err := websocket.Dial(ctx, wsURL(gw.URL, "/ws"), nil)
			if err == nil || wresp == nil || wresp.StatusCode != 401 {
				t.Fatalf("WebSocket upgrade: %v %v, want 401", err, wresp)
			}
			b, _ = io.ReadAll(wresp.Body)
			checkRESTUnauth(t, "WebSocket upgrade", b)
			// gRPC-shaped.
			if grpcOn {
				client := grpcRawClient(t, gw.Addr)
				_, err := client.GetTask(metadata.AppendToOutgoingContext(ctx, "a2a-version", "1.0"), &pb.GetTaskRequest{Id: "x"})
				if code, _, info := grpcStatus(t, err); code != codes.Unauthenticated || info.GetReason() != "UNAUTHENTICATED" || info.GetDomain() != "a2a-protocol.org" {
					t.Fatalf("gRPC: %v %v, want UNAUTHENTICATED with the ErrorInfo", code, info)
				}
				return
			}
			resp = h2cPost(t, gw.URL+"/lf.a2a.v1.A2AService/GetTask")
			b, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 401 || resp.Header.Get("Grpc-Status") != "" || resp.Trailer.Get("Grpc-Status") != "" {
				t.Fatalf("gRPC-shaped with grpc off: HTTP %d %v, want the HTTP 401 answer", resp.StatusCode, resp.Header)
			}
			checkRESTUnauth(t, "gRPC-shaped with grpc off", b)
		})
	}
}

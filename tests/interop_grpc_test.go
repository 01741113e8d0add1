package tests

// XPORT-2: the official A2A gRPC service (lf.a2a.v1.A2AService) served by
// the a2a handler's grpc option, driven by the official Go SDK's gRPC
// transport over plaintext h2c and over TLS (Caddy's `tls internal`).

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// interopGRPCTransport is the SDK's gRPC transport with the gateway's
// credentials (plaintext h2c unless the gateway serves TLS).
func interopGRPCTransport(gw *interopGateway) a2aclient.FactoryOption {
	creds := gw.grpcCreds
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	return a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(creds))
}

// interopInterfaceURL is the URL the card advertises for binding at base:
// base for the HTTP bindings, host:port for gRPC.
func interopInterfaceURL(binding a2a.TransportProtocol, base string) string {
	if binding != a2a.TransportProtocolGRPC {
		return base
	}
	return strings.TrimPrefix(strings.TrimPrefix(base, "http://"), "https://")
}

// grpcSite is an a2a site with the grpc option, a JSON access log and push
// (loopback receivers allowed); extra goes into the a2a block.
func grpcSite(extra string) string {
	return interopSiteHead + `	grpc
	push {
		queue local-file
		allow_private_networks 127.0.0.0/8
	}
	` + extra + `
}`
}

// interopStartGRPCGateway starts a gateway serving gRPC: plaintext with
// `protocols h1 h2c`, or with tlsOn on https with `tls internal`, the
// test trusting the gateway's own local CA.
func interopStartGRPCGateway(t *testing.T, backendBlock string, tlsOn bool) *interopGateway {
	t.Helper()
	global := "storage file_system {{DIR}}/storage\na2a {\n\tdata_dir {{DIR}}/data\n}"
	if !tlsOn {
		gw := harness.StartGatewayWith(t, grpcSite(backendBlock), harness.Options{
			Global:       global + "\nservers {\n\tprotocols h1 h2c\n}",
			ReadyPath:    "/.well-known/agent-card.json",
			StartTimeout: 30 * time.Second,
		})
		return &interopGateway{Gateway: gw, BaseURL: gw.URL, accessLog: filepath.Join(gw.Dir, "access.log")}
	}
	site := "https://127.0.0.1:{{HTTPS_PORT}} {\n\ttls internal\n" + grpcSite(backendBlock) + "\n}\n"
	gw := harness.StartGatewayWith(t, site, harness.Options{Global: global, NoHealthWait: true})
	base := fmt.Sprintf("https://127.0.0.1:%d", gw.HTTPSPort)
	pool := x509.NewCertPool()
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for {
		// The local CA is created at start; then the card is served over TLS.
		if pem, err := os.ReadFile(filepath.Join(gw.Dir, "storage", "pki", "authorities", "local", "root.crt")); err == nil && pool.AppendCertsFromPEM(pem) {
			client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
			resp, err := client.Get(base + "/.well-known/agent-card.json")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("TLS gateway not ready:\n%s", gw.Output())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return &interopGateway{Gateway: gw, BaseURL: base, accessLog: filepath.Join(gw.Dir, "access.log"),
		httpClient: client, grpcCreds: credentials.NewTLS(&tls.Config{RootCAs: pool})}
}

// XPORT-2: the SDK's gRPC client runs the whole interop scenario (send,
// stream, follow-up, get, list, cancel, subscribe) and the push-config
// operations, over h2c and over TLS; every call carried a2a-version 1.0
// and went over gRPC.
func TestInteropGoSDKGRPC(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"h2c", "tls"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			fast := interopStartGRPCGateway(t, "backend echo", mode == "tls")
			slow := interopStartGRPCGateway(t, interopSlowEcho, mode == "tls")
			interopGoScenario(t, a2a.TransportProtocolGRPC, fast, slow)
			interopGRPCPushConfigs(t, fast)
			fast.interopCheckVersionHeaders(t, "a2a-go GRPC "+mode+" (fast gateway)")
			slow.interopCheckVersionHeaders(t, "a2a-go GRPC "+mode+" (slow gateway)")
			interopCheckBindingUsed(t, a2a.TransportProtocolGRPC, fast)
			interopCheckBindingUsed(t, a2a.TransportProtocolGRPC, slow)
		})
	}
}

// interopGRPCPushConfigs drives Create/Get/List/Delete of push configs
// through the SDK's gRPC client.
func interopGRPCPushConfigs(t *testing.T, gw *interopGateway) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, _ := interopGoClient(t, ctx, a2a.TransportProtocolGRPC, gw)
	res, err := client.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("push configs over grpc"))})
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage result %T, want a task", res)
	}
	created, err := client.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, URL: "http://127.0.0.1:9/hook", Token: "tok-grpc"})
	if err != nil {
		t.Fatalf("CreateTaskPushConfig: %v", err)
	}
	if created.TaskID != task.ID || created.ID == "" || created.URL != "http://127.0.0.1:9/hook" {
		t.Fatalf("created = %+v", created)
	}
	got, err := client.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: created.ID})
	if err != nil || got.ID != created.ID || got.Token != "tok-grpc" {
		t.Fatalf("GetTaskPushConfig = %+v, %v", got, err)
	}
	list, err := client.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: task.ID})
	if err != nil || len(list) != 1 || list[0].ID != created.ID {
		t.Fatalf("ListTaskPushConfigs = %+v, %v", list, err)
	}
	if err := client.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: created.ID}); err != nil {
		t.Fatalf("DeleteTaskPushConfig: %v", err)
	}
	_, err = client.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: created.ID})
	if !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("GetTaskPushConfig after delete = %v, want ErrTaskNotFound", err)
	}
}

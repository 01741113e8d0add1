package tests

// XPORT-6 with TURN-10: on a multi-agent site, an envelope whose
// params.tenant names an agent that shares the site's auth is served by
// that agent (as on WebSocket), and one naming an agent with its own auth
// stays with the root, which answers TaskNotFoundError for it.

import (
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/binding/grpcjsonrpc/envelopepb"
	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

func TestGRPCJSONRPCTenants(t *testing.T) {
	t.Parallel()
	gw := harness.StartGatewayWith(t, `a2a {
	card {
		name gj-root
	}
	auth {
		principal alice bearer `+gjToken+`
		no_env
	}
	grpc_jsonrpc
	agent shell {
		card {
			name gj-shell
		}
	}
	agent own {
		card {
			name gj-own
		}
		auth {
			bearer own-token-0123456789
			no_env
		}
	}
}`, harness.Options{Global: "servers {\n\tprotocols h1 h2c\n}", ReadyPath: "/.well-known/agent-card.json", StartTimeout: 30 * time.Second})
	c := gjClient(t, gw.Addr)
	alice := gjCtx(t, "authorization", "Bearer "+gjToken)
	params := gjSendParams("to the shell agent")
	params["tenant"] = "shell"
	out, err := c.Send(alice, &envelopepb.JsonRpcEnvelope{Payload: gjRequest(1, "SendMessage", params)})
	if err != nil {
		t.Fatal(err)
	}
	task, _ := gjDecode(t, out.GetPayload()).Result["task"].(map[string]any)
	id, _ := task["id"].(string)
	if id == "" {
		t.Fatalf("SendMessage to tenant shell: %s", out.GetPayload())
	}
	if !mcHas(t, gw.URL+"/shell", gjToken, id) || mcHas(t, gw.URL, gjToken, id) {
		t.Fatalf("task %s: want it at /shell only", id)
	}
	params = gjSendParams("to the own agent")
	params["tenant"] = "own"
	out, err = c.Send(alice, &envelopepb.JsonRpcEnvelope{Payload: gjRequest(2, "SendMessage", params)})
	if err != nil {
		t.Fatal(err)
	}
	if r := gjDecode(t, out.GetPayload()); r.Error == nil || r.Error.Code != -32001 || strings.Contains(string(out.GetPayload()), "Echo:") {
		t.Fatalf("SendMessage to tenant own (other auth): %s, want TaskNotFoundError", out.GetPayload())
	}
}

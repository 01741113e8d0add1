package tests

// End-to-end checks of the push config limits with the built binary:
// store-time URL check without DNS (PUSH-2) and the cap of configs per
// task (PUSH-1).

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// TestPushUnresolvedURLAccepted: a callback whose name does not resolve
// now is stored (DNS may be down, the receiver not yet published); literal
// blocked addresses and localhost names are still refused with the fixed
// reason (PUSH-2).
func TestPushUnresolvedURLAccepted(t *testing.T) {
	t.Parallel()
	const name = "receiver.example.net"
	if _, err := net.DefaultResolver.LookupHost(t.Context(), name); err == nil {
		t.Logf("%s resolves here; the check below still expects acceptance (a public answer)", name)
	}
	gw := harness.StartGateway(t, `a2a {
	card {
		name push-dns
	}
	push {
		queue local-file
	}
}`)
	task := pushSend(t, gw.URL, map[string]any{"url": "https://" + name + "/hook", "token": "t-1"})
	got, rerr := harness.At(gw.URL).RPC(t, "GetTaskPushNotificationConfig", map[string]any{"taskId": task["id"], "id": task["id"]})
	if rerr != nil || got["url"] != "https://"+name+"/hook" {
		t.Fatalf("inline config with an unresolved name: %v %v", got, rerr)
	}
	res, rerr := harness.At(gw.URL).RPC(t, "CreateTaskPushNotificationConfig", map[string]any{"taskId": task["id"], "id": "later", "url": "https://" + name + "/later"})
	if rerr != nil || res["id"] != "later" {
		t.Fatalf("create with an unresolved name: %v %v", res, rerr)
	}
	for _, u := range []string{"http://10.0.0.1/hook", "http://127.0.0.1/hook", "http://localhost/hook", "http://[::1]/hook"} {
		_, rerr := harness.At(gw.URL).RPC(t, "CreateTaskPushNotificationConfig", map[string]any{"taskId": task["id"], "url": u})
		msg, _ := rerr["message"].(string)
		if rerr == nil || fmt.Sprint(rerr["code"]) != "-32602" || !strings.Contains(msg, "must be an absolute http or https URL whose host is a public address") {
			t.Errorf("%s: %v, want InvalidParams with the fixed reason", u, rerr)
		}
	}
}

// TestPushConfigCapE2E: max_configs_per_task caps the configs of a task
// over both bindings, inline config included; replacing an id is allowed
// (PUSH-1).
func TestPushConfigCapE2E(t *testing.T) {
	t.Parallel()
	gw := harness.StartGateway(t, `a2a {
	card {
		name push-cap
	}
	push {
		queue local-file
		allow_private_networks 127.0.0.0/8
		max_configs_per_task 2
	}
}`)
	hook := fmt.Sprintf("http://127.0.0.1:%d/hook", closedPort(t))
	task := pushSend(t, gw.URL, map[string]any{"url": hook})
	id, _ := task["id"].(string)
	if _, rerr := harness.At(gw.URL).RPC(t, "CreateTaskPushNotificationConfig", map[string]any{"taskId": id, "id": "b", "url": hook}); rerr != nil {
		t.Fatalf("second config: %v", rerr)
	}
	_, rerr := harness.At(gw.URL).RPC(t, "CreateTaskPushNotificationConfig", map[string]any{"taskId": id, "id": "c", "url": hook})
	if msg, _ := rerr["message"].(string); rerr == nil || fmt.Sprint(rerr["code"]) != "-32602" || !strings.Contains(msg, "at most 2 push notification configs per task") {
		t.Fatalf("third config: %v, want InvalidParams naming the limit", rerr)
	}
	if _, rerr := harness.At(gw.URL).RPC(t, "CreateTaskPushNotificationConfig", map[string]any{"taskId": id, "id": "b", "url": hook + "?v=2"}); rerr != nil {
		t.Fatalf("replacing config b at the cap: %v", rerr)
	}
	r := harness.At(gw.URL+"/tasks/"+id+"/pushNotificationConfigs").Do(t, http.MethodPost, `{"id":"d","url":"`+hook+`"}`)
	resp, body := r.Response, r.Raw
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "at most 2 push notification configs per task") {
		t.Fatalf("REST create beyond the cap: %d %s", resp.StatusCode, body)
	}
	list, rerr := harness.At(gw.URL).RPC(t, "ListTaskPushNotificationConfigs", map[string]any{"taskId": id})
	if cs, _ := list["configs"].([]any); rerr != nil || len(cs) != 2 {
		t.Fatalf("configs stored: %v %v, want 2", list, rerr)
	}
}

package agent

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// TestLegacyV03Dispatch: with LegacyV03 the JSON-RPC binding serves 0.3
// method names without a version header (RPC-2), 0.3 calls in a batch
// too, and counts them under their 1.0 method plus the legacy counter;
// without it the 0.3 names keep their 1.0 answers.
func TestLegacyV03Dispatch(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	e := newTestEnvLegacy(t, Config{Metrics: m})
	hdr := v1Headers("")
	hdr.Del("A2A-Version")
	send := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m1","parts":[{"kind":"text","text":"hi"}]}}}`
	_, rep := e.rawRPC(send, hdr)
	if rep.Error != nil {
		t.Fatalf("message/send: %+v", rep.Error)
	}
	var task struct {
		Kind, ID string
		Status   struct{ State string }
	}
	if err := json.Unmarshal(rep.Result, &task); err != nil || task.Kind != "task" || task.Status.State != "input-required" {
		t.Fatalf("message/send result %s", rep.Result)
	}
	batch := `[{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"` + task.ID + `"}},{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"id":"nope"}}]`
	hr := e.do(http.MethodPost, "/", []byte(batch), hdr)
	var items []rpcReply
	if err := json.Unmarshal(hr.body, &items); err != nil || len(items) != 2 {
		t.Fatalf("batch: %s", hr.body)
	}
	if items[0].Error != nil || !strings.Contains(string(items[0].Result), `"kind":"task"`) {
		t.Errorf("batch tasks/get: %s", items[0].Result)
	}
	if items[1].Error == nil || items[1].Error.Code != a2a.CodeTaskNotFound {
		t.Errorf("batch tasks/get of an unknown task: %+v", items[1].Error)
	}
	if v := metricValue(t, reg, "caddy_a2a_legacy_v03_requests_total", map[string]string{"method": a2a.MethodGetTask}); v != 2 {
		t.Errorf("legacy counter GetTask = %v, want 2", v)
	}
	if v := metricValue(t, reg, "caddy_a2a_requests_total", map[string]string{"binding": BindingJSONRPC, "method": a2a.MethodSendMessage, "outcome": "ok"}); v != 1 {
		t.Errorf("requests_total SendMessage ok = %v, want 1", v)
	}
	if v := metricValue(t, reg, "caddy_a2a_requests_total", map[string]string{"binding": BindingJSONRPC, "method": a2a.MethodGetTask, "outcome": "TASK_NOT_FOUND"}); v != 1 {
		t.Errorf("requests_total GetTask TASK_NOT_FOUND = %v, want 1", v)
	}

	off := newTestEnv(t, Config{})
	if _, rep := off.rawRPC(send, v1Headers("")); rep.Error == nil || rep.Error.Code != a2a.CodeMethodNotFound {
		t.Errorf("legacy off, message/send with 1.0: %+v, want -32601", rep.Error)
	}
	if _, rep := off.rawRPC(send, hdr); rep.Error == nil || rep.Error.Code != a2a.CodeVersionNotSupported {
		t.Errorf("legacy off, message/send without a version: %+v, want -32009", rep.Error)
	}
}

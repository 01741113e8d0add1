package backends

import (
	"context"
	"testing"
	"time"
)

// TestExecTraceParent (OPS-4): a per_turn agent gets the turn's W3C trace
// context as TRACEPARENT; without one the variable is absent.
func TestExecTraceParent(t *testing.T) {
	script := `read -r line; echo '{"v":1,"type":"text","text":"tp='"${TRACEPARENT:-none}"'"}'; echo '{"v":1,"type":"end","outcome":"input_required"}'`
	e := &Exec{Argv: []string{"bash", "-c", script}, GracePeriod: 200 * time.Millisecond}
	if err := e.Validate(); err != nil {
		t.Fatal(err)
	}
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	req := turnReq(t, "hi")
	req.TraceParent = tp
	rec := &recorder{}
	if err := e.RunTurn(context.Background(), req, rec.emit); err != nil {
		t.Fatal(err)
	}
	if got := rec.text(); got != "tp="+tp {
		t.Errorf("agent saw %q, want tp=%s", got, tp)
	}
	rec = &recorder{}
	if err := e.RunTurn(context.Background(), turnReq(t, "hi"), rec.emit); err != nil {
		t.Fatal(err)
	}
	if got := rec.text(); got != "tp=none" {
		t.Errorf("agent without trace saw %q", got)
	}
}

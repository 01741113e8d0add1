package tests

// "Acknowledged = synced" (RPC-12, OPS-3; issue 33.4): kill -9 keeps the
// page cache, so the restart tests cannot see a store that answers before
// its data reached the disk. This test runs the real gateway under strace
// and checks, for every acknowledged SendMessage (each with an inline push
// config, so its commit carries the push config and outbox jobs), that
// the answer left only after an fsync/fdatasync of the SQLite WAL that
// covers every WAL write before it. A second run with `durability normal`
// (SQLite syncs only at checkpoints) is the control: the checker must
// find answers there that left before their sync, or it could not see a
// missing fsync at all.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

func TestDurabilityAcknowledgedIsSynced(t *testing.T) {
	t.Parallel()
	strace := harness.NeedTool(t, "strace", "the fsync trace test")
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer hook.Close()
	const sends = 12
	for _, tc := range []struct {
		name, global string
		wantSynced   bool
	}{
		{"full", "", true},
		{"normal (control)", "a2a {\n\tdurability normal\n}", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			trace := filepath.Join(t.TempDir(), "strace.log")
			gw := harness.StartGatewayWith(t, `a2a {
	card {
		name fsync
	}
	backend echo
	push {
		queue local-file
		allow_private_networks 127.0.0.0/8
	}
}`, harness.Options{Global: tc.global, StartTimeout: 2 * time.Minute,
				Wrap: append(append([]string{strace}, fsyncTraceArgs...), "-o", trace)})
			taskID := ""
			for i := range sends {
				msg := map[string]any{"role": "ROLE_USER", "messageId": fmt.Sprintf("fsync-%d", i), "parts": []any{map[string]any{"text": "x"}}}
				if i%3 == 2 {
					msg["taskId"] = taskID // a follow-up: an update of a stored task
				}
				res, err := harness.At(gw.URL).Try("SendMessage", map[string]any{"message": msg,
					"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": hook.URL + "/hook", "token": "t"}}})
				if err != nil {
					t.Fatalf("SendMessage %d: %v", i, err)
				}
				task, _ := res["task"].(map[string]any)
				if st, _ := task["status"].(map[string]any); st["state"] != "TASK_STATE_INPUT_REQUIRED" {
					t.Fatalf("SendMessage %d: %v", i, res)
				}
				taskID, _ = task["id"].(string)
			}
			gw.Kill()
			f, err := os.Open(trace)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rep := checkFsyncTrace(f)
			t.Logf("durability %s: %d answers, %d WAL writes, %d WAL syncs, %d answers before their sync, %d without a WAL write, %d with another write in flight",
				tc.name, rep.acks, rep.walWrites, rep.walSyncs, rep.unsynced, rep.noWrite, rep.inFlight)
			if rep.acks < sends {
				t.Fatalf("the trace shows %d JSON-RPC answers, want at least %d: it does not see the answers", rep.acks, sends)
			}
			if rep.noWrite > 0 {
				t.Errorf("%d answers with no WAL write since the previous one: not stored in the SQLite WAL?", rep.noWrite)
			}
			if tc.wantSynced && rep.unsynced > 0 {
				t.Errorf("%d of %d answers left before the WAL was synced (acknowledged ≠ on disk), first:\n%s", rep.unsynced, rep.acks, rep.firstUnsynced)
			}
			if !tc.wantSynced && rep.unsynced == 0 {
				t.Errorf("control: with durability normal every answer still followed a WAL sync; the check cannot tell a missing fsync")
			}
		})
	}
}

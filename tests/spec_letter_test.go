package tests

// A2A 1.0 to the letter where no conformance suite looks (issue 34):
// version negotiation (§3.6.2, RPC-2) on every binding, the REST `status`
// query enum spellings (§11.5), cancel idempotency (§3.3.1, RPC-10) and
// the extended card's HTTP caching (§13.3, CARD-8). The gateway is the
// error table's (error_table_test.go).

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// etVersionCase is an A2A-Version to send (send false: no header at all)
// and whether it is served.
type etVersionCase struct {
	v      string
	send   bool
	served bool
}

var etVersions = []etVersionCase{
	{"1.0", true, true},
	{"1.0.3", true, true},
	{"1.0.0-rc", true, true}, // Major.Minor 1.0: the pre-release tag of a patch is ignored
	{"1.1", true, false},     // a later minor: semantics the gateway does not know
	{"1", true, false},       // not Major.Minor
	{"2.0", true, false},
	{"0.3", true, false},
	{"", true, false},      // empty means 0.3 (§3.6.2)
	{"", false, false},     // missing means 0.3 too
	{"1.x.0", true, false}, // not a number
}

// TestVersionNegotiation: RPC-2 (§3.6.2) on JSON-RPC, HTTP+JSON (header
// and query parameter) and gRPC metadata: only Major.Minor 1.0 is served;
// every other value is VersionNotSupportedError naming 1.0.
func TestVersionNegotiation(t *testing.T) {
	t.Parallel()
	gw := startErrorTableGateway(t)
	client := grpcRawClient(t, gw.Addr)
	for _, vc := range etVersions {
		name := vc.v
		if !vc.send {
			name = "missing"
		} else if name == "" {
			name = "empty"
		}
		t.Run(name, func(t *testing.T) {
			req := func(method, url, body string) *http.Response {
				r, err := http.NewRequest(method, url, strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				r.Header.Set("Authorization", "Bearer "+etAlice)
				r.Header.Set("Content-Type", "application/json")
				if vc.send {
					r.Header["A2A-Version"] = []string{vc.v}
				}
				resp, err := http.DefaultClient.Do(r)
				if err != nil {
					t.Fatal(err)
				}
				return resp
			}
			// JSON-RPC.
			resp := req("POST", gw.URL+"/", harness.Envelope("ListTasks", map[string]any{}))
			var rpc struct {
				Result map[string]any `json:"result"`
				Error  map[string]any `json:"error"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&rpc)
			resp.Body.Close()
			if vc.served != (rpc.Error == nil && rpc.Result != nil) {
				t.Errorf("JSON-RPC: %v %v, served %v", rpc.Result, rpc.Error, vc.served)
			} else if !vc.served {
				etWantVersionError(t, "JSON-RPC", rpc.Error["code"], rpc.Error["data"])
			}
			// HTTP+JSON.
			resp = req("GET", gw.URL+"/tasks", "")
			var st struct {
				Error struct {
					Status  string `json:"status"`
					Details any    `json:"details"`
				} `json:"error"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if vc.served != (resp.StatusCode == http.StatusOK) {
				t.Errorf("HTTP+JSON: HTTP %d, served %v", resp.StatusCode, vc.served)
			} else if !vc.served {
				if resp.StatusCode != 400 || st.Error.Status != "FAILED_PRECONDITION" {
					t.Errorf("HTTP+JSON: HTTP %d status %q, want 400 FAILED_PRECONDITION", resp.StatusCode, st.Error.Status)
				}
				etWantVersionError(t, "HTTP+JSON", float64(-32009), st.Error.Details)
			}
			// gRPC metadata.
			md := metadata.Pairs("authorization", "Bearer "+etAlice)
			if vc.send {
				md.Append("a2a-version", vc.v)
			}
			ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(context.Background(), md), 20*time.Second)
			defer cancel()
			_, err := client.ListTasks(ctx, &pb.ListTasksRequest{})
			if vc.served != (err == nil) {
				t.Errorf("gRPC: %v, served %v", err, vc.served)
			} else if !vc.served {
				s := status.Convert(err)
				var info *errdetails.ErrorInfo
				for _, d := range s.Details() {
					if i, ok := d.(*errdetails.ErrorInfo); ok {
						info = i
					}
				}
				if s.Code() != codes.FailedPrecondition || info.GetReason() != "VERSION_NOT_SUPPORTED" || info.GetMetadata()["supportedVersions"] != "1.0" {
					t.Errorf("gRPC: %v %v, want FAILED_PRECONDITION VERSION_NOT_SUPPORTED supportedVersions 1.0", s.Code(), info)
				}
			}
		})
	}
	// The query parameter stands for the header on HTTP.
	if r := harness.At(gw.URL+"/tasks?A2A-Version=1.1").Do(t, "GET", "", harness.Bearer(etAlice), harness.Header("A2A-Version", "")); r.StatusCode != 400 {
		t.Errorf("?A2A-Version=1.1: HTTP %d %s, want 400", r.StatusCode, r.Raw)
	}
	if r := harness.At(gw.URL+"/tasks?A2A-Version=1.0.2").Do(t, "GET", "", harness.Bearer(etAlice), harness.Header("A2A-Version", "")); r.StatusCode != 200 {
		t.Errorf("?A2A-Version=1.0.2: HTTP %d %s, want 200", r.StatusCode, r.Raw)
	}
}

// etWantVersionError checks a VersionNotSupportedError: code -32009 and
// an ErrorInfo naming the supported version.
func etWantVersionError(t *testing.T, where string, code any, details any) {
	t.Helper()
	b, _ := json.Marshal(details)
	reason, meta := errorInfoOf(b)
	if code != float64(-32009) || reason != "VERSION_NOT_SUPPORTED" || meta["supportedVersions"] != "1.0" {
		t.Errorf("%s: code %v reason %q metadata %v, want -32009 VERSION_NOT_SUPPORTED supportedVersions 1.0", where, code, reason, meta)
	}
}

// TestRESTStatusQuerySpellings: §11.5 — `GET /tasks?status=` takes the
// ProtoJSON name, its number, and the short form in any case; answers
// carry the ProtoJSON names. An empty page is `"tasks":[]` (docs/transports.md's
// "required arrays" choice).
func TestRESTStatusQuerySpellings(t *testing.T) {
	t.Parallel()
	gw := startErrorTableGateway(t)
	res, _ := harness.At(gw.URL, harness.Bearer(etAlice)).RPC(t, "SendMessage", etMsg("complete"))
	completed := sentTaskID(res)
	res, _ = harness.At(gw.URL, harness.Bearer(etAlice)).RPC(t, "SendMessage", etMsg("open"))
	open := sentTaskID(res)
	if completed == "" || open == "" {
		t.Fatalf("tasks %q %q", completed, open)
	}
	spellings := map[string][]string{
		"TASK_STATE_COMPLETED":      {"TASK_STATE_COMPLETED", "task_state_completed", "3", "completed", "COMPLETED", "Completed"},
		"TASK_STATE_INPUT_REQUIRED": {"TASK_STATE_INPUT_REQUIRED", "6", "input_required", "input-required", "INPUT-REQUIRED"},
	}
	want := map[string]string{"TASK_STATE_COMPLETED": completed, "TASK_STATE_INPUT_REQUIRED": open}
	for state, list := range spellings {
		for _, q := range list {
			r := harness.At(gw.URL+"/tasks?status="+q).Do(t, "GET", "", harness.Bearer(etAlice))
			var page struct {
				Tasks []struct {
					ID     string `json:"id"`
					Status struct {
						State string `json:"state"`
					} `json:"status"`
				} `json:"tasks"`
			}
			if err := json.Unmarshal(r.Raw, &page); err != nil || r.StatusCode != 200 || len(page.Tasks) != 1 {
				t.Errorf("status=%s: HTTP %d %s, want one task", q, r.StatusCode, r.Raw)
				continue
			}
			if page.Tasks[0].ID != want[state] || page.Tasks[0].Status.State != state {
				t.Errorf("status=%s: %s %s, want %s %s", q, page.Tasks[0].ID, page.Tasks[0].Status.State, want[state], state)
			}
		}
	}
	for _, bad := range []string{"bogus", "task_state_", "99", "working%20x"} {
		r := harness.At(gw.URL+"/tasks?status="+bad).Do(t, "GET", "", harness.Bearer(etAlice))
		if r.StatusCode != 400 || !strings.Contains(string(r.Raw), `"INVALID_PARAMS"`) || !strings.Contains(string(r.Raw), `"field":"status"`) {
			t.Errorf("status=%s: HTTP %d %s, want 400 INVALID_PARAMS naming status", bad, r.StatusCode, r.Raw)
		}
	}
	// An empty page keeps its required member.
	r := harness.At(gw.URL+"/tasks?status=rejected").Do(t, "GET", "", harness.Bearer(etAlice))
	if r.StatusCode != 200 || !strings.Contains(string(r.Raw), `"tasks":[]`) {
		t.Errorf("empty page: HTTP %d %s, want \"tasks\":[]", r.StatusCode, r.Raw)
	}
}

// TestCancelIdempotent: §3.3.1 (RPC-10) — a second cancel of a CANCELED
// task returns that task unchanged on JSON-RPC, HTTP+JSON and gRPC; a
// COMPLETED task stays TaskNotCancelable (error_table_test.go).
func TestCancelIdempotent(t *testing.T) {
	t.Parallel()
	gw := startErrorTableGateway(t)
	client := grpcRawClient(t, gw.Addr)
	ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+etAlice, "a2a-version", "1.0"), 30*time.Second)
	defer cancel()
	cancels := map[string]func(id string) (state, timestamp, msgID string){
		bJSONRPC: func(id string) (string, string, string) {
			res, rerr := harness.At(gw.URL, harness.Bearer(etAlice)).RPC(t, "CancelTask", map[string]any{"id": id})
			if rerr != nil {
				t.Fatalf("JSON-RPC CancelTask: %v", rerr)
			}
			return etStatusOf(res)
		},
		bREST: func(id string) (string, string, string) {
			r := harness.At(gw.URL+"/tasks/"+id+":cancel").Do(t, http.MethodPost, "{}", harness.Bearer(etAlice))
			if r.StatusCode != 200 {
				t.Fatalf("HTTP+JSON cancel: HTTP %d %s", r.StatusCode, r.Raw)
			}
			return etStatusOf(r.JSON(t))
		},
		bGRPC: func(id string) (string, string, string) {
			task, err := client.CancelTask(ctx, &pb.CancelTaskRequest{Id: id})
			if err != nil {
				t.Fatalf("gRPC CancelTask: %v", err)
			}
			return task.GetStatus().GetState().String(), task.GetStatus().GetTimestamp().AsTime().UTC().Format(time.RFC3339Nano),
				task.GetStatus().GetMessage().GetMessageId()
		},
	}
	for _, b := range []string{bJSONRPC, bREST, bGRPC} {
		t.Run(b, func(t *testing.T) {
			res, _ := harness.At(gw.URL, harness.Bearer(etAlice)).RPC(t, "SendMessage", etMsg("to cancel"))
			id := sentTaskID(res)
			s1, ts1, m1 := cancels[b](id)
			s2, ts2, m2 := cancels[b](id)
			if s1 != "TASK_STATE_CANCELED" || s2 != s1 || ts2 != ts1 || m2 != m1 || m1 == "" {
				t.Errorf("cancel twice: %s %s %s, then %s %s %s; want the same CANCELED task", s1, ts1, m1, s2, ts2, m2)
			}
		})
	}
}

// etStatusOf is a task's state, timestamp (normalised) and status message id.
func etStatusOf(task map[string]any) (state, timestamp, msgID string) {
	st, _ := task["status"].(map[string]any)
	state, _ = st["state"].(string)
	if ts, _ := st["timestamp"].(string); ts != "" {
		if p, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			timestamp = p.UTC().Format(time.RFC3339Nano)
		}
	}
	m, _ := st["message"].(map[string]any)
	msgID, _ = m["messageId"].(string)
	return state, timestamp, msgID
}

// TestExtendedCardCaching: §13.3 (CARD-8) — GET /extendedAgentCard is
// `Cache-Control: private` with the card's max-age, a strong ETag of the
// bytes that stays the same between requests, `Vary: Authorization` and
// the API key header, and 304 for a matching If-None-Match (none for a
// stale one); the JSON-RPC method is unaffected.
func TestExtendedCardCaching(t *testing.T) {
	t.Parallel()
	gw := startErrorTableGateway(t)
	get := func(opts ...harness.Option) *harness.Reply {
		return harness.At(gw.URL+"/extendedAgentCard").Do(t, "GET", "", append([]harness.Option{harness.Bearer(etAlice)}, opts...)...)
	}
	r := get()
	etag := r.Header.Get("Etag")
	if r.StatusCode != 200 || r.Header.Get("Cache-Control") != "private, max-age=30" || !strings.HasPrefix(etag, `"`) || strings.HasPrefix(etag, "W/") {
		t.Fatalf("extended card: HTTP %d Cache-Control %q ETag %q", r.StatusCode, r.Header.Get("Cache-Control"), etag)
	}
	vary := strings.Join(r.Header.Values("Vary"), ",")
	if !strings.Contains(vary, "Authorization") || !strings.Contains(vary, etKeyName) {
		t.Errorf("Vary %q, want Authorization and %s", vary, etKeyName)
	}
	if !strings.Contains(string(r.Raw), `"name":"et"`) || !strings.Contains(string(r.Raw), `"startedAt":"`) {
		t.Errorf("extended card body %s", r.Raw)
	}
	// The same bytes a second later (no per-second uptime), the same ETag.
	time.Sleep(1100 * time.Millisecond) // sleep: a second must pass (no per-second uptime in the card)
	again := get(harness.Header("Authorization", ""), harness.Header(etKeyName, etAPIKey))
	if again.StatusCode != 200 || again.Header.Get("Etag") != etag || string(again.Raw) != string(r.Raw) {
		t.Errorf("second fetch: HTTP %d ETag %q (first %q); bytes equal %v", again.StatusCode, again.Header.Get("Etag"), etag, string(again.Raw) == string(r.Raw))
	}
	nm := get(harness.Header("If-None-Match", etag))
	if nm.StatusCode != http.StatusNotModified || len(nm.Raw) != 0 || nm.Header.Get("Etag") != etag || nm.Header.Get("Cache-Control") != "private, max-age=30" || nm.Header.Get("Vary") == "" {
		t.Errorf("If-None-Match %s: HTTP %d %q headers %v", etag, nm.StatusCode, nm.Raw, nm.Header)
	}
	if list := get(harness.Header("If-None-Match", `"other", `+etag)); list.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match list: HTTP %d", list.StatusCode)
	}
	if stale := get(harness.Header("If-None-Match", `"stale"`)); stale.StatusCode != 200 || len(stale.Raw) == 0 {
		t.Errorf("stale If-None-Match: HTTP %d", stale.StatusCode)
	}
	// Unauthenticated: no card and nothing cacheable.
	if anon := get(harness.Header("Authorization", "")); anon.StatusCode != http.StatusUnauthorized || anon.Header.Get("Etag") != "" {
		t.Errorf("anonymous: HTTP %d ETag %q", anon.StatusCode, anon.Header.Get("Etag"))
	}
	// JSON-RPC GetExtendedAgentCard answers the same card.
	res, rerr := harness.At(gw.URL, harness.Bearer(etAlice)).RPC(t, "GetExtendedAgentCard", map[string]any{})
	if rerr != nil || res["name"] != "et" {
		t.Errorf("JSON-RPC GetExtendedAgentCard: %v %v", res, rerr)
	}
}

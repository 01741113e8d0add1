package agent

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
	"github.com/caddy-a2a/caddy-a2a/push"
)

// newPushEnv is an endpoint with push on over a local-file queue whose
// workers are not started, so queued jobs stay in the outbox to inspect.
func newPushEnv(t *testing.T) (*testEnv, string) {
	t.Helper()
	return newPushEnvWith(t, Config{})
}

// newPushEnvWith is newPushEnv with cfg (its Push is set here).
func newPushEnvWith(t *testing.T, cfg Config) (*testEnv, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "a2a.db")
	st, err := store.OpenSQLite(path, store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kr, err := push.NewKeyRing()
	if err != nil {
		t.Fatal(err)
	}
	allow, _ := push.ParseCIDRs("127.0.0.0/8")
	cfg.Push = push.NewEngine(push.NewLocalQueue(st, 0), kr, 1, push.Settings{Policy: &push.Policy{Allow: allow}}, nil)
	return newTestEnvOn(t, st, cfg, true), path
}

func pushDepth(t *testing.T, st *store.SQLite) int {
	t.Helper()
	n, err := st.PushQueueDepth(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPushConfigMethods covers PUSH-1 over JSON-RPC: ids, upsert, list
// pagination, get/delete semantics, ownership, fixed URL reason, inline
// config, jobs on the turn-ending state, delete dropping pending jobs, and
// secrets encrypted at rest (PUSH-3).
func TestPushConfigMethods(t *testing.T) {
	e, dbPath := newPushEnv(t)
	const hook = "http://127.0.0.1:9/hook"
	task := e.send("alice", &a2a.SendMessageRequest{Message: msg("hi"), Configuration: &a2a.SendMessageConfiguration{
		TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{URL: hook, Token: "inline-token"}}})
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("state %s", task.Status.State)
	}
	// The inline config got the task id as its id; the turn end queued one job.
	var got a2a.TaskPushNotificationConfig
	e.result("alice", a2a.MethodGetPushConfig, map[string]any{"taskId": task.ID, "id": task.ID}, &got)
	if got.URL != hook || got.Token != "inline-token" || got.TaskID != task.ID {
		t.Fatalf("inline config: %+v", got)
	}
	if n := pushDepth(t, e.st); n != 1 {
		t.Fatalf("jobs after input-required: %d, want 1", n)
	}

	// Create with a client id, then upsert it.
	e.result("alice", a2a.MethodCreatePushConfig, map[string]any{"taskId": task.ID, "id": "b", "url": hook + "?v=1",
		"authentication": map[string]any{"scheme": "Bearer", "credentials": "cred-b"}}, &got)
	if got.ID != "b" || got.Authentication == nil || got.Authentication.Credentials != "cred-b" {
		t.Fatalf("create: %+v", got)
	}
	e.result("alice", a2a.MethodCreatePushConfig, map[string]any{"taskId": task.ID, "id": "b", "url": hook + "?v=2"}, &got)
	var list a2a.ListTaskPushNotificationConfigsResponse
	e.result("alice", a2a.MethodListPushConfigs, map[string]any{"taskId": task.ID, "pageSize": 1}, &list)
	if len(list.Configs) != 1 || list.NextPageToken == "" {
		t.Fatalf("list page 1: %+v", list)
	}
	first := list.Configs[0].ID
	e.result("alice", a2a.MethodListPushConfigs, map[string]any{"taskId": task.ID, "pageSize": 1, "pageToken": list.NextPageToken}, &list)
	if len(list.Configs) != 1 || list.NextPageToken != "" || list.Configs[0].ID == first {
		t.Fatalf("list page 2: %+v", list)
	}
	got = a2a.TaskPushNotificationConfig{}
	e.result("alice", a2a.MethodGetPushConfig, map[string]any{"taskId": task.ID, "id": "b"}, &got)
	if got.URL != hook+"?v=2" || got.Authentication != nil || got.Token != "" {
		t.Fatalf("upsert did not replace: %+v", got)
	}

	// Unknown config and other principals → TaskNotFound.
	e.rpcError("alice", a2a.MethodGetPushConfig, map[string]any{"taskId": task.ID, "id": "nope"}, a2a.CodeTaskNotFound)
	e.rpcError("bob", a2a.MethodGetPushConfig, map[string]any{"taskId": task.ID, "id": "b"}, a2a.CodeTaskNotFound)
	e.rpcError("bob", a2a.MethodListPushConfigs, map[string]any{"taskId": task.ID}, a2a.CodeTaskNotFound)
	e.rpcError("bob", a2a.MethodCreatePushConfig, map[string]any{"taskId": task.ID, "url": hook}, a2a.CodeTaskNotFound)
	e.rpcError("bob", a2a.MethodDeletePushConfig, map[string]any{"taskId": task.ID, "id": "b"}, a2a.CodeTaskNotFound)

	// Empty or rejected URLs: InvalidParams with the same fixed reason.
	for _, u := range []string{"", "http://169.254.169.254/", "http://localhost/", "ftp://example.com/", "http://2130706433/"} {
		er := e.rpcError("alice", a2a.MethodCreatePushConfig, map[string]any{"taskId": task.ID, "url": u}, a2a.CodeInvalidParams)
		if !strings.Contains(er.Message, push.ReasonURL) {
			t.Errorf("url %q: message %q lacks the fixed reason", u, er.Message)
		}
		checkBadRequestField(t, er.Data, "url")
		er = e.rpcError("alice", a2a.MethodSendMessage, map[string]any{"message": msg("x"), "configuration": map[string]any{
			"taskPushNotificationConfig": map[string]any{"url": u}}}, a2a.CodeInvalidParams)
		if !strings.Contains(er.Message, push.ReasonURL) {
			t.Errorf("inline url %q: message %q lacks the fixed reason", u, er.Message)
		}
	}
	e.rpcError("alice", a2a.MethodCreatePushConfig, map[string]any{"taskId": task.ID, "url": hook, "authentication": map[string]any{"scheme": "Bad Scheme"}}, a2a.CodeInvalidParams)
	e.rpcError("alice", a2a.MethodCreatePushConfig, map[string]any{"taskId": task.ID, "url": hook, "token": "a\r\nX-Evil: 1"}, a2a.CodeInvalidParams)

	// Secrets are sealed at rest.
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var raw string
	if err := db.QueryRow(`SELECT group_concat(token || credentials, '|') FROM push_configs`).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(raw, "inline-token") || strings.Contains(raw, "cred-b") || !strings.Contains(raw, "v1:") {
		t.Fatalf("push secrets are not encrypted at rest: %q", raw)
	}

	// A follow-up ends the turn again: one job per config (2) on top of the first.
	task2 := e.send("alice", &a2a.SendMessageRequest{Message: &a2a.Message{Role: a2a.RoleUser, MessageID: "m2", TaskID: task.ID, ContextID: task.ContextID, Parts: []a2a.Part{a2a.TextPart("more")}}})
	if task2.ID != task.ID {
		t.Fatalf("follow-up went to %s", task2.ID)
	}
	if n := pushDepth(t, e.st); n != 3 {
		t.Fatalf("jobs after follow-up: %d, want 3", n)
	}
	// Delete drops that config's pending jobs; deleting again succeeds.
	e.result("alice", a2a.MethodDeletePushConfig, map[string]any{"taskId": task.ID, "id": "b"}, nil)
	if n := pushDepth(t, e.st); n != 2 {
		t.Fatalf("jobs after delete: %d, want 2", n)
	}
	e.result("alice", a2a.MethodDeletePushConfig, map[string]any{"taskId": task.ID, "id": "b"}, nil)
	e.rpcError("alice", a2a.MethodGetPushConfig, map[string]any{"taskId": task.ID, "id": "b"}, a2a.CodeTaskNotFound)

	// CancelTask of the input-required task is a state change too.
	e.result("alice", a2a.MethodCancelTask, map[string]any{"id": task.ID}, nil)
	if n := pushDepth(t, e.st); n != 3 {
		t.Fatalf("jobs after cancel: %d, want 3", n)
	}
	js, err := e.st.ClaimPushJobs(context.Background(), time.Now(), time.Minute, 10)
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]int{}
	for _, j := range js {
		var ev a2a.StreamResponse
		if err := json.Unmarshal(j.Payload, &ev); err != nil || ev.StatusUpdate == nil || ev.StatusUpdate.TaskID != task.ID {
			t.Fatalf("job payload %s: %v", j.Payload, err)
		}
		states[string(ev.StatusUpdate.Status.State)]++
	}
	if states["TASK_STATE_INPUT_REQUIRED"] != 2 || states["TASK_STATE_CANCELED"] != 1 {
		t.Fatalf("job states %v", states)
	}
}

// TestPushRESTRoutes covers the HTTP+JSON push routes.
func TestPushRESTRoutes(t *testing.T) {
	e, _ := newPushEnv(t)
	task := e.send("", &a2a.SendMessageRequest{Message: msg("hi")})
	base := "/tasks/" + task.ID + "/pushNotificationConfigs"
	r := e.do("POST", base, []byte(`{"url":"http://127.0.0.1:9/h","token":"t"}`), v1Headers(""))
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `"id":"`+task.ID+`"`) {
		t.Fatalf("POST: %d %s", r.status, r.body)
	}
	r = e.do("GET", base, nil, v1Headers(""))
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `"configs":[{`) {
		t.Fatalf("GET list: %d %s", r.status, r.body)
	}
	r = e.do("GET", base+"/"+task.ID, nil, v1Headers(""))
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `"token":"t"`) {
		t.Fatalf("GET one: %d %s", r.status, r.body)
	}
	r = e.do("DELETE", base+"/"+task.ID, nil, v1Headers(""))
	if r.status != http.StatusOK || string(r.body) != "{}" {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	r = e.do("GET", base+"/"+task.ID, nil, v1Headers(""))
	if r.status != http.StatusNotFound {
		t.Fatalf("GET after delete: %d %s", r.status, r.body)
	}
	r = e.do("POST", base, []byte(`{"url":"http://10.0.0.1/"}`), v1Headers(""))
	if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), push.ReasonURL) {
		t.Fatalf("POST private URL: %d %s", r.status, r.body)
	}
}

// TestPushOff: without Config.Push every push operation is unsupported.
func TestPushOff(t *testing.T) {
	e := newTestEnv(t, Config{})
	task := e.send("", &a2a.SendMessageRequest{Message: msg("hi")})
	for _, m := range []string{a2a.MethodCreatePushConfig, a2a.MethodGetPushConfig, a2a.MethodListPushConfigs, a2a.MethodDeletePushConfig} {
		e.rpcError("", m, map[string]any{"taskId": task.ID, "id": "x", "url": "http://127.0.0.1/"}, a2a.CodePushNotificationNotSupported)
	}
	e.rpcError("", a2a.MethodSendMessage, map[string]any{"message": msg("x"), "configuration": map[string]any{
		"taskPushNotificationConfig": map[string]any{"url": "https://example.com/"}}}, a2a.CodePushNotificationNotSupported)
}

// TestPushConfigCap covers PUSH-1's max_configs_per_task: the inline config
// counts, a config beyond the cap is InvalidParams naming the limit (by the
// method and inline on a follow-up, which then leaves the task unchanged),
// replacing an existing id does not count twice, and the default is 10.
func TestPushConfigCap(t *testing.T) {
	e, _ := newPushEnvWith(t, Config{MaxPushConfigsPerTask: 3})
	const hook = "http://127.0.0.1:9/hook"
	task := e.send("alice", &a2a.SendMessageRequest{Message: msg("hi"), Configuration: &a2a.SendMessageConfiguration{
		TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{URL: hook}}})
	for _, id := range []string{"b", "c"} {
		e.result("alice", a2a.MethodCreatePushConfig, map[string]any{"taskId": task.ID, "id": id, "url": hook}, nil)
	}
	er := e.rpcError("alice", a2a.MethodCreatePushConfig, map[string]any{"taskId": task.ID, "id": "d", "url": hook}, a2a.CodeInvalidParams)
	if !strings.Contains(er.Message, "at most 3 push notification configs per task") {
		t.Fatalf("cap message %q does not name the limit", er.Message)
	}
	// Without an id the config's id is the task id: the inline one, replaced.
	e.result("alice", a2a.MethodCreatePushConfig, map[string]any{"taskId": task.ID, "url": hook + "?v=2"}, nil)
	e.result("alice", a2a.MethodCreatePushConfig, map[string]any{"taskId": task.ID, "id": "b", "url": hook + "?v=2"}, nil)

	// Inline on a follow-up: refused at the cap, and the task is untouched.
	before := e.getTask("alice", task.ID)
	follow := map[string]any{"message": map[string]any{"role": "ROLE_USER", "messageId": "m2", "taskId": task.ID, "contextId": task.ContextID,
		"parts": []any{map[string]any{"text": "more"}}}, "configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"id": "e", "url": hook}}}
	er = e.rpcError("alice", a2a.MethodSendMessage, follow, a2a.CodeInvalidParams)
	if !strings.Contains(er.Message, "at most 3 push notification configs per task") {
		t.Fatalf("inline cap message %q", er.Message)
	}
	checkBadRequestField(t, er.Data, pushInlinePrefix+"id")
	after := e.getTask("alice", task.ID)
	if after.Status.State != before.Status.State || len(after.History) != len(before.History) {
		t.Fatalf("refused follow-up changed the task: %s/%d → %s/%d", before.Status.State, len(before.History), after.Status.State, len(after.History))
	}
	// Inline on a follow-up replacing an existing id is accepted.
	follow["configuration"] = map[string]any{"taskPushNotificationConfig": map[string]any{"id": "c", "url": hook + "?v=3"}}
	e.result("alice", a2a.MethodSendMessage, follow, nil)
	var list a2a.ListTaskPushNotificationConfigsResponse
	e.result("alice", a2a.MethodListPushConfigs, map[string]any{"taskId": task.ID}, &list)
	if len(list.Configs) != 3 {
		t.Fatalf("configs on the task: %d, want 3", len(list.Configs))
	}

	// The default cap is 10.
	d, _ := newPushEnv(t)
	t2 := d.send("alice", &a2a.SendMessageRequest{Message: msg("hi")})
	for i := range 10 {
		d.result("alice", a2a.MethodCreatePushConfig, map[string]any{"taskId": t2.ID, "id": fmt.Sprintf("c%d", i), "url": hook}, nil)
	}
	er = d.rpcError("alice", a2a.MethodCreatePushConfig, map[string]any{"taskId": t2.ID, "id": "c10", "url": hook}, a2a.CodeInvalidParams)
	if !strings.Contains(er.Message, "at most 10 push notification configs per task") {
		t.Fatalf("default cap message %q", er.Message)
	}
}

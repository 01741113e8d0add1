package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// scaleGateways starts n gateway processes, each with its own data_dir,
// sharing one real redis-server through `store redis` (SCALE-1).
func scaleGateways(t *testing.T, n int) []*harness.Gateway {
	t.Helper()
	addr := harness.StartRedis(t)
	site := "a2a {\n\tcard {\n\t\tname scale\n\t}\n\tbackend echo {\n\t\tchunks 1\n\t}\n}"
	return harness.StartRedisGateways(t, addr, n, site, harness.Options{})
}

func scaleSend(t *testing.T, url string, msg map[string]any) map[string]any {
	t.Helper()
	return harness.At(url).SendTask(t, map[string]any{"message": msg})
}

func scaleMsg(text, contextID, taskID string) map[string]any {
	m := map[string]any{"role": "ROLE_USER", "messageId": fmt.Sprint("m-", time.Now().UnixNano()), "parts": []any{map[string]any{"text": text}}}
	if contextID != "" {
		m["contextId"] = contextID
	}
	if taskID != "" {
		m["taskId"] = taskID
	}
	return m
}

func scaleList(t *testing.T, url string, params map[string]any) (ids []string, total int, next string) {
	t.Helper()
	res, rerr := harness.At(url).RPC(t, "ListTasks", params)
	if rerr != nil {
		t.Fatalf("ListTasks %v: %v", params, rerr)
	}
	tasks, _ := res["tasks"].([]any)
	for _, x := range tasks {
		ids = append(ids, x.(map[string]any)["id"].(string))
	}
	tot, _ := res["totalSize"].(float64)
	next, _ = res["nextPageToken"].(string)
	return ids, int(tot), next
}

func historyTexts(task map[string]any) []string {
	var out []string
	hist, _ := task["history"].([]any)
	for _, h := range hist {
		m := h.(map[string]any)
		if m["role"] != "ROLE_USER" {
			continue
		}
		for _, p := range m["parts"].([]any) {
			if s, ok := p.(map[string]any)["text"].(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// TestScaleOutRedisStore (SCALE-1, SCALE-3): two gateway processes with
// different data directories on one Redis. Tasks sent through A are read
// and listed through B (filters, paging with tokens accepted by either
// instance, totalSize), and a follow-up through B continues A's task: its
// history holds both turns, as seen from A.
func TestScaleOutRedisStore(t *testing.T) {
	t.Parallel()
	gws := scaleGateways(t, 2)
	a, b := gws[0].URL, gws[1].URL

	var c1, all []string
	for i := range 5 {
		ctx := "c2"
		if i < 3 {
			ctx = "c1"
		}
		task := scaleSend(t, a, scaleMsg(fmt.Sprint("turn ", i), ctx, ""))
		if harness.TaskState(task) != "TASK_STATE_INPUT_REQUIRED" {
			t.Fatalf("task %d on A: %v", i, task)
		}
		id := task["id"].(string)
		all = append(all, id)
		if ctx == "c1" {
			c1 = append(c1, id)
		}
		time.Sleep(3 * time.Millisecond) // distinct status times: list order is newest first
	}
	slices.Reverse(all)
	slices.Reverse(c1)

	// GetTask through B.
	for _, id := range all {
		res, rerr := harness.At(b).RPC(t, "GetTask", map[string]any{"id": id})
		if rerr != nil || res["id"] != id || harness.TaskState(res) != "TASK_STATE_INPUT_REQUIRED" {
			t.Fatalf("GetTask %s on B: %v %v", id, res, rerr)
		}
	}
	if _, rerr := harness.At(b).RPC(t, "GetTask", map[string]any{"id": "no-such-task"}); rerr == nil {
		t.Fatal("GetTask of an unknown id on B succeeded")
	}

	// ListTasks through B: filters and totalSize.
	if ids, total, next := scaleList(t, b, map[string]any{}); !slices.Equal(ids, all) || total != 5 || next != "" {
		t.Fatalf("ListTasks on B: %v total %d next %q, want %v", ids, total, next, all)
	}
	if ids, total, _ := scaleList(t, b, map[string]any{"contextId": "c1"}); !slices.Equal(ids, c1) || total != 3 {
		t.Fatalf("ListTasks contextId c1 on B: %v total %d, want %v", ids, total, c1)
	}
	if _, total, _ := scaleList(t, b, map[string]any{"status": "TASK_STATE_COMPLETED"}); total != 0 {
		t.Fatalf("ListTasks status COMPLETED on B: total %d", total)
	}
	if _, total, _ := scaleList(t, b, map[string]any{"contextId": "c2", "status": "TASK_STATE_INPUT_REQUIRED"}); total != 2 {
		t.Fatalf("ListTasks c2+INPUT_REQUIRED on B: total %d", total)
	}
	// Paging: a token from B is accepted by A and the other way round (the
	// page-token key is shared in Redis).
	var paged []string
	url, token := b, ""
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatal("paging does not end")
		}
		params := map[string]any{"pageSize": 2}
		if token != "" {
			params["pageToken"] = token
		}
		ids, total, next := scaleList(t, url, params)
		if total != 5 || len(ids) > 2 {
			t.Fatalf("page %d: %v total %d", pages, ids, total)
		}
		paged = append(paged, ids...)
		if next == "" {
			break
		}
		token = next
		if url == b {
			url = a
		} else {
			url = b
		}
	}
	if !slices.Equal(paged, all) {
		t.Fatalf("paged across instances: %v, want %v", paged, all)
	}

	// A follow-up through B continues A's task (the context's workspace
	// binding and the task are shared).
	first := c1[len(c1)-1]
	cont := scaleSend(t, b, scaleMsg("second turn", "c1", first))
	if cont["id"] != first || harness.TaskState(cont) != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("follow-up on B: %v", cont)
	}
	res, rerr := harness.At(a).RPC(t, "GetTask", map[string]any{"id": first})
	if rerr != nil {
		t.Fatal(rerr)
	}
	if got := historyTexts(res); !slices.Equal(got, []string{"turn 0", "second turn"}) {
		t.Fatalf("history on A after the follow-up on B: %v", got)
	}
	// The continued task is now the newest of c1, listed so on A.
	if ids, total, _ := scaleList(t, a, map[string]any{"contextId": "c1", "pageSize": 1}); total != 3 || len(ids) != 1 || ids[0] != first {
		t.Fatalf("ListTasks c1 on A after the follow-up: %v total %d", ids, total)
	}
}

// TestScaleOutPushRedisStore (SCALE-1, PUSH-1/4): with `store redis`, a
// push config set through A reads back (unsealed) through B — the
// instances share the key ring — and a follow-up turn through B notifies
// the config stored through A.
func TestScaleOutPushRedisStore(t *testing.T) {
	t.Parallel()
	addr := harness.StartRedis(t)
	global := "a2a {\n\tdata_dir {{DIR}}/a2a-data\n\tstore redis redis://" + addr + "/0\n}"
	site := pushSite("queue local-file")
	recv := newPushReceiver(t)
	a := harness.StartGatewayWith(t, site, harness.Options{Global: global})
	ring, err := os.ReadFile(filepath.Join(a.Dir, "a2a-data", "push.keys"))
	if err != nil {
		t.Fatalf("A's key ring: %v", err)
	}
	b := harness.StartGatewayWith(t, site, harness.Options{Global: global, Env: []string{"A2A_PUSH_KEYRING=" + string(ring)}})

	task := pushSend(t, a.URL, map[string]any{"url": recv.srv.URL + "/ok", "token": "tok-1"})
	id := task["id"].(string)
	first := recv.waitHits(t, "/ok", 1, 10*time.Second)[0]
	if su, _ := first.Body["statusUpdate"].(map[string]any); su == nil || su["taskId"] != id || first.Token != "tok-1" {
		t.Fatalf("first delivery: %+v", first)
	}
	got, rerr := harness.At(b.URL).RPC(t, "GetTaskPushNotificationConfig", map[string]any{"taskId": id, "id": id})
	if rerr != nil || got["url"] != recv.srv.URL+"/ok" || got["token"] != "tok-1" {
		t.Fatalf("config through B: %v %v", got, rerr)
	}
	// A follow-up through B: its state change notifies A's config.
	scaleSend(t, b.URL, scaleMsg("again", task["contextId"].(string), id))
	hs := recv.waitHits(t, "/ok", 2, 10*time.Second)
	if hs[1].DeliveryID == hs[0].DeliveryID || hs[1].Token != "tok-1" {
		t.Fatalf("second delivery: %+v", hs[1])
	}
	if su, _ := hs[1].Body["statusUpdate"].(map[string]any); su == nil || su["taskId"] != id {
		t.Fatalf("second delivery body: %v", hs[1].Body)
	}
}

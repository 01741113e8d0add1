package rest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/httpx"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
	"github.com/caddy-a2a/caddy-a2a/internal/protojson"
)

// fuzzHandler is one handler shared by every fuzz input (a store per input
// would make the fuzzer crawl).
func fuzzHandler(f *testing.F) *Handler {
	st, err := store.OpenSQLite(filepath.Join(f.TempDir(), "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		f.Fatal(err)
	}
	hub, err := agent.NewHub(context.Background(), st)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		_ = hub.Close()
		_ = st.Close()
	})
	// Zero-delay echo turns end fast; a short ContextWait keeps the fuzzer moving.
	return New(agent.NewHandler(agent.NewService(hub, agent.Config{ContextWait: 10 * time.Millisecond})), httpx.TransportConfig{MaxBodyBytes: 1 << 16})
}

func TestParseRESTPath(t *testing.T) {
	cases := []struct {
		path   string
		op     string
		task   string
		cfg    string
		tenant string
		ok     bool
	}{
		{"/message:send", a2a.MethodSendMessage, "", "", "", true},
		{"/message:stream", a2a.MethodSendStreamingMessage, "", "", "", true},
		{"/tasks", a2a.MethodListTasks, "", "", "", true},
		{"/tasks/abc", a2a.MethodGetTask, "abc", "", "", true},
		{"/tasks/abc:cancel", a2a.MethodCancelTask, "abc", "", "", true},
		{"/tasks/abc:subscribe", a2a.MethodSubscribeToTask, "abc", "", "", true},
		{"/tasks/abc/pushNotificationConfigs", "pushConfigs", "abc", "", "", true},
		{"/tasks/abc/pushNotificationConfigs/c1", "pushConfig", "abc", "c1", "", true},
		{"/extendedAgentCard", a2a.MethodGetExtendedAgentCard, "", "", "", true},
		{"/t1/tasks/abc", a2a.MethodGetTask, "abc", "", "t1", true},
		{"/t1/message:send", a2a.MethodSendMessage, "", "", "t1", true},
		{"/t1/tasks", a2a.MethodListTasks, "", "", "t1", true},
		{"/t1/extendedAgentCard", a2a.MethodGetExtendedAgentCard, "", "", "t1", true},
		{"/tasks/abc:explode", "", "", "", "", false},
		{"/other", "", "", "", "", false},
		{"/", "", "", "", "", false},
		{"", "", "", "", "", false},
		{"/t1/t2/tasks", "", "", "", "", false},
		{"/message:send/x", "", "", "", "", false},
	}
	for _, c := range cases {
		r, tenant, ok := parseRESTPath(c.path)
		if ok != c.ok {
			t.Errorf("%q: ok %v, want %v", c.path, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		if r.op != c.op || r.taskID != c.task || r.cfgID != c.cfg || tenant != c.tenant {
			t.Errorf("%q: op %q task %q cfg %q tenant %q; want %q %q %q %q", c.path, r.op, r.taskID, r.cfgID, tenant, c.op, c.task, c.cfg, c.tenant)
		}
	}
}

// TestProtoJSONQuery: HTTP+JSON query parameters under proto names (RPC-14).
func TestProtoJSONQuery(t *testing.T) {
	q, _ := url.ParseQuery("history_length=0&A2A-Version=1.0&pageSize=3&other_key=x")
	got, err := protojson.NormalizeQuery(q, reflect.TypeFor[a2a.ListTasksRequest]())
	if err != nil {
		t.Fatal(err)
	}
	if got.Get("historyLength") != "0" || got.Get("pageSize") != "3" || got.Get("A2A-Version") != "1.0" || got.Get("other_key") != "x" || got.Has("history_length") {
		t.Errorf("normalised %v", got)
	}
	req, err := listRequestFromQuery(url.Values{"context_id": {"c"}, "status": {"6"}, "page_token": {"p"},
		"status_timestamp_after": {"2025-01-01T00:00:00Z"}, "include_artifacts": {"true"}, "page_size": {"4"}})
	if err != nil {
		t.Fatal(err)
	}
	if req.ContextID != "c" || req.Status != a2a.TaskStateInputRequired || req.PageToken != "p" || req.StatusTimestampAfter == "" ||
		req.IncludeArtifacts == nil || !*req.IncludeArtifacts || req.PageSize == nil || *req.PageSize != 4 {
		t.Errorf("list request %+v", req)
	}
	_, err = protojson.NormalizeQuery(url.Values{"pageSize": {"1"}, "page_size": {"2"}}, reflect.TypeFor[a2a.ListTasksRequest]())
	var ae *a2a.Error
	if !errors.As(err, &ae) || ae.Code != a2a.CodeInvalidParams || ae.Violations[0].Field != "pageSize" {
		t.Errorf("both spellings: %v", err)
	}
}

func FuzzRESTPath(f *testing.F) {
	for _, s := range []string{
		"/message:send", "/message:stream", "/tasks", "/tasks/abc", "/tasks/abc:cancel", "/tasks/abc:subscribe",
		"/tasks/abc/pushNotificationConfigs", "/tasks/abc/pushNotificationConfigs/c", "/extendedAgentCard",
		"/t1/tasks/abc", "/t1/message:send", "//", "/tasks/:cancel", "/tasks/a:b:c", "/message:", "/t/tasks/",
		"/tasks//pushNotificationConfigs", "", "/",
	} {
		f.Add(s)
	}
	h := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, path string) {
		r, tenant, ok := parseRESTPath(path)
		if !ok {
			if r.op != "" || tenant != "" {
				t.Fatalf("%q: not a route yet op %q tenant %q", path, r.op, tenant)
			}
			return
		}
		if r.op == "" || len(r.methodsAllowed) == 0 {
			t.Fatalf("%q: route without op or methods: %+v", path, r)
		}
		if strings.Contains(tenant, "/") || strings.Contains(r.taskID, "/") || strings.Contains(r.cfgID, "/") {
			t.Fatalf("%q: path value spans segments: tenant %q task %q cfg %q", path, tenant, r.taskID, r.cfgID)
		}
		switch r.op {
		case "GetTask", "CancelTask", "SubscribeToTask", "pushConfigs", "pushConfig":
			if !strings.Contains(path, r.taskID) {
				t.Fatalf("%q: task id %q not from the path", path, r.taskID)
			}
		}
		// The whole handler never panics on it either.
		req, err := http.NewRequest(r.methodsAllowed[0], "http://x/", http.NoBody)
		if err != nil {
			return
		}
		req.URL.Path = "/" + strings.TrimLeft(path, "/")
		req.Header.Set("A2A-Version", "1.0")
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		req = req.WithContext(ctx)
		w := httptest.NewRecorder()
		if !h.Serve(w, req, "fuzz") {
			t.Fatalf("%q: parsed as a route but not served", path)
		}
		if w.Code >= 500 {
			t.Fatalf("%q: HTTP %d %s", path, w.Code, w.Body.Bytes())
		}
	})
}

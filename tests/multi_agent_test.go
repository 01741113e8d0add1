package tests

// TURN-10, several agents on one site: `agent NAME { … }` blocks inside
// a2a serve more agents under /NAME/, each with its own card, tasks,
// contexts and push configs (scoped per agent), listed at GET /agents.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// maPush is the push block every agent of the test site has (one engine
// for the site: same queue, same data directory).
const maPush = `push {
		queue local-file
		allow_private_networks 127.0.0.0/8
	}`

// maSite is a site whose root agent is a slow streaming echo, with an
// exec agent "shell" and an openai agent "llm" (against openaiURL), plus
// extra inside the a2a block.
func maSite(openaiURL, extra string) string {
	script := filepath.Join(harness.RepoRoot(), "tests", "testdata", "exec_agent.sh")
	return `a2a {
	card {
		name site-root
		max_age 0s
	}
	backend echo {
		chunks 20
		delay 100ms
	}
	` + maPush + `
	agent shell {
		card {
			name shell-agent
			description "Runs a script."
		}
		backend exec ` + script + ` {
			mode per_turn
			grace_period 500ms
		}
		` + maPush + `
	}
	agent llm {
		card {
			name llm-agent
		}
		backend openai ` + openaiURL + `/v1 {
			model test-model
			api_key sk-test-key
		}
		` + maPush + `
	}
	` + extra + `
}`
}

// maSend sends a blocking-free SendMessage to the agent at url and
// returns the task.
func maSend(t *testing.T, url, text string) map[string]any {
	t.Helper()
	res, rpcErr := harness.At(url).RPC(t, "SendMessage", map[string]any{
		"message":       bkMessage(text, "", nil),
		"configuration": map[string]any{"returnImmediately": true},
	})
	if rpcErr != nil {
		t.Fatalf("SendMessage to %s: %v", url, rpcErr)
	}
	task, _ := res["task"].(map[string]any)
	if task == nil || task["id"] == nil {
		t.Fatalf("SendMessage to %s: no task in %v", url, res)
	}
	return task
}

// maNotFound asserts a JSON-RPC TaskNotFoundError (-32001).
func maNotFound(t *testing.T, what string, rpcErr map[string]any) {
	t.Helper()
	if rpcErr == nil || rpcErr["code"] != float64(-32001) {
		t.Errorf("%s: want TaskNotFoundError, got %v", what, rpcErr)
	}
}

// maCard fetches the card at url and decodes it.
func maCard(t *testing.T, url string) map[string]any {
	t.Helper()
	r := harness.At(url).Do(t, http.MethodGet, "")
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d %s", url, r.StatusCode, r.Raw)
	}
	return r.JSON(t)
}

func TestMultiAgentSite(t *testing.T) {
	t.Parallel()
	srv, _ := bkOpenAIServer(t)
	gw := harness.StartGateway(t, maSite(srv.URL, ""))
	root, shell, llm := gw.URL+"/", gw.URL+"/shell/", gw.URL+"/llm/"

	t.Run("cards", func(t *testing.T) {
		for _, tc := range []struct{ base, name string }{{root, "site-root"}, {shell, "shell-agent"}, {llm, "llm-agent"}} {
			c := maCard(t, tc.base+".well-known/agent-card.json")
			if c["name"] != tc.name {
				t.Errorf("%s card name %v, want %s", tc.base, c["name"], tc.name)
			}
			ifaces, _ := c["supportedInterfaces"].([]any)
			if len(ifaces) < 2 {
				t.Fatalf("%s card: interfaces %v", tc.base, ifaces)
			}
			wantTenant := strings.Trim(strings.TrimPrefix(tc.base, gw.URL), "/")
			for _, i := range ifaces {
				if u := bkStr(i, "url"); u != tc.base {
					t.Errorf("%s card: interface URL %q, want %q", tc.base, u, tc.base)
				}
				if tn := bkStr(i, "tenant"); tn != wantTenant {
					t.Errorf("%s card: interface tenant %q, want %q", tc.base, tn, wantTenant)
				}
			}
			// The card validates, and its interfaces answer (--probe).
			out, err := harness.Run(t, gw.Dir, "a2a", "card", "validate", "--probe", tc.base)
			if err != nil {
				t.Errorf("card validate --probe %s: %v\n%s", tc.base, err, out)
			}
		}
		// The legacy path is served under the prefix too.
		if c := maCard(t, shell+".well-known/agent.json"); c["name"] != "shell-agent" {
			t.Errorf("legacy card of shell: %v", c["name"])
		}
	})

	t.Run("catalog", func(t *testing.T) {
		r := harness.At(gw.URL+"/agents").Do(t, http.MethodGet, "")
		if r.StatusCode != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("GET /agents: HTTP %d %s %s", r.StatusCode, r.Header.Get("Content-Type"), r.Raw)
		}
		var doc struct {
			Agents []struct {
				Name, URL, Card string
				Default         bool
			}
		}
		if err := json.Unmarshal(r.Raw, &doc); err != nil {
			t.Fatal(err)
		}
		want := []string{"default " + root, "shell " + shell, "llm " + llm}
		if len(doc.Agents) != len(want) {
			t.Fatalf("catalog: %s", r.Raw)
		}
		for i, a := range doc.Agents {
			if a.Name+" "+a.URL != want[i] || a.Card != a.URL+".well-known/agent-card.json" || a.Default != (i == 0) {
				t.Errorf("catalog entry %d: %+v, want %s", i, a, want[i])
			}
			maCard(t, a.Card) // every listed card is served
		}
		if r := harness.At(gw.URL+"/agents").Do(t, http.MethodPost, "{}"); r.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST /agents: HTTP %d", r.StatusCode)
		}
	})

	t.Run("turns", func(t *testing.T) {
		// The exec agent runs the script: its text reaches the client.
		res, rpcErr := harness.At(shell).RPC(t, "SendMessage", map[string]any{"message": bkMessage("count", "", nil)})
		if rpcErr != nil || !strings.Contains(string(maMustJSON(t, res)), "turn 1 pid") {
			t.Errorf("shell SendMessage: %v %v", res, rpcErr)
		}
		res, rpcErr = harness.At(root).RPC(t, "SendMessage", map[string]any{"message": bkMessage("hi root", "", nil)})
		if rpcErr != nil || !strings.Contains(string(maMustJSON(t, res)), "Echo: hi root") {
			t.Errorf("root SendMessage: %v %v", res, rpcErr)
		}
		res, rpcErr = harness.At(llm).RPC(t, "SendMessage", map[string]any{"message": bkMessage("Say hello", "", nil)})
		if rpcErr != nil {
			t.Fatalf("llm SendMessage: %v", rpcErr)
		}
		if !strings.Contains(string(maMustJSON(t, res)), "Hello (") {
			t.Errorf("llm agent reply lacks the model's answer: %v", res)
		}
	})

	t.Run("isolation", func(t *testing.T) {
		task := maSend(t, shell, "count")
		id := bkStr(task, "id")
		ctxID := bkStr(task, "contextId")
		harness.WaitState(t, shell, id, "TASK_STATE_INPUT_REQUIRED", 15*time.Second)
		cfg := map[string]any{"taskId": id, "id": "cb1", "url": "http://127.0.0.1:9/cb"}
		if _, rpcErr := harness.At(shell).RPC(t, "CreateTaskPushNotificationConfig", cfg); rpcErr != nil {
			t.Fatalf("CreateTaskPushNotificationConfig on shell: %v", rpcErr)
		}
		// The owning agent sees the task and its push config.
		if res, rpcErr := harness.At(shell).RPC(t, "GetTask", map[string]any{"id": id}); rpcErr != nil || res["id"] != id {
			t.Fatalf("shell GetTask: %v %v", res, rpcErr)
		}
		if _, rpcErr := harness.At(shell).RPC(t, "GetTaskPushNotificationConfig", map[string]any{"taskId": id, "id": "cb1"}); rpcErr != nil {
			t.Fatalf("shell GetTaskPushNotificationConfig: %v", rpcErr)
		}
		for _, other := range []string{root, llm} {
			_, e := harness.At(other).RPC(t, "GetTask", map[string]any{"id": id})
			maNotFound(t, other+" GetTask", e)
			_, e = harness.At(other).RPC(t, "CancelTask", map[string]any{"id": id})
			maNotFound(t, other+" CancelTask", e)
			_, e = harness.At(other).RPC(t, "GetTaskPushNotificationConfig", map[string]any{"taskId": id, "id": "cb1"})
			maNotFound(t, other+" GetTaskPushNotificationConfig", e)
			_, e = harness.At(other).RPC(t, "ListTaskPushNotificationConfigs", map[string]any{"taskId": id})
			maNotFound(t, other+" ListTaskPushNotificationConfigs", e)
			_, e = harness.At(other).RPC(t, "SubscribeToTask", map[string]any{"id": id})
			if e == nil {
				t.Errorf("%s SubscribeToTask of another agent's task: no error", other)
			}
			// A follow-up into the other agent's task is refused too.
			m := bkMessage("count", ctxID, nil)
			m["taskId"] = id
			_, e = harness.At(other).RPC(t, "SendMessage", map[string]any{"message": m})
			maNotFound(t, other+" SendMessage into the task", e)
			res, e := harness.At(other).RPC(t, "ListTasks", map[string]any{"contextId": ctxID})
			if e != nil || len(bkGet(res, "tasks").([]any)) != 0 {
				t.Errorf("%s ListTasks of the shell context: %v %v", other, res, e)
			}
			// REST, the same.
			for _, p := range []string{"tasks/" + id, "tasks/" + id + "/pushNotificationConfigs/cb1", "tasks/" + id + "/pushNotificationConfigs"} {
				if r := harness.At(other+p).Do(t, http.MethodGet, ""); r.StatusCode != http.StatusNotFound {
					t.Errorf("REST GET %s%s: HTTP %d %s", other, p, r.StatusCode, r.Raw)
				}
			}
			if r := harness.At(other+"tasks/"+id+":cancel").Do(t, http.MethodPost, "{}"); r.StatusCode != http.StatusNotFound {
				t.Errorf("REST cancel at %s: HTTP %d %s", other, r.StatusCode, r.Raw)
			}
		}
		// REST at the owner answers, and ListTasks is per agent.
		if r := harness.At(shell+"tasks/"+id).Do(t, http.MethodGet, ""); r.StatusCode != http.StatusOK {
			t.Errorf("REST GET at shell: HTTP %d %s", r.StatusCode, r.Raw)
		}
		rootTask := bkStr(maSend(t, root, "root turn"), "id")
		for _, tc := range []struct {
			base, has, hasNot string
		}{{shell, id, rootTask}, {root, rootTask, id}} {
			r := harness.At(tc.base+"tasks?pageSize=100").Do(t, http.MethodGet, "")
			if r.StatusCode != http.StatusOK || !strings.Contains(string(r.Raw), tc.has) || strings.Contains(string(r.Raw), tc.hasNot) {
				t.Errorf("ListTasks at %s: HTTP %d, want %s and not %s: %.300s", tc.base, r.StatusCode, tc.has, tc.hasNot, r.Raw)
			}
		}
		// A path no agent serves is 404, not the root agent's data.
		if r := harness.At(gw.URL+"/nosuch/tasks/"+id).Do(t, http.MethodGet, ""); r.StatusCode != http.StatusNotFound {
			t.Errorf("GET /nosuch/tasks/{id}: HTTP %d", r.StatusCode)
		}
		// The owner cancels its task.
		if _, e := harness.At(shell).RPC(t, "CancelTask", map[string]any{"id": id}); e != nil {
			t.Errorf("shell CancelTask: %v", e)
		}
	})

	t.Run("tenants", func(t *testing.T) {
		task := maSend(t, shell, "count")
		id := bkStr(task, "id")
		harness.WaitState(t, shell, id, "TASK_STATE_INPUT_REQUIRED", 15*time.Second)
		// The tenant field on the site root selects the agent, and an agent
		// serves its own name as tenant.
		for _, base := range []string{root, shell} {
			if res, e := harness.At(base).RPC(t, "GetTask", map[string]any{"id": id, "tenant": "shell"}); e != nil || res["id"] != id {
				t.Errorf("GetTask at %s with tenant shell: %v %v", base, res, e)
			}
		}
		// Another agent's tenant, or one the site does not serve, never
		// reaches the task.
		for _, tc := range []struct{ base, tenant string }{{root, "llm"}, {root, "nosuch"}, {shell, "llm"}, {llm, "shell"}, {root, "default"}} {
			_, e := harness.At(tc.base).RPC(t, "GetTask", map[string]any{"id": id, "tenant": tc.tenant})
			maNotFound(t, tc.base+" GetTask tenant "+tc.tenant, e)
			_, e = harness.At(tc.base).RPC(t, "CancelTask", map[string]any{"id": id, "tenant": tc.tenant})
			maNotFound(t, tc.base+" CancelTask tenant "+tc.tenant, e)
			res, e := harness.At(tc.base).RPC(t, "ListTasks", map[string]any{"tenant": tc.tenant})
			if e == nil && strings.Contains(string(maMustJSON(t, res)), id) {
				t.Errorf("%s ListTasks tenant %s lists the shell task", tc.base, tc.tenant)
			}
		}
		// A message sent to the root with tenant llm runs on the llm agent
		// and its task is that agent's.
		res, e := harness.At(root).RPC(t, "SendMessage", map[string]any{"tenant": "llm", "message": bkMessage("Say hello", "", nil)})
		if e != nil || !strings.Contains(string(maMustJSON(t, res)), "Hello (") {
			t.Fatalf("SendMessage tenant llm at root: %v %v", res, e)
		}
		llmTask := bkStr(res, "task", "id")
		if got, e := harness.At(llm).RPC(t, "GetTask", map[string]any{"id": llmTask}); e != nil || got["id"] != llmTask {
			t.Errorf("the tenant's task at /llm/: %v %v", got, e)
		}
		_, e = harness.At(root).RPC(t, "GetTask", map[string]any{"id": llmTask})
		maNotFound(t, "root GetTask of the llm tenant's task", e)
		// REST /{tenant}/… on the site root is the agent's path.
		if r := harness.At(gw.URL+"/shell/tasks/"+id).Do(t, http.MethodGet, ""); r.StatusCode != http.StatusOK {
			t.Errorf("REST /shell/tasks/{id}: HTTP %d", r.StatusCode)
		}
		if r := harness.At(gw.URL+"/llm/tasks/"+id).Do(t, http.MethodGet, ""); r.StatusCode != http.StatusNotFound {
			t.Errorf("REST /llm/tasks/{shell task}: HTTP %d", r.StatusCode)
		}
	})

	t.Run("go sdk", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := agentcard.DefaultResolver.Resolve(ctx, shell)
		if err != nil {
			t.Fatalf("resolve the shell card: %v", err)
		}
		// The SDK sends the interfaces' tenant ("shell") on every request
		// (the JSON-RPC field, the REST /shell/… prefix): the agent serves
		// its own tenant.
		if c.SupportedInterfaces[0].Tenant != "shell" {
			t.Fatalf("resolved card tenant %q", c.SupportedInterfaces[0].Tenant)
		}
		for _, binding := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON} {
			client, err := a2aclient.NewFromCard(ctx, c, a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{binding}}))
			if err != nil {
				t.Fatalf("NewFromCard(%s): %v", binding, err)
			}
			res, err := client.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("count"))})
			if err != nil {
				t.Fatalf("%s SendMessage: %v", binding, err)
			}
			task, ok := res.(*a2a.Task)
			if !ok {
				t.Fatalf("%s SendMessage: %T, want a task", binding, res)
			}
			got, err := client.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
			if err != nil || got.ID != task.ID {
				t.Fatalf("%s GetTask: %v", binding, err)
			}
			// The task is the shell agent's: the root does not know it.
			_, e := harness.At(root).RPC(t, "GetTask", map[string]any{"id": string(task.ID)})
			maNotFound(t, "root GetTask of the SDK's task", e)
			_ = client.Destroy()
		}
	})

	t.Run("cli", func(t *testing.T) {
		r := clientRun(t, "", nil, "call", "--no-stream", llm+".well-known/agent-card.json", "Say hello")
		if r.Code != 0 || !strings.Contains(r.Stdout, "Hello (") {
			t.Errorf("caddy a2a call <llm card URL>: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
		}
	})
}

// mustJSON encodes v.
func maMustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TURN-10: an agent name that is not one path segment, a reserved one,
// a duplicate, or an agent scope equal to the root's is a config error.
func TestMultiAgentBadConfig(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, site, want string }{
		{"upper case", "a2a {\n card {\n name x\n }\n agent Planner {\n card {\n name p\n }\n }\n}", `agent "Planner": the name must be one path segment`},
		{"slash", "a2a {\n card {\n name x\n }\n agent a/b {\n card {\n name p\n }\n }\n}", `agent "a/b": the name must be one path segment`},
		{"well-known", "a2a {\n card {\n name x\n }\n agent .well-known {\n card {\n name p\n }\n }\n}", `agent ".well-known"`},
		{"reserved tasks", "a2a {\n card {\n name x\n }\n agent tasks {\n card {\n name p\n }\n }\n}", `agent "tasks": the name is reserved`},
		{"reserved agents", "a2a {\n card {\n name x\n }\n agent agents {\n card {\n name p\n }\n }\n}", `agent "agents": the name is reserved`},
		{"twice", "a2a {\n card {\n name x\n }\n agent p {\n card {\n name p\n }\n }\n agent p {\n card {\n name q\n }\n }\n}", `agent "p": defined twice`},
		{"no card", "a2a {\n card {\n name x\n }\n agent p {\n backend echo\n }\n}", "agent p: a card block with at least a name is required"},
		{"nested", "a2a {\n card {\n name x\n }\n agent p {\n card {\n name p\n }\n agent q {\n }\n }\n}", "agent blocks do not nest"},
		{"scope clash", "a2a {\n card {\n name p\n }\n agent p {\n card {\n name p\n }\n }\n}", `its owner scope "p" is the root agent's`},
		{"websocket path", "a2a {\n card {\n name x\n }\n websocket\n agent ws {\n card {\n name p\n }\n }\n}", `agent "ws": the name is the site's websocket path`},
		{"matcher", "a2a /api/* {\n card {\n name x\n }\n agent p {\n card {\n name p\n }\n }\n}", "agent blocks need the a2a directive without a matcher"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { wantAdaptError(t, tc.site, tc.want) })
	}
}

// TURN-10, OPS-3: a reload that adds an agent keeps the running turns of
// the others (their open streams end normally) and serves the new agent.
func TestMultiAgentReloadAddsAgent(t *testing.T) {
	t.Parallel()
	srv, _ := bkOpenAIServer(t)
	gw := harness.StartGatewayWith(t, maSite(srv.URL, ""), harness.Options{Admin: true})
	stream := harness.At(gw.URL+"/").Stream(t, "SendStreamingMessage", map[string]any{"message": bkMessage("keep going", "", nil)})
	if _, ok := stream.Next(10 * time.Second); !ok {
		t.Fatal("no first event of the root agent's stream")
	}
	shellTask := bkStr(maSend(t, gw.URL+"/shell/", "count"), "id")
	harness.WaitState(t, gw.URL+"/shell/", shellTask, "TASK_STATE_INPUT_REQUIRED", 15*time.Second)

	gw.Reload(maSite(srv.URL, "agent extra {\n\t\tcard {\n\t\t\tname extra-agent\n\t\t}\n\t}"))

	if c := maCard(t, gw.URL+"/extra/.well-known/agent-card.json"); c["name"] != "extra-agent" {
		t.Errorf("new agent's card: %v", c["name"])
	}
	if res, e := harness.At(gw.URL+"/extra/").RPC(t, "SendMessage", map[string]any{"message": bkMessage("hi extra", "", nil)}); e != nil || !strings.Contains(string(maMustJSON(t, res)), "Echo: hi extra") {
		t.Errorf("new agent's turn: %v %v", res, e)
	}
	// The root agent's turn, running across the reload, ends completed on
	// its open stream.
	events := stream.Rest(20 * time.Second)
	if len(events) == 0 || bkState(events[len(events)-1]) != "TASK_STATE_INPUT_REQUIRED" && bkState(events[len(events)-1]) != "TASK_STATE_COMPLETED" {
		t.Errorf("root stream across the reload ended with %v", describeLast(events))
	}
	// The shell agent still has its task, and the new agent does not. (A
	// new connection: the old server closed the idle ones at the end of
	// its grace period, which a pooled connection may race with.)
	// A connection accepted while the old server force-closes its own at
	// the end of the grace period can be reset: retry a transport error.
	var res map[string]any
	var terr error
	for attempt := 0; attempt < 5; attempt++ {
		fresh := harness.Client(&http.Client{Timeout: 30 * time.Second})
		if res, terr = harness.At(gw.URL+"/shell/").Try("GetTask", map[string]any{"id": shellTask}, fresh); terr == nil || strings.Contains(terr.Error(), "rpc error") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if terr != nil || res["id"] != shellTask {
		t.Errorf("shell task after the reload: %v %v", res, terr)
	}
	_, e := harness.At(gw.URL+"/extra/").RPC(t, "GetTask", map[string]any{"id": shellTask})
	maNotFound(t, "extra GetTask of shell's task", e)
	if r := harness.At(gw.URL+"/agents").Do(t, http.MethodGet, ""); !strings.Contains(string(r.Raw), `"name":"extra"`) {
		t.Errorf("catalog after the reload: %s", r.Raw)
	}
}

// describeLast describes the last event of a stream, for messages.
func describeLast(events []map[string]any) string {
	if len(events) == 0 {
		return "no events"
	}
	return fmt.Sprintf("%d events, last %v", len(events), events[len(events)-1])
}

// TURN-10: `caddy adapt` shows the expansion — the agent's own route,
// first and terminal, stripping its prefix before its card (path_prefix),
// auth (the site's, copied) and agent handler (owner_scope), then the root
// route with the catalog.
func TestMultiAgentAdapt(t *testing.T) {
	t.Parallel()
	site := "http://127.0.0.1:1 {\n a2a {\n card {\n name root\n public_url https://gw.example.com\n }\n auth {\n bearer tok-site\n }\n agent planner {\n card {\n name planner\n }\n backend echo\n }\n }\n}\n"
	out, err := harness.Adapt(t, site)
	if err != nil {
		t.Fatalf("adapt: %v\n%s", err, out)
	}
	var cfg struct {
		Apps struct {
			HTTP struct {
				Servers map[string]struct {
					Routes []struct {
						Handle []struct {
							Routes []struct {
								Match    []map[string][]string `json:"match"`
								Terminal bool                  `json:"terminal"`
								Handle   []map[string]any      `json:"handle"`
							} `json:"routes"`
						} `json:"handle"`
					} `json:"routes"`
				} `json:"servers"`
			} `json:"http"`
		} `json:"apps"`
	}
	doc := out[strings.Index(out, `{"apps"`):]
	if err := json.NewDecoder(strings.NewReader(doc)).Decode(&cfg); err != nil {
		t.Fatalf("adapt output: %v\n%s", err, out)
	}
	srv := cfg.Apps.HTTP.Servers["srv0"]
	if len(srv.Routes) != 1 || len(srv.Routes[0].Handle) != 1 {
		t.Fatalf("unexpected adapt shape:\n%s", out)
	}
	routes := srv.Routes[0].Handle[0].Routes
	if len(routes) != 3 {
		t.Fatalf("want the tenant router, the agent route and the root route, got %d:\n%s", len(routes), out)
	}
	tr := routes[0]
	if tr.Terminal || len(tr.Handle) != 1 || tr.Handle[0]["handler"] != "a2a_tenants" || fmt.Sprint(tr.Handle[0]["agents"]) != "[planner]" ||
		strings.Join(tr.Match[0]["path"], ",") != "/,/lf.a2a.v1.A2AService/*" || strings.Join(tr.Match[0]["method"], ",") != "POST" {
		t.Errorf("tenant router route: %+v", tr)
	}
	ag := routes[1]
	if !ag.Terminal || len(ag.Match) != 1 || strings.Join(ag.Match[0]["path"], ",") != "/planner,/planner/*" {
		t.Errorf("agent route match/terminal: %+v", ag)
	}
	var names []string
	for _, h := range ag.Handle {
		names = append(names, fmt.Sprint(h["handler"]))
	}
	if strings.Join(names, ",") != "rewrite,a2a_card,a2a_auth,a2a" {
		t.Errorf("agent route handlers: %v", names)
	}
	if ag.Handle[0]["strip_path_prefix"] != "/planner" || ag.Handle[1]["path_prefix"] != "/planner" ||
		ag.Handle[1]["public_url"] != "https://gw.example.com" || ag.Handle[3]["owner_scope"] != "planner" {
		t.Errorf("agent route options: %v", ag.Handle)
	}
	if !strings.Contains(string(maMustJSON(t, ag.Handle[2])), "tok-site") {
		t.Errorf("the agent does not inherit the site's auth: %v", ag.Handle[2])
	}
	root := routes[2]
	if len(root.Handle) != 5 || root.Handle[1]["handler"] != "a2a_agents" || fmt.Sprint(root.Handle[1]["agents"]) != "[planner]" {
		t.Errorf("root route: %v", root.Handle)
	}
}

// TURN-10: an agent with an auth block of its own takes only its own
// credentials, on its path and as a tenant of the site root; an agent
// without one takes the site's.
func TestMultiAgentAuth(t *testing.T) {
	t.Parallel()
	gw := harness.StartGateway(t, `a2a {
	card {
		name site-root
	}
	auth {
		principal alice bearer tok-alice
	}
	agent planner {
		card {
			name planner
		}
	}
	agent shell {
		card {
			name shell
		}
		auth {
			bearer tok-shell
		}
	}
}`)
	list := func(url, token, tenant string) int {
		params := map[string]any{}
		if tenant != "" {
			params["tenant"] = tenant
		}
		return harness.At(url, harness.Bearer(token)).Call(t, "ListTasks", params).StatusCode
	}
	for _, tc := range []struct {
		url, token, tenant string
		want               int
	}{
		{gw.URL + "/", "tok-alice", "", http.StatusOK},
		{gw.URL + "/", "tok-shell", "", http.StatusUnauthorized},
		{gw.URL + "/planner/", "tok-alice", "", http.StatusOK},
		{gw.URL + "/planner/", "tok-shell", "", http.StatusUnauthorized},
		{gw.URL + "/shell/", "tok-shell", "", http.StatusOK},
		{gw.URL + "/shell/", "tok-alice", "", http.StatusUnauthorized},
		{gw.URL + "/shell/", "", "", http.StatusUnauthorized},
		{gw.URL + "/", "tok-shell", "shell", http.StatusOK},
		{gw.URL + "/", "tok-alice", "shell", http.StatusUnauthorized},
		{gw.URL + "/", "tok-alice", "planner", http.StatusOK},
	} {
		if got := list(tc.url, tc.token, tc.tenant); got != tc.want {
			t.Errorf("ListTasks at %s token %q tenant %q: HTTP %d, want %d", tc.url, tc.token, tc.tenant, got, tc.want)
		}
	}
	// The cards stay public and declare each agent's scheme.
	for _, p := range []string{"/shell/", "/planner/"} {
		c := maCard(t, gw.URL+p+".well-known/agent-card.json")
		if c["securitySchemes"] == nil {
			t.Errorf("%s card declares no security scheme", p)
		}
	}
}

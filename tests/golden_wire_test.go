package tests

// The golden wire test: a fixed set of JSON-RPC, HTTP+JSON and SSE
// exchanges against the built binary, compared byte for byte (after
// replacing generated ids and timestamps by stable placeholders) with the
// files under testdata/golden. It guards refactors that must not change
// what a client sees. Regenerate with
//
//	go test ./tests/ -run TestGoldenWire -update-golden
//
// and review the diff: every change of a golden file is a wire change.

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite tests/testdata/golden from this run")

// goldenExchange is one request of the golden sequence.
type goldenExchange struct {
	name   string
	method string
	path   string
	header map[string]string
	body   string
}

var (
	goldenUUID = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	goldenTime = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z`)
	goldenTok  = regexp.MustCompile(`"(nextPageToken)":"[^"]+"`)
)

// goldenNormalizer replaces generated ids by <id-N> (numbered in order of
// first appearance across the whole run) and timestamps by <ts>.
type goldenNormalizer struct{ ids map[string]string }

func (n *goldenNormalizer) apply(s string) string {
	s = goldenUUID.ReplaceAllStringFunc(s, func(id string) string {
		if v, ok := n.ids[id]; ok {
			return v
		}
		v := fmt.Sprintf("<id-%d>", len(n.ids)+1)
		n.ids[id] = v
		return v
	})
	s = goldenTime.ReplaceAllString(s, "<ts>")
	return goldenTok.ReplaceAllString(s, `"$1":"<token>"`)
}

func TestGoldenWire(t *testing.T) {
	t.Parallel()
	gw := harness.StartGateway(t, `	a2a {
		`+echoCard("golden-agent", "Echo agent for the golden wire test.")+`
		backend echo {
			chunks 2
		}
	}`)
	v1 := map[string]string{"A2A-Version": "1.0", "Content-Type": "application/json"}
	msg := func(id, ctx, text string) string {
		return fmt.Sprintf(`{"messageId":%q,"contextId":%q,"role":"ROLE_USER","parts":[{"text":%q}]}`, id, ctx, text)
	}
	rpc := func(id int, method, params string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
	}
	steps := []goldenExchange{
		{"rpc-send", "POST", "/", v1, rpc(1, "SendMessage", `{"message":`+msg("m-1", "ctx-golden", "hello golden")+`}`)},
		{"rpc-stream", "POST", "/", v1, rpc(2, "SendStreamingMessage", `{"message":`+msg("m-2", "ctx-golden", "second turn")+`}`)},
		{"rpc-list", "POST", "/", v1, rpc(3, "ListTasks", `{"contextId":"ctx-golden","historyLength":1}`)},
		{"rpc-get-missing", "POST", "/", v1, rpc(4, "GetTask", `{"id":"no-such-task"}`)},
		{"rpc-bad-params", "POST", "/", v1, rpc(5, "GetTask", `{"id":"bad id!"}`)},
		{"rpc-unknown-method", "POST", "/", v1, rpc(6, "NoSuchMethod", `{}`)},
		{"rpc-no-version", "POST", "/", map[string]string{"Content-Type": "application/json"}, rpc(7, "GetTask", `{"id":"x"}`)},
		{"rest-send", "POST", "/message:send", v1, `{"message":` + msg("m-3", "ctx-rest", "over rest") + `}`},
		{"rest-stream", "POST", "/message:stream", v1, `{"message":` + msg("m-4", "ctx-rest", "rest stream") + `}`},
		{"rest-list", "GET", "/tasks?contextId=ctx-rest&pageSize=1", v1, ""},
		{"rest-get-missing", "GET", "/tasks/no-such-task", v1, ""},
		{"rest-cancel-missing", "POST", "/tasks/no-such-task:cancel", v1, "{}"},
		{"card", "GET", "/.well-known/agent-card.json", nil, ""},
	}
	norm := &goldenNormalizer{ids: map[string]string{}}
	var out bytes.Buffer
	for _, st := range steps {
		req, err := http.NewRequest(st.method, gw.URL+st.path, strings.NewReader(st.body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range st.header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: reading: %v", st.name, err)
		}
		fmt.Fprintf(&out, "=== %s: %s %s\n", st.name, st.method, st.path)
		fmt.Fprintf(&out, "status: %d\ncontent-type: %s\n", resp.StatusCode, resp.Header.Get("Content-Type"))
		if st.name != "card" {
			out.WriteString(norm.apply(string(body)))
		} else {
			// The card's URLs carry the test's port: keep only its shape.
			out.WriteString(strings.ReplaceAll(norm.apply(string(body)), gw.Addr, "<addr>"))
		}
		out.WriteString("\n")
	}
	path := filepath.Join("testdata", "golden", "wire.txt")
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update-golden to create it): %v", err)
	}
	if !bytes.Equal(want, out.Bytes()) {
		t.Errorf("wire output differs from %s (rerun with -update-golden and review the diff)\n--- got:\n%s", path, out.String())
	}
}

package tests

// The interop tests' gateway: harness.Gateway with a JSON access log, and
// the checks over that log.

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/credentials"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// interopGateway is one running gateway process.
type interopGateway struct {
	*harness.Gateway
	BaseURL   string // e.g. http://127.0.0.1:1234 (no trailing slash)
	accessLog string
	// httpClient fetches the card (nil: the SDK's default client); set for
	// the TLS gateways of the gRPC tests, with the test CA trusted.
	httpClient *http.Client
	// grpcCreds are the gRPC transport credentials of an SDK client (nil:
	// plaintext h2c) (XPORT-2).
	grpcCreds credentials.TransportCredentials
}

// interopSiteHead opens the interop tests' sites: a JSON access log in
// the gateway's directory, then the a2a block with the test agent's card
// (the rest of the block and its closing brace follow).
const interopSiteHead = `log {
	output file {{DIR}}/access.log
	format json
}
a2a {
	card {
		name test-agent
		description "A test agent for the interop tests."
		skill echo {
			name Echo
			description "Echoes the prompt back to the caller."
			tags echo test
		}
	}
`

// interopStartGateway starts the gateway with the echo backend configured by
// backendBlock (e.g. "backend echo" or "backend echo {\n delay 100ms\n}").
// The site writes a JSON access log, so the tests can check the headers
// that the clients really sent; the start waits on the card, not /health,
// so that the log holds only A2A requests and card fetches.
func interopStartGateway(t *testing.T, backendBlock string) *interopGateway {
	t.Helper()
	gw := harness.StartGatewayWith(t, interopSiteHead+`	`+backendBlock+`
}`, harness.Options{
		Global:       "storage file_system {{DIR}}/storage\na2a {\n\tdata_dir {{DIR}}/data\n}",
		ReadyPath:    "/.well-known/agent-card.json",
		StartTimeout: 30 * time.Second,
	})
	return &interopGateway{Gateway: gw, BaseURL: gw.URL, accessLog: filepath.Join(gw.Dir, "access.log")}
}

// interopAccessEntry is one request of the access log.
type interopAccessEntry struct {
	Method  string
	URI     string
	Status  int
	Headers http.Header
}

// interopAccessLog reads the site's access log (Caddy writes it synchronously
// when a request ends).
func (gw *interopGateway) interopAccessLog(t *testing.T) []interopAccessEntry {
	t.Helper()
	f, err := os.Open(gw.accessLog)
	if err != nil {
		t.Fatalf("open access log: %v", err)
	}
	defer f.Close()
	var out []interopAccessEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var line struct {
			Request struct {
				Method  string              `json:"method"`
				URI     string              `json:"uri"`
				Headers map[string][]string `json:"headers"`
			} `json:"request"`
			Status int `json:"status"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || line.Request.Method == "" {
			continue
		}
		out = append(out, interopAccessEntry{
			Method:  line.Request.Method,
			URI:     line.Request.URI,
			Status:  line.Status,
			Headers: http.Header(line.Request.Headers),
		})
	}
	return out
}

// interopCheckVersionHeaders asserts that every A2A call (everything except
// the agent card) carried "A2A-Version: 1.0", and returns a summary of the
// distinct header names seen per request kind, for the logs.
func (gw *interopGateway) interopCheckVersionHeaders(t *testing.T, who string) {
	t.Helper()
	entries := gw.interopAccessLog(t)
	calls := 0
	names := map[string]bool{}
	for _, e := range entries {
		for k := range e.Headers {
			names[k] = true
		}
		if strings.HasPrefix(e.URI, "/.well-known/") {
			continue
		}
		calls++
		if v := e.Headers.Get("A2A-Version"); v != "1.0" {
			t.Errorf("%s: %s %s was sent with A2A-Version %q, want \"1.0\" (headers %v)", who, e.Method, e.URI, v, e.Headers)
		}
	}
	if calls == 0 {
		t.Errorf("%s: the access log shows no A2A call", who)
	}
	var list []string
	for k := range names {
		list = append(list, k)
	}
	t.Logf("%s: %d A2A calls, header names seen: %s", who, calls, strings.Join(interopSorted(list), ", "))
}

func interopSorted(s []string) []string {
	sort.Strings(s)
	return s
}

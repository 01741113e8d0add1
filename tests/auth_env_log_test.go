package tests

import (
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// TestAuthEnvLogged (issue 28.5): IACCODE_A2A_* variables that enable auth
// on a site without an auth block are named once at start, with no_env
// as the way out, never with their values; with no_env nothing is logged.
func TestAuthEnvLogged(t *testing.T) {
	t.Parallel()
	env := harness.Options{Env: []string{"IACCODE_A2A_HTTP_TOKEN=env-tok-s3cret", "IACCODE_A2A_API_KEY=env-key-s3cret"}}
	gw := harness.StartGatewayWith(t, "a2a {\n\tcard {\n\t\tname envlog\n\t}\n}", env)
	expect401(t, gw.URL+"/", nil, 2)
	out := gw.Output()
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "IACCODE_A2A_HTTP_TOKEN") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "no_env") || !strings.Contains(lines[0], "IACCODE_A2A_API_KEY (API key of principal default)") {
		t.Fatalf("want one start line naming the variables and no_env, got %q", lines)
	}
	if strings.Contains(out, "s3cret") {
		t.Fatal("a credential value is in the log")
	}
	gw2 := harness.StartGatewayWith(t, "a2a {\n\tcard {\n\t\tname envlog\n\t}\n\tauth {\n\t\tno_env\n\t}\n}", env)
	if strings.Contains(gw2.Output(), "IACCODE_A2A_HTTP_TOKEN") {
		t.Fatalf("no_env: the variables are still logged:\n%s", gw2.Output())
	}
}

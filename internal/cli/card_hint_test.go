package cli

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestValidateSignatureHintNamesRealFlags: `caddy a2a card validate` on a
// signed card without keys says how to verify the signatures, naming only
// flags that `card validate` and `card verify` really have.
func TestValidateSignatureHintNamesRealFlags(t *testing.T) {
	prot := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","kid":"k1","typ":"JOSE"}`))
	cardJSON := `{"name":"Hint Agent","description":"Checks the hint of the card validator.","version":"1.0.0",
"supportedInterfaces":[{"url":"https://agent.example.com/","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
"capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
"skills":[{"id":"s","name":"Skill","description":"Does the one thing this agent does.","tags":["t"]}],
"signatures":[{"protected":"` + prot + `","signature":"c2ln"}]}`
	path := filepath.Join(t.TempDir(), "card.json")
	if err := os.WriteFile(path, []byte(cardJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	root, out, errb := buildTestA2A(t)
	root.SetArgs([]string{"a2a", "card", "validate", path})
	_ = root.Execute()
	var hint string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, "signatures not checked") {
			hint = l
		}
	}
	if hint == "" {
		t.Fatalf("no 'signatures not checked' finding:\n%s\n%s", out.String(), errb.String())
	}
	flags := regexp.MustCompile(`--[a-z0-9-]+`).FindAllString(hint, -1)
	if len(flags) < 2 {
		t.Fatalf("hint names no flags: %q", hint)
	}
	for _, sub := range []string{"validate", "verify"} {
		cmd, _, err := root.Find([]string{"a2a", "card", sub})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range flags {
			if cmd.Flags().Lookup(strings.TrimPrefix(f, "--")) == nil {
				t.Errorf("hint %q names %s, which `caddy a2a card %s` does not have", hint, f, sub)
			}
		}
	}
}

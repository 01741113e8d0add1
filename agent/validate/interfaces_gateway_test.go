package validate

import (
	"strings"
	"testing"
)

// XPORT-3/5/6: the gateway's own custom bindings (websocket with a wss
// URL, grpc-jsonrpc with host:port) are an info, not an error, so `card
// validate` passes on the gateway's cards (issue 30 done-when); an unknown
// lower-case name still is an error.
func TestGatewayCustomBindings(t *testing.T) {
	card := func(binding, url string) []byte {
		return []byte(`{"name":"gw","description":"A gateway agent for validation tests.","version":"1.0.0",
"supportedInterfaces":[{"url":"https://a.example/","protocolBinding":"JSONRPC","protocolVersion":"1.0"},
{"url":"` + url + `","protocolBinding":"` + binding + `","protocolVersion":"1.0"}],
"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
"skills":[{"id":"s","name":"S","description":"Does a thing well.","tags":["t"]}]}`)
	}
	errs := func(fs []Finding) []string {
		var out []string
		for _, f := range fs {
			if f.Severity == Error && strings.HasPrefix(f.Pointer, "/supportedInterfaces/1") {
				out = append(out, f.String())
			}
		}
		return out
	}
	for _, c := range [][2]string{{"websocket", "wss://a.example/ws"}, {"grpc-jsonrpc", "a.example:443"}} {
		fs := Card(card(c[0], c[1]), Options{})
		if e := errs(fs); len(e) != 0 {
			t.Errorf("%s: errors %v", c[0], e)
		}
		info := false
		for _, f := range fs {
			info = info || (f.Severity == Info && strings.Contains(f.Message, "custom binding"))
		}
		if !info {
			t.Errorf("%s: no info about the custom binding: %v", c[0], fs)
		}
	}
	if e := errs(Card(card("jsonrpc", "https://a.example/"), Options{})); len(e) == 0 {
		t.Error("lower-case jsonrpc accepted")
	}
	if e := errs(Card(card("websocket", "not a url"), Options{})); len(e) == 0 {
		t.Error("websocket without a URL accepted")
	}
}

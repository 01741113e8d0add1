package backends

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/jws"
	"github.com/caddy-a2a/caddy-a2a/client"
)

// fakeUpstream is a real HTTP server answering the card and JSON-RPC with
// the given handlers (TURN-9 failure modes, TURN-8).
func fakeUpstream(t *testing.T, card func(base string) string, rpcH http.HandlerFunc) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "agent-card.json") {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, card(srv.URL))
			return
		}
		rpcH(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func card10(base string) string {
	return `{"name":"up","description":"d","version":"1","supportedInterfaces":[{"url":"` + base + `/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"s1","name":"S","description":"d","tags":["x"]}]}`
}

func runA2A(t *testing.T, a *A2A) ([]backend.Event, error) {
	t.Helper()
	var evs []backend.Event
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := a.RunTurn(ctx, &backend.TurnRequest{ContextID: "gc", TaskID: "gt", MessageID: "m", Text: "hi", Session: &backend.Session{}},
		func(ev backend.Event) error { evs = append(evs, ev); return nil })
	return evs, err
}

func turnKind(err error) string {
	var te *backend.TurnError
	if errors.As(err, &te) {
		return te.Kind
	}
	var pe *backend.ProtocolError
	if errors.As(err, &pe) {
		return "protocol"
	}
	if err != nil {
		return "internal"
	}
	return ""
}

func sseWrite(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range events {
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":%s}\n\n", e)
	}
}

// TestA2ABadUpstreams: each failure mode has a clear TURN-8 outcome and
// no hang.
func TestA2ABadUpstreams(t *testing.T) {
	cases := []struct {
		name string
		card func(string) string
		rpc  http.HandlerFunc
		want string
	}{
		{"500s", card10, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) }, backend.ErrorKindTransient},
		{"429", card10, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTooManyRequests) }, backend.ErrorKindTransient},
		{"401", card10, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusUnauthorized) }, backend.ErrorKindAuth},
		{"garbage JSON", card10, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {not json\n\n")
		}, "internal"},
		{"stream stops mid-way", card10, func(w http.ResponseWriter, _ *http.Request) {
			sseWrite(w, `{"task":{"id":"ut","contextId":"uc","status":{"state":"TASK_STATE_WORKING"}}}`)
		}, backend.ErrorKindTransient},
		{"card without a usable interface", func(string) string {
			return `{"name":"up","description":"d","version":"1","supportedInterfaces":[{"url":"http://169.254.169.254/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[]}`
		}, nil, "internal"},
		{"card garbage", func(string) string { return `<html>` }, nil, "internal"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := fakeUpstream(t, c.card, c.rpc)
			_, err := runA2A(t, &A2A{URL: srv.URL})
			if got := turnKind(err); got != c.want {
				t.Errorf("outcome %q (%v), want %q", got, err, c.want)
			}
		})
	}
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	if _, err := runA2A(t, &A2A{URL: down.URL}); turnKind(err) != backend.ErrorKindTransient {
		t.Errorf("unreachable upstream: %v, want transient", err)
	}
}

// TestA2ARelay: upstream events become turn events, and the upstream ids
// land in the session state (a follow-up and a restart reuse them).
func TestA2ARelay(t *testing.T) {
	var got []a2a.SendMessageRequest
	srv := fakeUpstream(t, card10, func(w http.ResponseWriter, r *http.Request) {
		var env struct {
			Params a2a.SendMessageRequest `json:"params"`
		}
		_ = json.NewDecoder(r.Body).Decode(&env)
		got = append(got, env.Params)
		sseWrite(w,
			`{"task":{"id":"ut","contextId":"uc","status":{"state":"TASK_STATE_SUBMITTED"}}}`,
			`{"statusUpdate":{"taskId":"ut","contextId":"uc","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"a","role":"ROLE_AGENT","parts":[{"text":"chunk"}]}}}}`,
			`{"artifactUpdate":{"taskId":"ut","contextId":"uc","artifact":{"artifactId":"art","name":"n","parts":[{"text":"body"}]},"lastChunk":true}}`,
			`{"statusUpdate":{"taskId":"ut","contextId":"uc","status":{"state":"TASK_STATE_INPUT_REQUIRED","message":{"messageId":"b","role":"ROLE_AGENT","parts":[{"text":"more?"}]}}}}`)
	})
	a := &A2A{URL: srv.URL}
	sess := &backend.Session{}
	var evs []backend.Event
	req := &backend.TurnRequest{ContextID: "gc", TaskID: "gt", MessageID: "m1", Text: "hi", Session: sess}
	emit := func(ev backend.Event) error { evs = append(evs, ev); return nil }
	if err := a.RunTurn(context.Background(), req, emit); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range evs {
		types = append(types, ev.Type+":"+ev.Text+ev.Outcome)
	}
	if strings.Join(types, ",") != "text:chunk,artifact:,end:more?input_required" {
		t.Errorf("events %v", types)
	}
	if got[0].Message.ContextID != "" || got[0].Message.TaskID != "" {
		t.Errorf("first upstream message %+v carries ids", got[0].Message)
	}
	// A new backend (a restart) with the stored session state continues
	// the upstream task of the gateway task.
	b := &A2A{URL: srv.URL}
	req2 := &backend.TurnRequest{ContextID: "gc", TaskID: "gt", MessageID: "m2", Text: "yes", Session: &backend.Session{State: sess.State}}
	if err := b.RunTurn(context.Background(), req2, emit); err != nil {
		t.Fatal(err)
	}
	if got[1].Message.ContextID != "uc" || got[1].Message.TaskID != "ut" {
		t.Errorf("follow-up upstream message ids %q %q, want uc ut", got[1].Message.ContextID, got[1].Message.TaskID)
	}
	if c := b.Card(); c == nil || len(c.Skills) != 1 || c.Skills[0].ID != "s1" {
		t.Errorf("discovered card %+v", c)
	}
}

// TestA2AVerifyUpstreamCard: with keys, an unsigned or wrongly signed
// upstream card refuses the turn; a card signed with the key passes.
func TestA2AVerifyUpstreamCard(t *testing.T) {
	secret := strings.Repeat("s", 32)
	signers, err := jws.LoadSigners([]jws.SignKey{{Alg: "hs256", KID: "k1", Secret: secret}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	signed := func(base string) string {
		var c a2a.AgentCard
		_ = json.Unmarshal([]byte(card10(base)), &c)
		if err := jws.SignCard(&c, signers...); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(&c)
		return string(b)
	}
	ok := func(w http.ResponseWriter, _ *http.Request) {
		sseWrite(w, `{"task":{"id":"ut","contextId":"uc","status":{"state":"TASK_STATE_COMPLETED"}}}`)
	}
	trust := &client.Trust{HS256: []client.HS256Secret{{KID: "k1", Secret: []byte(secret)}}}
	wrong := &client.Trust{HS256: []client.HS256Secret{{KID: "k1", Secret: []byte(strings.Repeat("x", 32))}}}
	for _, c := range []struct {
		name  string
		card  func(string) string
		trust *client.Trust
		ok    bool
	}{
		{"signed, right key", signed, trust, true},
		{"signed, wrong key", signed, wrong, false},
		{"unsigned", card10, trust, false},
		{"unsigned, no keys", card10, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := fakeUpstream(t, c.card, ok)
			evs, err := runA2A(t, &A2A{URL: srv.URL, Trust: c.trust})
			if c.ok != (err == nil) {
				t.Fatalf("err %v, want ok=%v", err, c.ok)
			}
			if !c.ok && len(evs) != 0 {
				t.Errorf("a turn ran on a card that failed its check: %v", evs)
			}
		})
	}
}

// TestA2ANonStreamingUpstream: an upstream whose card does not stream gets
// one blocking SendMessage; a direct Message reply is the turn's message.
func TestA2ANonStreamingUpstream(t *testing.T) {
	var methods []string
	nostream := func(base string) string {
		return strings.Replace(card10(base), `"streaming":true`, `"streaming":false`, 1)
	}
	srv := fakeUpstream(t, nostream, func(w http.ResponseWriter, r *http.Request) {
		var env struct {
			Method string `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&env)
		methods = append(methods, env.Method)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"message":{"messageId":"r","contextId":"uc","role":"ROLE_AGENT","parts":[{"text":"direct answer"}]}}}`)
	})
	evs, err := runA2A(t, &A2A{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if len(methods) != 1 || methods[0] != a2a.MethodSendMessage {
		t.Errorf("upstream methods %v, want one SendMessage", methods)
	}
	if len(evs) != 2 || evs[0].Type != backend.EventMessage || evs[0].Text != "direct answer" || evs[1].Type != backend.EventEnd {
		t.Errorf("events %+v, want message then end", evs)
	}
}

// TestA2AUpstream03Unary: a 0.3 upstream without streaming answers
// message/send with a 0.3 task, translated back.
func TestA2AUpstream03Unary(t *testing.T) {
	var methods []string
	card := func(base string) string {
		return `{"protocolVersion":"0.3.0","name":"old","description":"d","url":"` + base + `/","version":"1","capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[]}`
	}
	srv := fakeUpstream(t, card, func(w http.ResponseWriter, r *http.Request) {
		var env struct {
			Method string `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&env)
		methods = append(methods, env.Method)
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"ut","contextId":"uc","status":{"state":"completed","message":{"kind":"message","messageId":"x","role":"agent","parts":[{"kind":"text","text":"old answer"}]}},"artifacts":[{"artifactId":"a1","parts":[{"kind":"text","text":"art"}]}]}}`)
	})
	evs, err := runA2A(t, &A2A{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if len(methods) != 1 || methods[0] != "message/send" {
		t.Errorf("upstream methods %v, want message/send", methods)
	}
	if len(evs) != 2 || evs[0].Type != backend.EventArtifact || evs[0].ArtifactID != "a1" || evs[1].Outcome != backend.OutcomeCompleted || evs[1].Text != "old answer" {
		t.Errorf("events %+v", evs)
	}
}

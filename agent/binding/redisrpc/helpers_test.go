package redisrpc

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/agenttest"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc"
)

// startRedis runs a throwaway redis-server on a free loopback port and
// returns a client; the test fails (not skips) without redis-server.
func startRedis(tb testing.TB) *redis.Client {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		tb.Fatalf("redis-server is required: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", tb.TempDir())
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port)})
	tb.Cleanup(func() { _ = c.Close() })
	for range 100 {
		if c.Ping(context.Background()).Err() == nil {
			return c
		}
		time.Sleep(30 * time.Millisecond)
	}
	tb.Fatal("redis-server did not answer")
	return nil
}

// newService returns a service over a fresh SQLite store with the echo
// backend.
func newService(t *testing.T, be backend.Backend) *agent.Service {
	t.Helper()
	return newServiceWith(t, be)
}

// newServiceTB is newService for benchmarks (echo backend).
func newServiceTB(tb testing.TB) *agent.Service { return newServiceWith(tb, nil) }

func newServiceWith(t testing.TB, be backend.Backend) *agent.Service {
	svc, _ := agenttest.Service(t, agent.Config{Backend: be, ContextWait: 10 * time.Millisecond})
	return svc
}

// startConsumer starts a consumer over rdb and stops it at cleanup.
func startConsumer(t *testing.T, rdb *redis.Client, svc *agent.Service, opts Options, authn Authenticator) *Consumer {
	t.Helper()
	c := New(rdb, jsonrpc.NewDispatcher(agent.NewHandler(svc)), opts, authn, nil)
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop(5 * time.Second) })
	return c
}

// reply is one response entry.
type reply struct {
	ID          string
	Correlation string
	Payload     string
	Final       string
}

// send adds a request entry to the default request stream.
func send(t *testing.T, rdb *redis.Client, corr, replyStream, payload string, headers map[string]string) string {
	t.Helper()
	vals := []any{FieldCorrelationID, corr, FieldReplyStream, replyStream, FieldPayload, payload}
	if headers != nil {
		b, _ := json.Marshal(headers)
		vals = append(vals, FieldHeaders, string(b))
	}
	id, err := rdb.XAdd(t.Context(), &redis.XAddArgs{Stream: DefaultRequestStream, Values: vals}).Result()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// readUntilFinal reads the reply stream until an entry with final=true,
// within d; it fails the test on timeout.
func readUntilFinal(t *testing.T, rdb *redis.Client, stream string, d time.Duration) []reply {
	t.Helper()
	var out []reply
	last := "0"
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		res, err := rdb.XRead(t.Context(), &redis.XReadArgs{Streams: []string{stream, last}, Block: 200 * time.Millisecond}).Result()
		if err == redis.Nil {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range res[0].Messages {
			last = m.ID
			r := reply{ID: m.ID}
			r.Correlation, _ = m.Values[FieldCorrelationID].(string)
			r.Payload, _ = m.Values[FieldPayload].(string)
			r.Final, _ = m.Values[FieldFinal].(string)
			out = append(out, r)
			if r.Final == "true" {
				return out
			}
		}
	}
	t.Fatalf("no final response on %s within %v (got %d entries)", stream, d, len(out))
	return nil
}

// rpcPayload is a JSON-RPC request.
func rpcPayload(id any, method string, params any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return string(b)
}

// sendParams are SendMessage params with one text part.
func sendParams(text string) map[string]any {
	return map[string]any{"message": map[string]any{
		"role": "ROLE_USER", "messageId": fmt.Sprint("m-", time.Now().UnixNano()),
		"parts": []any{map[string]any{"text": text}},
	}}
}

// rpcResp is a decoded JSON-RPC response payload.
type rpcResp struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Final   bool            `json:"final"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func decode(t *testing.T, payload string) rpcResp {
	t.Helper()
	var r rpcResp
	if err := json.Unmarshal([]byte(payload), &r); err != nil {
		t.Fatalf("payload is not JSON: %v: %s", err, payload)
	}
	return r
}

// jsonrpcDispatcher is the dispatcher of svc under the redis label.
func jsonrpcDispatcher(svc *agent.Service) *jsonrpc.Dispatcher {
	return jsonrpc.NewDispatcher(agent.NewHandler(svc))
}

// inflightIDs lists the entries being served.
func (c *Consumer) inflightIDs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for id := range c.inflight {
		out = append(out, id)
	}
	return out
}

// jsonUnmarshal decodes a payload string.
func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

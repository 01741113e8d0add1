package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// maxReply bounds how much of a reply body is read.
const maxReply = 64 << 20

// client sends the Endpoint's requests unless Client says otherwise.
var client = &http.Client{Timeout: 60 * time.Second}

// Option tunes the requests of an Endpoint (At) or one of its requests.
type Option func(*request)

// request is what the options set.
type request struct {
	header map[string]string // "" removes the header
	order  []string
	client *http.Client
	id     any
}

// Header sets a request header. An empty value removes it, also one the
// harness sets by default (A2A-Version: 1.0; Content-Type:
// application/json when there is a body; Accept: text/event-stream on
// streams).
func Header(name, value string) Option {
	return func(r *request) {
		if _, ok := r.header[name]; !ok {
			r.order = append(r.order, name)
		}
		r.header[name] = value
	}
}

// Headers sets several headers as Header does.
func Headers(h map[string]string) Option {
	return func(r *request) {
		for k, v := range h {
			Header(k, v)(r)
		}
	}
}

// Bearer sends "Authorization: Bearer token"; "" sends none.
func Bearer(token string) Option {
	if token == "" {
		return func(*request) {}
	}
	return Header("Authorization", "Bearer "+token)
}

// Client sends the request with c instead of the harness's client (60 s
// timeout, shared keep-alive connections).
func Client(c *http.Client) Option { return func(r *request) { r.client = c } }

// ID sets the JSON-RPC request id (default 1).
func ID(id any) Option { return func(r *request) { r.id = id } }

func options(opts []Option) *request {
	r := &request{header: map[string]string{}, client: client, id: 1}
	for _, o := range opts {
		o(r)
	}
	return r
}

// newRequest builds an HTTP request with the default headers, then the
// options' headers.
func (r *request) newRequest(ctx context.Context, method, url, body string, defaults ...string) (*http.Request, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("A2A-Version", "1.0")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(defaults); i += 2 {
		req.Header.Set(defaults[i], defaults[i+1])
	}
	for _, k := range r.order {
		if v := r.header[k]; v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	return req, nil
}

// Envelope returns the JSON-RPC request {"jsonrpc":"2.0","id":…,"method":…,
// "params":…} (id 1 unless ID says otherwise). A json.RawMessage params is
// sent as written.
func Envelope(method string, params any, opts ...Option) string {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": options(opts).id, "method": method, "params": params})
	if err != nil {
		panic(fmt.Sprintf("harness: JSON-RPC params of %s: %v", method, err))
	}
	return string(b)
}

// Reply is one HTTP answer. Its Response's body is already read (Raw) and
// closed.
type Reply struct {
	*http.Response
	// Raw is the body.
	Raw []byte
	// Doc is the body decoded when it is a JSON object, else nil.
	Doc map[string]any
	// Result and Error are Doc's "result" and "error" objects (nil when
	// absent or not objects).
	Result, Error map[string]any
}

// JSON returns Doc and fails the test when the body is not a JSON object.
func (r *Reply) JSON(t testing.TB) map[string]any {
	t.Helper()
	if r.Doc == nil {
		t.Fatalf("%s %s: HTTP %d, not a JSON object: %s", r.Request.Method, r.Request.URL, r.StatusCode, r.Raw)
	}
	return r.Doc
}

// Endpoint is the harness's one family of request helpers: every
// request a test sends to a gateway (or to any HTTP server) goes through
// its methods, which share one request builder (default headers, then the
// options) and one reply reader. Its URL is the request URL of every
// method: a gateway's base URL or an A2A endpoint for the JSON-RPC
// methods, the whole URL of the HTTP request for Do, Send and StreamHTTP.
//
//	harness.At(gw.URL).RPC(t, "GetTask", map[string]any{"id": id})
//	harness.At(gw.URL, harness.Bearer(tok)).Stream(t, "SendStreamingMessage", params)
//	harness.At(gw.URL+"/tasks/"+id).Do(t, http.MethodGet, "")
//
// The methods that take t fail the test on a transport error; Send and Try
// report it instead, for goroutines and for gateways that may not listen.
type Endpoint struct {
	url  string
	opts []Option
}

// At returns the Endpoint for url with options applied to each of its
// requests (before the options of the request itself).
func At(url string, opts ...Option) Endpoint {
	return Endpoint{url: url, opts: opts}
}

// with returns the endpoint's options followed by a request's.
func (e Endpoint) with(opts []Option) []Option {
	return append(append([]Option{}, e.opts...), opts...)
}

// Send sends one HTTP request (body "" for none) and reads the reply; it
// reports a failed send instead of failing a test. A reply cut short is
// returned with what arrived.
func (e Endpoint) Send(method, body string, opts ...Option) (*Reply, error) {
	o := options(e.with(opts))
	req, err := o.newRequest(context.Background(), method, e.url, body)
	if err != nil {
		return nil, err
	}
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxReply)) // a cut reply is judged by what arrived
	r := &Reply{Response: resp, Raw: b}
	if json.Unmarshal(b, &r.Doc) == nil {
		r.Result, _ = r.Doc["result"].(map[string]any)
		r.Error, _ = r.Doc["error"].(map[string]any)
	}
	return r, nil
}

// Do is Send that fails the test on a transport error.
func (e Endpoint) Do(t testing.TB, method, body string, opts ...Option) *Reply {
	t.Helper()
	r, err := e.Send(method, body, opts...)
	if err != nil {
		t.Fatalf("%s %s: %v", method, e.url, err)
	}
	return r
}

// Call posts one JSON-RPC request (Envelope) and returns the reply,
// whatever it is; a transport error fails the test.
func (e Endpoint) Call(t testing.TB, method string, params any, opts ...Option) *Reply {
	t.Helper()
	opts = e.with(opts)
	r, err := At(e.url).Send(http.MethodPost, Envelope(method, params, opts...), opts...)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return r
}

// RPC is Call that returns the result and error objects; it fails the test
// when the reply is not a JSON object.
func (e Endpoint) RPC(t testing.TB, method string, params any, opts ...Option) (result, rpcErr map[string]any) {
	t.Helper()
	r := e.Call(t, method, params, opts...)
	if r.Doc == nil {
		t.Fatalf("%s: bad JSON-RPC reply %d %s", method, r.StatusCode, r.Raw)
	}
	return r.Result, r.Error
}

// Try is RPC for goroutines and for gateways that may not listen yet: it
// reports a transport error, a reply that is not JSON, or a JSON-RPC error
// ("rpc error {…}") instead of failing a test.
func (e Endpoint) Try(method string, params any, opts ...Option) (map[string]any, error) {
	opts = e.with(opts)
	r, err := At(e.url).Send(http.MethodPost, Envelope(method, params, opts...), opts...)
	if err != nil {
		return nil, err
	}
	if r.Doc == nil {
		return nil, fmt.Errorf("%s: HTTP %d, not JSON: %.200s", method, r.StatusCode, r.Raw)
	}
	if r.Error != nil {
		return nil, fmt.Errorf("rpc error %v", r.Error)
	}
	return r.Result, nil
}

package tests

// The per-binding drivers of the conformance table
// (conformance_bindings_test.go): each sends one A2A method call over its
// carrier and maps the answer to a JSON result or to the carrier's error
// form, reduced to (kind, code, ErrorInfo reason).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/coder/websocket"
	"github.com/redis/go-redis/v9"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	gpj "google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/client"
	"github.com/caddy-a2a/caddy-a2a/internal/sse"
)

// Error kinds of confErr: which code space Code is in.
const (
	confKindRPC  = "jsonrpc" // a JSON-RPC error object: code, ErrorInfo in data
	confKindHTTP = "http"    // an HTTP status (+ google.rpc.Status ErrorInfo for HTTP+JSON)
	confKindGRPC = "grpc"    // a gRPC status code + ErrorInfo detail
)

// confErr is a carrier's error reduced to its code and ErrorInfo reason.
type confErr struct {
	Kind   string            // confKind*
	Code   int               // JSON-RPC code, HTTP status or gRPC status code
	Reason string            // the google.rpc.ErrorInfo reason ("" when none)
	Meta   map[string]string // the ErrorInfo metadata
	// Retry is when to retry: the HTTP Retry-After header, else the
	// google.rpc.RetryInfo retryDelay ("" when neither).
	Retry string
	Msg   string // for failure messages
}

func (e *confErr) String() string {
	if e == nil {
		return "<no error>"
	}
	return fmt.Sprintf("%s %d %q %v retry %q (%s)", e.Kind, e.Code, e.Reason, e.Meta, e.Retry, e.Msg)
}

// confReq is one call of the table.
type confReq struct {
	Principal string // confAlice, confBob, or "" for no credentials
	Method    string
	Params    map[string]any
	Version   string // the A2A-Version sent; "" is 1.0
}

// version is the A2A-Version the request carries.
func (r confReq) version() string {
	if r.Version == "" {
		return "1.0"
	}
	return r.Version
}

// confDriver is one binding of the gateway.
type confDriver interface {
	// call runs a unary method: the result as JSON, or the error.
	call(ctx context.Context, r confReq) (json.RawMessage, *confErr)
	// stream runs a streaming method: its events, or the error that
	// refused (or ended) it.
	stream(ctx context.Context, r confReq) ([]json.RawMessage, *confErr)
}

// confTokens are the bearer tokens of the principals.
var confTokens = map[string]string{
	confAlice:   "conf-alice-token-0123456789",
	confBob:     "conf-bob-token-0123456789",
	confMonitor: "conf-monitor-token-0123456789",
	confRateBot: "conf-ratebot-token-0123456789",
}

// rpcWireErr is a JSON-RPC error object.
type rpcWireErr struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// errorInfoOf is the reason and metadata of the first A2A ErrorInfo of
// a details list.
func errorInfoOf(details json.RawMessage) (string, map[string]string) {
	var ds []struct {
		Type     string            `json:"@type"`
		Reason   string            `json:"reason"`
		Domain   string            `json:"domain"`
		Metadata map[string]string `json:"metadata"`
	}
	_ = json.Unmarshal(details, &ds)
	for _, d := range ds {
		if d.Type == "type.googleapis.com/google.rpc.ErrorInfo" && d.Domain == a2a.ErrorDomain {
			return d.Reason, d.Metadata
		}
	}
	return "", nil
}

// retryInfoOf is the retryDelay of the google.rpc.RetryInfo of a details
// list ("" when none).
func retryInfoOf(details json.RawMessage) string {
	var ds []struct {
		Type       string `json:"@type"`
		RetryDelay string `json:"retryDelay"`
	}
	_ = json.Unmarshal(details, &ds)
	for _, d := range ds {
		if d.Type == "type.googleapis.com/google.rpc.RetryInfo" {
			return d.RetryDelay
		}
	}
	return ""
}

// detailsErr is a confErr of kind with the ErrorInfo and RetryInfo of
// details.
func detailsErr(kind string, code int, details json.RawMessage, msg string) *confErr {
	reason, meta := errorInfoOf(details)
	return &confErr{Kind: kind, Code: code, Reason: reason, Meta: meta, Retry: retryInfoOf(details), Msg: msg}
}

// httpRefusal is the confErr of an HTTP answer other than 2xx: its status,
// the details of its google.rpc.Status or JSON-RPC error body, and its
// Retry-After header (else the RetryInfo delay).
func httpRefusal(resp *http.Response, b []byte) *confErr {
	details := restDetails(b)
	if len(details) == 0 {
		details = rpcErrorData(b)
	}
	e := detailsErr(confKindHTTP, resp.StatusCode, details, string(b))
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		e.Retry = ra
	}
	return e
}

// rpcErrorData is the data of a JSON-RPC error object (nil when b is none).
func rpcErrorData(b []byte) json.RawMessage {
	var r struct {
		Error *rpcWireErr `json:"error"`
	}
	if json.Unmarshal(b, &r) != nil || r.Error == nil {
		return nil
	}
	return r.Error.Data
}

// rpcOutcome maps a JSON-RPC response object to a result or confErr.
func rpcOutcome(doc []byte) (json.RawMessage, *confErr) {
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcWireErr     `json:"error"`
	}
	if err := json.Unmarshal(doc, &r); err != nil {
		return nil, &confErr{Kind: "bad", Msg: fmt.Sprintf("not a JSON-RPC response: %.300s", doc)}
	}
	if r.Error != nil {
		return nil, detailsErr(confKindRPC, r.Error.Code, r.Error.Data, r.Error.Message)
	}
	return r.Result, nil
}

// envelope is a JSON-RPC request.
func envelope(id any, r confReq) []byte {
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": r.Method}
	if r.Params != nil {
		m["params"] = r.Params
	}
	b, _ := json.Marshal(m)
	return b
}

// httpBase holds what the HTTP drivers share.
type httpBase struct{ base string }

// do sends one HTTP request with the principal's token and the version.
func (h httpBase) do(ctx context.Context, r confReq, verb, path string, body []byte, accept string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, verb, h.base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("A2A-Version", r.version())
	if tok := confTokens[r.Principal]; tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return http.DefaultClient.Do(req)
}

// sseData reads the data of every SSE event of body (internal/sse, events
// of up to 16 MiB).
func sseData(body io.Reader) ([][]byte, error) {
	var out [][]byte
	r := sse.NewReader(body, 16<<20)
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev.Data)
	}
}

func isSSE(resp *http.Response) bool {
	return strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
}

// jsonrpcHTTPDriver is JSON-RPC over HTTP: POST / (RPC-1).
type jsonrpcHTTPDriver struct{ httpBase }

func (d jsonrpcHTTPDriver) call(ctx context.Context, r confReq) (json.RawMessage, *confErr) {
	resp, err := d.do(ctx, r, http.MethodPost, "/", envelope(1, r), "application/json")
	if err != nil {
		return nil, &confErr{Kind: "transport", Msg: err.Error()}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode != http.StatusOK {
		return nil, httpRefusal(resp, b)
	}
	return rpcOutcome(b)
}

func (d jsonrpcHTTPDriver) stream(ctx context.Context, r confReq) ([]json.RawMessage, *confErr) {
	resp, err := d.do(ctx, r, http.MethodPost, "/", envelope(1, r), "text/event-stream")
	if err != nil {
		return nil, &confErr{Kind: "transport", Msg: err.Error()}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return nil, httpRefusal(resp, b)
	}
	if !isSSE(resp) {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		_, e := rpcOutcome(b)
		if e == nil {
			e = &confErr{Kind: "bad", Msg: "a JSON result instead of a stream: " + string(b)}
		}
		return nil, e
	}
	datas, err := sseData(resp.Body)
	var evs []json.RawMessage
	for _, b := range datas {
		res, e := rpcOutcome(b)
		if e != nil {
			return evs, e
		}
		evs = append(evs, res)
	}
	if err != nil {
		return evs, &confErr{Kind: "transport", Msg: err.Error()}
	}
	return evs, nil
}

// restDetails is the details list of a google.rpc.Status body.
func restDetails(b []byte) json.RawMessage {
	var st struct {
		Error struct {
			Details json.RawMessage `json:"details"`
			Data    json.RawMessage `json:"data"` // a JSON-RPC error body (401 on POST /)
		} `json:"error"`
	}
	_ = json.Unmarshal(b, &st)
	if len(st.Error.Details) == 0 {
		return st.Error.Data
	}
	return st.Error.Details
}

// restDriver is the HTTP+JSON binding (RPC-13): a route per method.
type restDriver struct{ httpBase }

// restRouteOf maps a method and its params to a verb, path and body; ok
// is false for a method HTTP+JSON has no route for.
func restRouteOf(r confReq) (verb, path string, body []byte, ok bool) {
	str := func(k string) string { s, _ := r.Params[k].(string); return url.PathEscape(s) }
	js := func(v any) []byte { b, _ := json.Marshal(v); return b }
	params := r.Params
	if params == nil {
		params = map[string]any{}
	}
	switch r.Method {
	case a2a.MethodSendMessage:
		return http.MethodPost, "/message:send", js(params), true
	case a2a.MethodSendStreamingMessage:
		return http.MethodPost, "/message:stream", js(params), true
	case a2a.MethodGetTask:
		return http.MethodGet, "/tasks/" + str("id"), nil, true
	case a2a.MethodListTasks:
		return http.MethodGet, "/tasks", nil, true
	case a2a.MethodCancelTask:
		return http.MethodPost, "/tasks/" + str("id") + ":cancel", []byte("{}"), true
	case a2a.MethodSubscribeToTask:
		return http.MethodGet, "/tasks/" + str("id") + ":subscribe", nil, true
	case a2a.MethodCreatePushConfig:
		return http.MethodPost, "/tasks/" + str("taskId") + "/pushNotificationConfigs", js(params), true
	case a2a.MethodGetPushConfig:
		return http.MethodGet, "/tasks/" + str("taskId") + "/pushNotificationConfigs/" + str("id"), nil, true
	case a2a.MethodListPushConfigs:
		return http.MethodGet, "/tasks/" + str("taskId") + "/pushNotificationConfigs", nil, true
	case a2a.MethodDeletePushConfig:
		return http.MethodDelete, "/tasks/" + str("taskId") + "/pushNotificationConfigs/" + str("id"), nil, true
	case a2a.MethodGetExtendedAgentCard:
		return http.MethodGet, "/extendedAgentCard", nil, true
	}
	return "", "", nil, false
}

func (d restDriver) call(ctx context.Context, r confReq) (json.RawMessage, *confErr) {
	verb, path, body, ok := restRouteOf(r)
	if !ok {
		return nil, &confErr{Kind: "driver", Msg: "HTTP+JSON has no route for " + r.Method}
	}
	resp, err := d.do(ctx, r, verb, path, body, "application/json")
	if err != nil {
		return nil, &confErr{Kind: "transport", Msg: err.Error()}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode/100 != 2 {
		return nil, httpRefusal(resp, b)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return json.RawMessage("{}"), nil
	}
	return b, nil
}

func (d restDriver) stream(ctx context.Context, r confReq) ([]json.RawMessage, *confErr) {
	verb, path, body, ok := restRouteOf(r)
	if !ok {
		return nil, &confErr{Kind: "driver", Msg: "HTTP+JSON has no route for " + r.Method}
	}
	resp, err := d.do(ctx, r, verb, path, body, "text/event-stream")
	if err != nil {
		return nil, &confErr{Kind: "transport", Msg: err.Error()}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !isSSE(resp) {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return nil, httpRefusal(resp, b)
	}
	datas, err := sseData(resp.Body)
	var evs []json.RawMessage
	for _, b := range datas {
		if d := restDetails(b); len(d) > 0 { // an error event: a google.rpc.Status
			return evs, detailsErr(confKindHTTP, 0, d, string(b))
		}
		evs = append(evs, b)
	}
	if err != nil {
		return evs, &confErr{Kind: "transport", Msg: err.Error()}
	}
	return evs, nil
}

// grpcDriver is the official lf.a2a.v1.A2AService over h2c (XPORT-2).
type grpcDriver struct{ conn *grpc.ClientConn }

func newGRPCDriver(t *testing.T, target string) grpcDriver {
	t.Helper()
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return grpcDriver{conn: conn}
}

// grpcMessagesOf are the request and response messages of a method
// (client.GRPCMessages); an unknown method gets Empty for both (the server
// must refuse it).
func grpcMessagesOf(method string) (req, resp proto.Message) {
	if req, resp = client.GRPCMessages(method); req == nil {
		return new(emptypb.Empty), new(emptypb.Empty)
	}
	return req, resp
}

// prepare encodes params (ProtoJSON, the A2A JSON form) and the metadata.
func (d grpcDriver) prepare(ctx context.Context, r confReq) (context.Context, proto.Message, proto.Message, *confErr) {
	req, resp := grpcMessagesOf(r.Method)
	if r.Params != nil {
		b, _ := json.Marshal(r.Params)
		if err := (gpj.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, req); err != nil {
			return nil, nil, nil, &confErr{Kind: "driver", Msg: "encoding the request: " + err.Error()}
		}
	}
	md := metadata.Pairs("a2a-version", r.version())
	if tok := confTokens[r.Principal]; tok != "" {
		md.Append("authorization", "Bearer "+tok)
	}
	return metadata.NewOutgoingContext(ctx, md), req, resp, nil
}

// grpcConfErr maps a status to (code, ErrorInfo reason).
func grpcConfErr(err error) *confErr {
	st := status.Convert(err)
	e := &confErr{Kind: confKindGRPC, Code: int(st.Code()), Msg: st.Message()}
	for _, det := range st.Details() {
		if info, ok := det.(*errdetails.ErrorInfo); ok && info.GetDomain() == a2a.ErrorDomain {
			e.Reason, e.Meta = info.GetReason(), info.GetMetadata()
		}
		if ri, ok := det.(*errdetails.RetryInfo); ok && ri.GetRetryDelay() != nil {
			e.Retry = ri.GetRetryDelay().AsDuration().String()
		}
	}
	return e
}

func (d grpcDriver) call(ctx context.Context, r confReq) (json.RawMessage, *confErr) {
	ctx, req, resp, e := d.prepare(ctx, r)
	if e != nil {
		return nil, e
	}
	if err := d.conn.Invoke(ctx, "/lf.a2a.v1.A2AService/"+r.Method, req, resp); err != nil {
		return nil, grpcConfErr(err)
	}
	b, err := gpj.Marshal(resp)
	if err != nil {
		return nil, &confErr{Kind: "bad", Msg: err.Error()}
	}
	return b, nil
}

func (d grpcDriver) stream(ctx context.Context, r confReq) ([]json.RawMessage, *confErr) {
	ctx, req, _, e := d.prepare(ctx, r)
	if e != nil {
		return nil, e
	}
	st, err := d.conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, "/lf.a2a.v1.A2AService/"+r.Method)
	if err == nil {
		if err = st.SendMsg(req); err == nil {
			err = st.CloseSend()
		}
	}
	var evs []json.RawMessage
	for err == nil {
		ev := new(pb.StreamResponse)
		if err = st.RecvMsg(ev); err != nil {
			break
		}
		b, merr := gpj.Marshal(ev)
		if merr != nil {
			return evs, &confErr{Kind: "bad", Msg: merr.Error()}
		}
		evs = append(evs, b)
	}
	if errors.Is(err, io.EOF) {
		return evs, nil
	}
	return evs, grpcConfErr(err)
}

// wsDriver is WebSocket JSON-RPC (XPORT-3): one connection per principal,
// authenticated at the upgrade; the version travels in each frame's
// headers.
type wsDriver struct {
	t     *testing.T
	url   string
	mu    sync.Mutex
	conns map[string]*wsTestConn
	ids   atomic.Int64
}

// conn is the principal's connection; an upgrade the gateway refuses is
// returned as the HTTP status.
func (d *wsDriver) conn(principal string) (*wsTestConn, *confErr) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c := d.conns[principal]; c != nil {
		return c, nil
	}
	hdr := http.Header{"A2A-Version": {"1.0"}}
	if tok := confTokens[principal]; tok != "" {
		hdr.Set("Authorization", "Bearer "+tok)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, d.url, &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		if resp != nil {
			var b []byte
			if resp.Body != nil {
				b, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			}
			return nil, detailsErr(confKindHTTP, resp.StatusCode, restDetails(b), "upgrade refused: "+err.Error())
		}
		return nil, &confErr{Kind: "transport", Msg: err.Error()}
	}
	c.SetReadLimit(64 << 20)
	w := &wsTestConn{t: d.t, c: c, notify: make(chan struct{}, 1), done: make(chan struct{})}
	go w.read()
	d.t.Cleanup(func() { _ = c.CloseNow() })
	d.conns[principal] = w
	return w, nil
}

// roundTrip sends one request frame and returns its frames.
func (d *wsDriver) roundTrip(r confReq) ([]wsFrame, *confErr) {
	w, e := d.conn(r.Principal)
	if e != nil {
		return nil, e
	}
	id := fmt.Sprintf("c%d", d.ids.Add(1))
	frame := map[string]any{"id": id, "payload": json.RawMessage(envelope(id, r)), "headers": map[string]string{"A2A-Version": r.version()}}
	b, _ := json.Marshal(frame)
	w.send(string(b))
	return w.waitFinal(`"`+id+`"`, 30*time.Second), nil
}

// frameOutcome is the result or error of a frame's payload.
func frameOutcome(f wsFrame) (json.RawMessage, *confErr) {
	if f.Payload == nil {
		return nil, &confErr{Kind: "bad", Msg: "a frame without payload: " + f.raw}
	}
	if f.Payload.Error != nil {
		return nil, detailsErr(confKindRPC, f.Payload.Error.Code, f.Payload.Error.Data, f.Payload.Error.Message)
	}
	return f.Payload.Result, nil
}

func (d *wsDriver) call(_ context.Context, r confReq) (json.RawMessage, *confErr) {
	frames, e := d.roundTrip(r)
	if e != nil {
		return nil, e
	}
	if len(frames) != 1 {
		return nil, &confErr{Kind: "bad", Msg: fmt.Sprintf("%d frames for a unary call", len(frames))}
	}
	return frameOutcome(frames[0])
}

func (d *wsDriver) stream(_ context.Context, r confReq) ([]json.RawMessage, *confErr) {
	frames, e := d.roundTrip(r)
	if e != nil {
		return nil, e
	}
	var evs []json.RawMessage
	for _, f := range frames {
		if f.Final && f.Payload == nil {
			break
		}
		res, e := frameOutcome(f)
		if e != nil {
			return evs, e
		}
		evs = append(evs, res)
	}
	return evs, nil
}

// redisDriver is Redis Streams JSON-RPC (XPORT-5): a request entry with
// the credentials and version in headers, answers on a reply stream of
// its own under the prefix.
type redisDriver struct {
	t   *testing.T
	rdb *redis.Client
	ids atomic.Int64
}

func (d *redisDriver) roundTrip(ctx context.Context, r confReq) []rrpcEntry {
	corr := fmt.Sprintf("conf-%d", d.ids.Add(1))
	reply := rrpcPrefix + ":conf:" + corr
	hdr := map[string]string{"A2A-Version": r.version()}
	if tok := confTokens[r.Principal]; tok != "" {
		hdr["authorization"] = "Bearer " + tok
	}
	hb, _ := json.Marshal(hdr)
	vals := []any{"correlation_id", corr, "reply_stream", reply, "payload", string(envelope(corr, r)), "headers", string(hb)}
	if err := d.rdb.XAdd(ctx, &redis.XAddArgs{Stream: rrpcRequests, Values: vals}).Err(); err != nil {
		d.t.Fatal(err)
	}
	return rrpcRead(d.t, d.rdb, reply, 1, 30*time.Second)
}

func (d *redisDriver) call(ctx context.Context, r confReq) (json.RawMessage, *confErr) {
	got := d.roundTrip(ctx, r)
	if len(got) != 1 || got[0].Final != "true" {
		return nil, &confErr{Kind: "bad", Msg: fmt.Sprintf("want one final entry, got %+v", got)}
	}
	return rpcOutcome([]byte(got[0].Payload))
}

func (d *redisDriver) stream(ctx context.Context, r confReq) ([]json.RawMessage, *confErr) {
	var evs []json.RawMessage
	for _, e := range d.roundTrip(ctx, r) {
		if e.Final == "true" && strings.Contains(e.Payload, `"final":true`) {
			break
		}
		res, ce := rpcOutcome([]byte(e.Payload))
		if ce != nil {
			return evs, ce
		}
		evs = append(evs, res)
	}
	return evs, nil
}

// stdioDriver is `caddy a2a stdio` (XPORT-4): NDJSON over the pipes of a
// second process, as one trusted principal (--principal). A call as
// another principal (the limits rows) goes to a process of its own,
// started by start on first use.
type stdioDriver struct {
	start func(principal string) *stdioProc
	mu    sync.Mutex // one request at a time: the lines of a call are read in order
	procs map[string]*stdioProc
	ids   atomic.Int64
}

func (d *stdioDriver) lines(r confReq) []stdioReply {
	d.mu.Lock()
	defer d.mu.Unlock()
	principal := r.Principal
	if principal == "" {
		principal = confAlice
	}
	p := d.procs[principal]
	if p == nil {
		if d.procs == nil {
			d.procs = map[string]*stdioProc{}
		}
		p = d.start(principal)
		d.procs[principal] = p
	}
	id := fmt.Sprintf("%q", fmt.Sprintf("s%d", d.ids.Add(1)))
	var idv any
	_ = json.Unmarshal([]byte(id), &idv)
	p.send(string(envelope(idv, r)))
	var out []stdioReply
	for {
		l := p.nextFor(id, nil)
		out = append(out, l)
		if l.Final || !strings.HasPrefix(r.Method, "SendStreaming") && r.Method != a2a.MethodSubscribeToTask && r.Method != "message/stream" && r.Method != "tasks/resubscribe" || l.Error != nil {
			return out
		}
	}
}

// stdioOutcome is the result or error of one stdio line.
func stdioOutcome(l stdioReply) (json.RawMessage, *confErr) {
	if l.Error != nil {
		return nil, detailsErr(confKindRPC, l.Error.Code, l.Error.Data, l.Error.Message)
	}
	return l.Result, nil
}

func (d *stdioDriver) call(_ context.Context, r confReq) (json.RawMessage, *confErr) {
	return stdioOutcome(d.lines(r)[0])
}

func (d *stdioDriver) stream(_ context.Context, r confReq) ([]json.RawMessage, *confErr) {
	var evs []json.RawMessage
	for _, l := range d.lines(r) {
		if l.Final {
			break
		}
		res, e := stdioOutcome(l)
		if e != nil {
			return evs, e
		}
		evs = append(evs, res)
	}
	return evs, nil
}

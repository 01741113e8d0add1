package tests

// Attack (issue 26, "not attacked yet"): HTTP/2 CONTINUATION and HPACK
// floods and rapid resets on the gRPC (h2c) listener (XPORT-2). The
// server must close a connection whose header block grows past its
// header limit, without decoding what it is sent, and keep serving other
// clients.

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/metadata"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// h2Raw is a raw HTTP/2 prior-knowledge (h2c) connection: a reader
// goroutine drains the server's frames and records a GOAWAY or the end.
type h2Raw struct {
	conn   net.Conn
	fr     *http2.Framer
	closed chan struct{}
	goaway atomic.Value // http2.ErrCode
}

// dialH2Raw opens an h2c connection to addr (preface and empty SETTINGS
// sent).
func dialH2Raw(t *testing.T, addr string) *h2Raw {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	// The reader has its own framer: a Framer is not safe for a concurrent
	// read and write.
	h := &h2Raw{conn: conn, fr: http2.NewFramer(conn, nil), closed: make(chan struct{})}
	if err := h.fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	rd := http2.NewFramer(nil, conn)
	go func() {
		defer close(h.closed)
		for {
			f, err := rd.ReadFrame()
			if err != nil {
				return
			}
			if g, ok := f.(*http2.GoAwayFrame); ok {
				h.goaway.Store(g.ErrCode)
			}
		}
	}()
	return h
}

// requestHeaders is the HPACK block of a gRPC request's pseudo-headers.
func requestHeaders(addr string) []byte {
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":authority", addr},
		{":path", "/lf.a2a.v1.A2AService/ListTasks"}, {"content-type", "application/grpc"}, {"a2a-version", "1.0"}} {
		_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	return buf.Bytes()
}

// flood writes HEADERS without END_HEADERS and then CONTINUATION frames
// of frag until the server ends the connection, budget bytes are
// written, or d passes. It returns the bytes written.
func (h *h2Raw) flood(first, frag []byte, budget int, d time.Duration) int {
	_ = h.conn.SetWriteDeadline(time.Now().Add(d))
	if err := h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: first, EndHeaders: false}); err != nil {
		return 0
	}
	written := len(first)
	for written < budget {
		select {
		case <-h.closed:
			return written
		default:
		}
		if err := h.fr.WriteContinuation(1, false, frag); err != nil {
			return written
		}
		written += len(frag)
	}
	return written
}

// literalFlood is 16 KiB of literal header fields without indexing.
func literalFlood() []byte {
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	for buf.Len() < 16<<10-5000 {
		_ = enc.WriteField(hpack.HeaderField{Name: "x-flood", Value: strings.Repeat("v", 4000), Sensitive: true})
	}
	return buf.Bytes()
}

// indexedBomb returns a first block that puts one 4,000-byte header in
// the dynamic table and a 16 KiB fragment of one-byte references to it
// (64 MB decoded per fragment).
func indexedBomb(addr string) (first, frag []byte) {
	var buf bytes.Buffer
	buf.Write(requestHeaders(addr))
	// Literal with incremental indexing, new name: 0x40, name, value.
	name, value := "x-bomb", strings.Repeat("b", 4000)
	buf.WriteByte(0x40)
	buf.Write(hpackString(name))
	buf.Write(hpackString(value))
	// The newest dynamic entry is index 62: 0x80|62 = 0xbe.
	return buf.Bytes(), bytes.Repeat([]byte{0xbe}, 16<<10)
}

// hpackString is an HPACK string literal (no Huffman coding).
func hpackString(s string) []byte {
	var b []byte
	n := len(s)
	if n < 127 {
		return append([]byte{byte(n)}, s...)
	}
	b = append(b, 127)
	n -= 127
	for n >= 128 {
		b = append(b, byte(n%128+128))
		n /= 128
	}
	b = append(b, byte(n))
	return append(b, s...)
}

// TestAttackHTTP2HeaderFloods (XPORT-2, issue 26): on the h2c listener
// that serves gRPC, (1) endless CONTINUATION frames of literal headers,
// (2) an HPACK bomb (one dynamic-table entry referenced by one-byte
// indexes, 64 MB decoded per 16 KiB frame), each on 3 connections at
// once, and (3) 5,000 HEADERS+RST_STREAM pairs (rapid reset). The server
// ends each flooding connection before 16 MiB are written (about 4 MiB
// measured, most of it socket buffers), and a gRPC call
// and /health on other connections answer during and after.
func TestAttackHTTP2HeaderFloods(t *testing.T) {
	t.Parallel()
	gw := harness.StartGatewayWith(t, `a2a {
	card {
		name h2-flood
	}
	auth {
		bearer flood-token
	}
	grpc
}`, harness.Options{Global: "servers {\n\tprotocols h1 h2 h2c\n}"})
	client := grpcRawClient(t, gw.Addr)
	healthy := func(when string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "a2a-version", "1.0", "authorization", "Bearer flood-token"), 5*time.Second)
		defer cancel()
		if _, err := client.ListTasks(ctx, &pb.ListTasksRequest{}); err != nil {
			t.Fatalf("gRPC ListTasks %s: %v", when, err)
		}
		r, err := (&http.Client{Timeout: 5 * time.Second}).Get(gw.URL + "/health")
		if err != nil || r.StatusCode != http.StatusOK {
			t.Fatalf("/health %s: %v %v", when, r, err)
		}
		_ = r.Body.Close()
	}
	healthy("before the floods")
	const budget = 32 << 20
	bombFirst, bombFrag := indexedBomb(gw.Addr)
	cases := []struct {
		name        string
		first, frag []byte
	}{
		{"continuation of literals", requestHeaders(gw.Addr), literalFlood()},
		{"hpack indexed bomb", bombFirst, bombFrag},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			done := make(chan int, 3)
			for range 3 {
				h := dialH2Raw(t, gw.Addr)
				go func() {
					n := h.flood(c.first, c.frag, budget, 10*time.Second)
					select {
					case <-h.closed:
					case <-time.After(5 * time.Second):
						n = -n // still open
					}
					done <- n
				}()
			}
			healthy("during the flood")
			for range 3 {
				n := <-done
				if n < 0 || n >= budget {
					t.Fatalf("%s: the server did not end the connection (%d bytes written, budget %d)", c.name, n, budget)
				}
				// The header-list limit is 1 MiB; the rest is socket buffers.
				if n > 16<<20 {
					t.Fatalf("%s: the server read %.1f MiB of one header block before ending the connection, want under 16 MiB", c.name, float64(n)/(1<<20))
				}
				t.Logf("%s: connection ended by the server after %.1f MiB written", c.name, float64(n)/(1<<20))
			}
		})
	}
	t.Run("rapid reset", func(t *testing.T) {
		h := dialH2Raw(t, gw.Addr)
		hdr := requestHeaders(gw.Addr)
		_ = h.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
		sent := 0
		for i := range 5000 {
			id := uint32(2*i + 1)
			if h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hdr, EndHeaders: true}) != nil ||
				h.fr.WriteRSTStream(id, http2.ErrCodeCancel) != nil {
				break
			}
			sent++
		}
		healthy("after the rapid resets")
		t.Logf("rapid reset: %d HEADERS+RST_STREAM pairs sent; GOAWAY %v", sent, h.goaway.Load())
	})
	healthy("after the floods")
	if out := gw.Output(); strings.Contains(out, "panic") {
		t.Fatalf("the gateway panicked:\n%s", out)
	}
}

package tests

// Attack (issue 26, "not attacked yet"): WebSocket compression bombs on
// the WebSocket binding (XPORT-3). The binding never negotiates
// permessage-deflate, so a compressed frame is a protocol error (close
// 1002) and never inflated; a message over max_message_bytes is closed
// with 1009; neither costs the gateway the inflated size in memory.

import (
	"bufio"
	"bytes"
	"compress/flate"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// rawWS is a hand-written WebSocket client: it sends frames the coder
// library would refuse to build (RSV1 without a negotiated extension).
type rawWS struct {
	conn net.Conn
	br   *bufio.Reader
	resp *http.Response
}

// dialRawWS upgrades on addr+path with the given extra header lines and
// returns the connection after the 101 (it fails the test otherwise).
func dialRawWS(t *testing.T, addr, path string, extra map[string]string) *rawWS {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	var b strings.Builder
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n", path, addr)
	fmt.Fprintf(&b, "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n", base64.StdEncoding.EncodeToString(key))
	for k, v := range extra {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n")
	if _, err := conn.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: HTTP %d, want 101", resp.StatusCode)
	}
	return &rawWS{conn: conn, br: br, resp: resp}
}

// writeFrame writes one masked client frame (FIN set). rsv1 marks it
// compressed (permessage-deflate).
func (w *rawWS) writeFrame(opcode byte, rsv1 bool, payload []byte) error {
	first := 0x80 | opcode
	if rsv1 {
		first |= 0x40
	}
	hdr := []byte{first}
	switch n := len(payload); {
	case n < 126:
		hdr = append(hdr, 0x80|byte(n))
	case n <= 0xffff:
		hdr = append(hdr, 0x80|126, byte(n>>8), byte(n))
	default:
		hdr = append(hdr, 0x80|127)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	mask := []byte{1, 2, 3, 4}
	hdr = append(hdr, mask...)
	body := make([]byte, len(payload))
	for i := range payload {
		body[i] = payload[i] ^ mask[i%4]
	}
	if _, err := w.conn.Write(hdr); err != nil {
		return err
	}
	_, err := w.conn.Write(body)
	return err
}

// closeCode reads server frames until a close frame and returns its
// status code (-1 when the connection ends without one).
func (w *rawWS) closeCode(d time.Duration) int {
	_ = w.conn.SetReadDeadline(time.Now().Add(d))
	for {
		var h [2]byte
		if _, err := io.ReadFull(w.br, h[:]); err != nil {
			return -1
		}
		n := int64(h[1] & 0x7f)
		switch n {
		case 126:
			var e [2]byte
			if _, err := io.ReadFull(w.br, e[:]); err != nil {
				return -1
			}
			n = int64(binary.BigEndian.Uint16(e[:]))
		case 127:
			var e [8]byte
			if _, err := io.ReadFull(w.br, e[:]); err != nil {
				return -1
			}
			n = int64(binary.BigEndian.Uint64(e[:]))
		}
		payload := make([]byte, min(n, 1<<20))
		if _, err := io.ReadFull(w.br, payload); err != nil {
			return -1
		}
		if h[0]&0x0f == 0x8 {
			if len(payload) < 2 {
				return 1005
			}
			return int(binary.BigEndian.Uint16(payload))
		}
	}
}

// deflateBomb returns a raw DEFLATE stream (the permessage-deflate form,
// without the trailing 00 00 ff ff) of size bytes 'a' inside a JSON-RPC
// string. Only the first two MiB are compressed: the sync-flushed block
// of the second MiB decodes to a MiB of 'a' after any MiB of 'a', so it
// is repeated for the rest (compressing 256 MiB at BestCompression took
// most of this test's 26 s in a race build; the inflated bytes are the
// same).
func deflateBomb(t *testing.T, size int) []byte {
	t.Helper()
	var buf bytes.Buffer
	fw, _ := flate.NewWriter(&buf, flate.BestCompression)
	_, _ = fw.Write([]byte(`{"id":"1","payload":{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`))
	chunk := bytes.Repeat([]byte{'a'}, 1<<20)
	_, _ = fw.Write(chunk)
	_ = fw.Flush()
	head := buf.Len()
	_, _ = fw.Write(chunk)
	_ = fw.Flush()
	block := bytes.Clone(buf.Bytes()[head:])
	tail := buf.Len()
	_, _ = fw.Write([]byte(`"}}}`))
	_ = fw.Flush()
	out := bytes.Clone(buf.Bytes()[:head])
	for written := len(chunk); written < size; written += len(chunk) {
		out = append(out, block...)
	}
	out = append(out, buf.Bytes()[tail:]...)
	return bytes.TrimSuffix(out, []byte{0, 0, 0xff, 0xff})
}

// TestDeflateBombInflates: deflateBomb's repeated block inflates to the
// size asked for (checked on 4 MiB; the attack test sends 64 and 256).
func TestDeflateBombInflates(t *testing.T) {
	t.Parallel()
	const size = 4 << 20
	r := flate.NewReader(bytes.NewReader(append(deflateBomb(t, size), 0, 0, 0xff, 0xff)))
	got, err := io.ReadAll(r)
	if err != nil && err != io.ErrUnexpectedEOF { // no final block: the permessage-deflate form
		t.Fatal(err)
	}
	head, rest, ok := bytes.Cut(got, []byte(`"params":{"id":"`))
	body, ok2 := bytes.CutSuffix(rest, []byte(`"}}}`))
	if !ok || !ok2 || !bytes.HasPrefix(head, []byte(`{"id":"1"`)) || len(body) != size || len(bytes.Trim(body, "a")) != 0 {
		t.Fatalf("the bomb inflated to %d bytes (want %d 'a' in a GetTask request)", len(got), size)
	}
}

// heapInuse reads go_memstats_heap_inuse_bytes from the admin /metrics.
func heapInuse(t *testing.T, gw *harness.Gateway) float64 {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(gw.AdminURL + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "go_memstats_heap_inuse_bytes "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return f
			}
		}
	}
	t.Fatalf("no go_memstats_heap_inuse_bytes in /metrics")
	return 0
}

// TestAttackWebSocketCompressionBomb (XPORT-3, issue 26): 8 variants of a
// permessage-deflate bomb and an oversized message. Each connection is
// closed (1002 for a compressed frame, 1009 for a message over the
// limit), the gateway's heap does not grow by the inflated sizes, and the
// binding still serves a normal client afterwards.
func TestAttackWebSocketCompressionBomb(t *testing.T) {
	t.Parallel()
	gw := harness.StartGatewayWith(t, `a2a {
	card {
		name ws-bomb
	}
	auth {
		bearer bomb-token
	}
	websocket /ws {
		max_message_bytes 1MiB
	}
}`, harness.Options{Admin: true})
	hdr := map[string]string{"Authorization": "Bearer bomb-token", "A2A-Version": "1.0"}
	before := heapInuse(t, gw)

	offers := []string{
		"permessage-deflate",
		"permessage-deflate; client_max_window_bits",
		"permessage-deflate; client_no_context_takeover; server_no_context_takeover",
		"x-webkit-deflate-frame",
	}
	// Four offers × a 64 MiB and a 256 MiB bomb: the offer is never
	// accepted; the RSV1 frame is a protocol error.
	bombs := map[int][]byte{64 << 20: deflateBomb(t, 64<<20), 256 << 20: deflateBomb(t, 256<<20)}
	variants := 0
	for _, offer := range offers {
		for size, bomb := range bombs {
			variants++
			h := map[string]string{"Sec-WebSocket-Extensions": offer}
			for k, v := range hdr {
				h[k] = v
			}
			w := dialRawWS(t, gw.Addr, "/ws", h)
			if ext := w.resp.Header.Get("Sec-WebSocket-Extensions"); ext != "" {
				t.Fatalf("offer %q: the server accepted extension %q; the binding must not negotiate compression", offer, ext)
			}
			_ = w.writeFrame(0x1, true, bomb)
			if code := w.closeCode(10 * time.Second); code != 1002 && code != -1 {
				t.Fatalf("offer %q, %d MiB bomb (%d bytes compressed): close %d, want 1002 (protocol error) or a dropped connection", offer, size>>20, len(bomb), code)
			} else {
				t.Logf("offer %q, %d MiB bomb in %d bytes: close %d", offer, size>>20, len(bomb), code)
			}
			_ = w.conn.Close()
		}
	}
	// An uncompressed message just over the limit: 1009.
	for _, n := range []int{1<<20 + 1, 3 << 20} {
		variants++
		w := dialRawWS(t, gw.Addr, "/ws", hdr)
		msg := append([]byte(`{"id":"1","payload":"`), bytes.Repeat([]byte("a"), n)...)
		_ = w.writeFrame(0x1, false, msg)
		if code := w.closeCode(10 * time.Second); code != 1009 {
			t.Fatalf("%d-byte message over a 1 MiB limit: close %d, want 1009", len(msg), code)
		}
		_ = w.conn.Close()
	}
	after := heapInuse(t, gw)
	t.Logf("%d variants; heap in use %.1f MiB before, %.1f MiB after", variants, before/(1<<20), after/(1<<20))
	if after-before > 48<<20 {
		t.Fatalf("heap in use grew by %.1f MiB over the bombs (inflated sizes 64/256 MiB): the gateway inflated them", (after-before)/(1<<20))
	}
	// The binding still serves.
	c := dialWS(t, wsURL(gw.URL, "/ws"), http.Header{"Authorization": {"Bearer bomb-token"}, "A2A-Version": {"1.0"}}, nil)
	c.request("ok", "ListTasks", map[string]any{}, nil)
	if frames := c.waitFinal(`"ok"`, 10*time.Second); len(frames) == 0 || frames[len(frames)-1].Payload == nil || frames[len(frames)-1].Payload.Error != nil {
		t.Fatalf("ListTasks after the bombs: %v", frames)
	}
}

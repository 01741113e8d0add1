package harness

import (
	"fmt"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// StartRedis starts a throwaway redis-server (no persistence) on a free
// loopback port, waits until it answers PING, and kills it at cleanup. It
// skips the test when redis-server is not installed (fails under CI=true).
func StartRedis(t testing.TB) string {
	t.Helper()
	bin := NeedTool(t, "redis-server", "the Redis end-to-end tests")
	port := FreePort(t)
	dir := t.TempDir()
	out := &SyncBuffer{}
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if reply, err := RedisCommand(addr, "PING"); err == nil && reply == "+PONG" {
			return addr
		}
		select {
		case <-done:
			t.Fatalf("redis-server exited:\n%s", out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("redis-server did not answer PING:\n%s", out.String())
	return ""
}

// RedisCommand sends one command over a new connection using RESP and
// returns the first reply line (e.g. "+OK", "$3" followed by data is
// returned as the bulk string's content, ":1", "-ERR …").
func RedisCommand(addr string, args ...string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := conn.Write([]byte(b.String())); err != nil {
		return "", err
	}
	buf := make([]byte, 64*1024)
	var got []byte
	for {
		n, err := conn.Read(buf)
		got = append(got, buf[:n]...)
		if s := string(got); strings.HasSuffix(s, "\r\n") {
			if strings.HasPrefix(s, "$") {
				head, rest, _ := strings.Cut(s, "\r\n")
				if head == "$-1" {
					return "(nil)", nil
				}
				var n int
				fmt.Sscanf(head, "$%d", &n)
				if len(rest) >= n+2 {
					return rest[:n], nil
				}
			} else {
				return strings.TrimSuffix(s, "\r\n"), nil
			}
		}
		if err != nil {
			return "", err
		}
	}
}

// RedisStoreGlobal is the global a2a block (Options.Global) of a gateway
// that shares the Redis at addr through `store redis`: its own data_dir
// ({{DIR}}/a2a-data), key prefix "e2e:", then storeLines inside the store
// block (e.g. "instance_lease 2s").
func RedisStoreGlobal(addr string, storeLines ...string) string {
	var b strings.Builder
	b.WriteString("a2a {\n\tdata_dir {{DIR}}/a2a-data\n\tstore redis {\n\t\turl redis://" + addr + "/0\n\t\tkey_prefix e2e:\n")
	for _, l := range storeLines {
		b.WriteString("\t\t" + l + "\n")
	}
	b.WriteString("\t}\n}")
	return b.String()
}

// StartRedisGateways starts n gateways on site (StartGatewayWith with
// opts) that share the Redis at addr (StartRedis, or a server the test
// restarts) through `store redis`, each with its own data directory: opts
// gets Global RedisStoreGlobal(addr, storeLines...).
func StartRedisGateways(t testing.TB, addr string, n int, site string, opts Options, storeLines ...string) []*Gateway {
	t.Helper()
	opts.Global = RedisStoreGlobal(addr, storeLines...)
	gws := make([]*Gateway, n)
	for i := range gws {
		gws[i] = StartGatewayWith(t, site, opts)
	}
	return gws
}

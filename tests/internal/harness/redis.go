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
	out := &syncBuffer{}
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

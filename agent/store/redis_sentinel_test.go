package store

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// testSentinel is a redis-sentinel watching the package's test
// redis-server as master "a2a", so that the store conformance suite runs
// through the Sentinel URL form too (SCALE-3, issue 32).
var testSentinel struct {
	once sync.Once
	addr string
	err  error
	cmd  *exec.Cmd
	dir  string
}

func stopSentinel() {
	if testSentinel.cmd != nil {
		_ = syscall.Kill(-testSentinel.cmd.Process.Pid, syscall.SIGKILL)
		_ = testSentinel.cmd.Wait()
	}
	if testSentinel.dir != "" {
		_ = os.RemoveAll(testSentinel.dir)
	}
}

// newTestSentinel opens a Redis store through
// redis+sentinel://<sentinel>/a2a/0 with a fresh key prefix.
func newTestSentinel(t testing.TB) *Redis {
	t.Helper()
	master := redisAddr(t)
	testSentinel.once.Do(func() { testSentinel.addr, testSentinel.err = startSentinel(master) })
	if testSentinel.err != nil {
		t.Fatal(testSentinel.err)
	}
	s, err := OpenRedis(context.Background(), RedisOptions{
		URLs:      []string{"redis+sentinel://" + testSentinel.addr + "/a2a/0"},
		KeyPrefix: fmt.Sprintf("s%d:", testRedis.seq.Add(1)),
	})
	if err != nil {
		t.Fatalf("OpenRedis (sentinel): %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func startSentinel(master string) (string, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", fmt.Errorf("redis-server is required: %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	testSentinel.dir, _ = os.MkdirTemp("", "a2a-store-sentinel")
	host, mport, _ := strings.Cut(master, ":")
	conf := filepath.Join(testSentinel.dir, "sentinel.conf")
	body := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor a2a %s %s 1\nsentinel down-after-milliseconds a2a 60000\n",
		port, testSentinel.dir, host, mport)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		return "", err
	}
	cmd := exec.Command(bin, conf, "--sentinel")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	testSentinel.cmd = cmd
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	sc := redis.NewSentinelClient(&redis.Options{Addr: addr})
	defer sc.Close()
	for range 400 {
		if got, err := sc.GetMasterAddrByName(context.Background(), "a2a").Result(); err == nil && len(got) == 2 && got[1] == mport {
			return addr, nil
		}
		time.Sleep(25 * time.Millisecond)
	}
	return "", fmt.Errorf("redis-sentinel on %s did not name the master", addr)
}

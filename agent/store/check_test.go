package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestSQLiteCheck(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "data", "a2a.db"), SQLiteOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.Check(ctx); err != nil {
		t.Fatalf("Check on an open store: %v", err)
	}
	d := NewDeferred()
	if err := d.Check(ctx); !errors.Is(err, ErrNotOpen) {
		t.Fatalf("Deferred.Check before Open = %v, want ErrNotOpen", err)
	}
	if err := d.Open(s); err != nil {
		t.Fatal(err)
	}
	if err := d.Check(ctx); err != nil {
		t.Fatalf("Deferred.Check once open: %v", err)
	}
	if d.Capabilities().Checker == nil || d.Capabilities().Lease != nil {
		t.Fatal("SQLite capabilities: want a Checker and no Lease")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Check(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("Deferred.Check once closed = %v, want ErrClosed", err)
	}
	if err := s.Check(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("SQLite.Check once closed = %v, want ErrClosed", err)
	}
}

func TestDeferredCheckFailed(t *testing.T) {
	d := NewDeferred()
	boom := errors.New("open failed")
	d.Fail(boom)
	if err := d.Check(context.Background()); !errors.Is(err, boom) {
		t.Fatalf("Check of a failed Deferred = %v", err)
	}
}

// ownRedis runs a redis-server on port (0: a free one) that the test
// kills; it returns the address and the kill function.
func ownRedis(t *testing.T, port int) (string, func()) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is required: %v", err)
	}
	if port == 0 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port = l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
	}
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	kill := func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-done }
	t.Cleanup(kill)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for range 200 {
		if c, err := net.Dial("tcp", addr); err == nil {
			_ = c.Close()
			return addr, kill
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatal("redis-server did not listen")
	return "", nil
}

// TestRedisCheck: PING and the lease follow a Redis that stops and comes
// back on the same port (OPS-8).
func TestRedisCheck(t *testing.T) {
	addr, kill := ownRedis(t, 0)
	ctx := context.Background()
	var s *Redis
	var err error
	for range 40 { // the server may not answer PING yet
		s, err = OpenRedis(ctx, RedisOptions{URLs: []string{"redis://" + addr + "/0"}, InstanceLease: time.Second})
		if err == nil {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	caps := s.Capabilities()
	if caps.Checker == nil || caps.Lease == nil {
		t.Fatal("Redis capabilities: want a Checker and a Lease")
	}
	check := func() error {
		c, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		return s.Check(c)
	}
	if err := check(); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if err := s.CheckLease(time.Now()); err != nil {
		t.Fatalf("CheckLease: %v", err)
	}
	kill()
	start := time.Now()
	if err := check(); err == nil {
		t.Fatal("Check with Redis stopped: nil")
	} else if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Check with Redis stopped = %v, want ErrUnavailable", err)
	}
	// The probe client neither retries nor backs off: a refused
	// connection fails the check at once, well within its timeout.
	if d := time.Since(start); d > 300*time.Millisecond {
		t.Fatalf("Check with Redis stopped took %v", d)
	}
	if err := s.CheckLease(time.Now().Add(time.Second)); !errors.Is(err, ErrLeaseExpired) {
		t.Fatalf("CheckLease a lease later = %v, want ErrLeaseExpired", err)
	}
	port := addr[len("127.0.0.1:"):]
	var p int
	fmt.Sscan(port, &p)
	ownRedis(t, p)
	deadline := time.Now().Add(5 * time.Second)
	for check() != nil || s.CheckLease(time.Now()) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("not ready again after Redis came back: %v / %v", check(), s.CheckLease(time.Now()))
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = s.Close()
	if err := s.Check(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("Check once closed = %v, want ErrClosed", err)
	}
}

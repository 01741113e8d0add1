package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// OPS-6: the lock is exclusive (a second holder is refused at once, even
// in the same process), private, names its owner and is free again after
// Close.
func TestLockDirExclusive(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	l, err := LockDir(dir)
	if err != nil {
		t.Fatalf("LockDir: %v", err)
	}
	fi, err := os.Stat(filepath.Join(dir, LockFileName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("lock file: %v %v, want mode 0600", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, LockFileName)); strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock file holds %q, want the pid %d", b, os.Getpid())
	}
	start := time.Now()
	if l2, err := LockDir(dir); !errors.Is(err, ErrDirLocked) {
		_ = l2.Close()
		t.Fatalf("second LockDir: %v, want ErrDirLocked", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("second LockDir blocked %v", d)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, LockFileName)); strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("the refused locker rewrote the lock file: %q", b)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	_ = l.Close() // twice is fine
	l3, err := LockDir(dir)
	if err != nil {
		t.Fatalf("LockDir after Close: %v", err)
	}
	_ = l3.Close()
}

// A Deferred store recovers nothing before Open, makes callers wait for
// Open (or their context), then forwards; Close wakes waiters.
func TestDeferredStore(t *testing.T) {
	d := NewDeferred()
	if n, err := d.FailInterrupted(context.Background(), "x", time.Now()); n != 0 || err != nil {
		t.Fatalf("FailInterrupted before Open: %d %v", n, err)
	}
	if err := d.PutTaskNoWait("o", mkTask("t0", "c", a2a.TaskStateWorking, time.Now())); !errors.Is(err, ErrNotOpen) {
		t.Fatalf("PutTaskNoWait before Open: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	_, err := d.GetTask(ctx, "o", "t1")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("GetTask before Open: %v, want the context's error", err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := d.GetTask(context.Background(), "o", "t1")
		got <- err
	}()
	s, _ := newTestStore(t)
	mustPut(t, s, "o", mkTask("t2", "c", a2a.TaskStateWorking, time.Now()))
	if err := d.Open(s); err != nil {
		t.Fatal(err)
	}
	if err := <-got; !errors.Is(err, ErrNotFound) {
		t.Fatalf("waiting GetTask: %v, want ErrNotFound from the store", err)
	}
	if n, err := d.FailInterrupted(context.Background(), "x", time.Now()); n != 1 || err != nil {
		t.Fatalf("FailInterrupted after Open: %d %v, want 1", n, err)
	}
	if err := d.Open(s); err == nil {
		t.Error("a second Open succeeded")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	never := NewDeferred()
	waiting := make(chan error, 1)
	go func() { waiting <- never.Wait(context.Background()) }()
	if err := never.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-waiting; !errors.Is(err, ErrClosed) {
		t.Fatalf("Wait on a closed, never opened store: %v", err)
	}
}

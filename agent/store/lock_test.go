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

// A Deferred store has no store before Open (ErrNotOpen, no optional
// part, nothing to recover), makes Wait and its push store wait for Open
// (or their context), then hands out the Capabilities the store resolved
// at Open; Close closes that store and wakes waiters.
func TestDeferredStore(t *testing.T) {
	d := NewDeferred()
	caps := d.Capabilities()
	if n, err := caps.Store.FailInterrupted(context.Background(), "x", time.Now()); n != 0 || err != nil {
		t.Fatalf("FailInterrupted before Open: %d %v", n, err)
	}
	if _, err := caps.Store.GetTask(context.Background(), "o", "t1"); !errors.Is(err, ErrNotOpen) {
		t.Fatalf("GetTask before Open: %v", err)
	}
	if caps.NoWait != nil || caps.Push != nil || caps.Events != nil || caps.Sent != nil {
		t.Fatalf("optional parts before Open: %+v", caps)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	_, err := d.Push().GetPushConfig(ctx, "o", "t1", "p")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("push store before Open: %v, want the context's error", err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := d.Push().GetPushConfig(context.Background(), "o", "t1", "p")
		got <- err
	}()
	s, _ := newTestStore(t)
	if err := d.Open(s); err != nil {
		t.Fatal(err)
	}
	if err := <-got; !errors.Is(err, ErrNotFound) {
		t.Fatalf("waiting GetPushConfig: %v, want ErrNotFound from the store", err)
	}
	if c := d.Capabilities(); c.Store != Store(s) || c.Push != PushStore(s) || c.Shared != nil {
		t.Fatalf("Capabilities after Open: %+v, want the SQLite store's", c)
	}
	if err := d.Open(s); err == nil {
		t.Error("a second Open succeeded")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetTask(context.Background(), "o", "t1"); !errors.Is(err, ErrClosed) {
		t.Fatalf("the store after the Deferred's Close: %v, want ErrClosed", err)
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
	if _, err := never.Capabilities().Store.GetTask(context.Background(), "o", "t1"); !errors.Is(err, ErrClosed) {
		t.Fatalf("the Store of a closed, never opened Deferred: %v", err)
	}
}

// OPS-9: a data directory that cannot be created is named, with the OS
// reason.
func TestLockDirNamesPathAndReason(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(file, "data")
	_, err := LockDir(dir)
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("LockDir(%s) = %v, want the path and the OS reason", dir, err)
	}
}

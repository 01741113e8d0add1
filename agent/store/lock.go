package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// LockFileName is the lock file LockDir takes in a data directory.
const LockFileName = "lock"

// ErrDirLocked is returned by LockDir when another process holds the lock
// of the directory.
var ErrDirLocked = errors.New("the directory is locked by another process")

// DirLock is an exclusive lock on a data directory (OPS-6), held until
// Close. It is advisory: it keeps out other processes that take it (every
// caddy-a2a gateway does before it opens the store), not other programs.
type DirLock struct {
	f *os.File
}

// LockDir creates dir (mode 0700) when missing and takes an exclusive,
// non-blocking lock on dir/lock (created with mode 0600). It returns
// ErrDirLocked, at once, when another process (or another DirLock of this
// process) holds it. The lock file then holds the owner's pid, for
// diagnostics. The lock goes away with the process, even on kill -9.
func LockDir(dir string) (*DirLock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create the data directory %s: %w", dir, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, LockFileName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot open the lock file %s: %w", filepath.Join(dir, LockFileName), err)
	}
	if err := lockFile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	// Only the owner rewrites the file, so a loser never truncates it.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &DirLock{f: f}, nil
}

// Close releases the lock. It is safe to call on a nil lock and twice.
func (l *DirLock) Close() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the descriptor releases the lock
	l.f = nil
	return err
}

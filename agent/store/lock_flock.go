//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package store

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes flock(LOCK_EX|LOCK_NB) on f. flock locks belong to the
// open file description: a second descriptor of the same file, even in
// this process, conflicts, and the kernel drops the lock when the last
// descriptor is closed (process exit included).
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return ErrDirLocked
		default:
			return errors.New("cannot lock the data directory: " + err.Error())
		}
	}
}

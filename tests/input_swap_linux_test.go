package tests

import "golang.org/x/sys/unix"

// ihSwap atomically exchanges the directory entries a and b
// (renameat2 RENAME_EXCHANGE), as fast as a racing attacker can.
func ihSwap(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

package agent

import "golang.org/x/sys/unix"

// swapPaths atomically exchanges the directory entries a and b
// (renameat2 RENAME_EXCHANGE), the fastest swap a racing attacker has.
func swapPaths(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

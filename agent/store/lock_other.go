//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package store

import "os"

// lockFile is a no-op where flock is not available (Windows and other
// systems): the data directory's single owner is not enforced there; run
// one gateway per data directory.
func lockFile(*os.File) error { return nil }

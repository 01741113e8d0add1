//go:build unix

package backends

import "syscall"

// signalGroup sends sig to the process group pgid.
func signalGroup(pgid int, sig syscall.Signal) { _ = syscall.Kill(-pgid, sig) }

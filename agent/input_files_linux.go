package agent

import (
	"os"
	"strconv"
	"strings"
)

// fdPath returns the kernel's path of the open file f, read from
// /proc/self/fd without changing the descriptor's mode. ok is false when
// /proc is not available or the file was unlinked since it was opened.
func fdPath(f *os.File) (string, bool) {
	sc, err := f.SyscallConn()
	if err != nil {
		return "", false
	}
	var p string
	var rerr error
	if err := sc.Control(func(fd uintptr) {
		p, rerr = os.Readlink("/proc/self/fd/" + strconv.FormatUint(uint64(fd), 10))
	}); err != nil || rerr != nil {
		return "", false
	}
	if !strings.HasPrefix(p, "/") || strings.HasSuffix(p, " (deleted)") {
		return "", false
	}
	return p, true
}

//go:build unix

package agent

import (
	"os"
	"syscall"
)

// linkInfo returns the device and link count of fi.
func linkInfo(fi os.FileInfo) (dev uint64, links uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(st.Dev), uint64(st.Nlink), true //nolint:unconvert // widths differ by platform
}

//go:build !unix

package agent

import "os"

// linkInfo reports no link count on this platform (Windows keeps it out of
// os.FileInfo): DeniesFile then skips the identity check and only the path
// rules of INPUT-1a apply to file parts.
func linkInfo(os.FileInfo) (dev uint64, links uint64, ok bool) { return 0, 0, false }

//go:build !linux

package agent

import "os"

// fdPath has no descriptor-to-path lookup on this platform: openedPath
// falls back to resolving the path and comparing it with the descriptor.
func fdPath(*os.File) (string, bool) { return "", false }

//go:build unix && !linux

package caddymodule

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// lockAddress takes the address lock as a locked file in the user's
// directory under the system temporary directory (flock: released when
// the process dies). Gateways of other users or with another TMPDIR are
// not seen.
func lockAddress(key string) (io.Closer, error) {
	dir := filepath.Join(os.TempDir(), "caddy-a2a-"+strconv.Itoa(os.Getuid()), lockName(key))
	l, err := store.LockDir(dir)
	if errors.Is(err, store.ErrDirLocked) {
		return nil, errAddressTaken
	}
	return l, err
}

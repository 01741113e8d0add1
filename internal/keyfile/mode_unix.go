//go:build unix

package keyfile

import "io/fs"

// permissive reports whether perm grants group or others any access.
func permissive(perm fs.FileMode) bool { return perm&0o077 != 0 }

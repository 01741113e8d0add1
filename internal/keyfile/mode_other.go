//go:build !unix

package keyfile

import "io/fs"

// permissive is false where the file mode has no group and other bits
// (Windows reports 0666 or 0444 whatever the ACL says): protect the key
// with the platform's access control lists instead.
func permissive(fs.FileMode) bool { return false }

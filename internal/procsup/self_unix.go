//go:build unix && !linux

package procsup

import "os"

// selfExe is the running binary's path.
func selfExe() (string, error) { return os.Executable() }

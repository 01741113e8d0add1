//go:build linux

package procsup

// selfExe is the running binary: /proc/self/exe opens it even when the
// file was replaced or removed on disk since (an upgrade in place).
func selfExe() (string, error) { return "/proc/self/exe", nil }

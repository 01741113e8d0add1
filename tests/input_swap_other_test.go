//go:build !linux

package tests

import "os"

// ihSwap exchanges the directory entries a and b through a third name
// (this platform has no RENAME_EXCHANGE).
func ihSwap(a, b string) error {
	tmp := a + ".tmp"
	if err := os.Rename(a, tmp); err != nil {
		return err
	}
	if err := os.Rename(b, a); err != nil {
		return err
	}
	return os.Rename(tmp, b)
}

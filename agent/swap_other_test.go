//go:build !linux

package agent

import "os"

// swapPaths exchanges the directory entries a and b through a third name
// (not atomic: this platform has no RENAME_EXCHANGE).
func swapPaths(a, b string) error {
	tmp := a + ".swap"
	if err := os.Rename(a, tmp); err != nil {
		return err
	}
	if err := os.Rename(b, a); err != nil {
		return err
	}
	return os.Rename(tmp, b)
}

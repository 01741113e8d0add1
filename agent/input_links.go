package agent

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// maxLinkScan bounds the directory entries DeniesFile visits for one file;
// beyond it the file is refused (fail closed).
const maxLinkScan = 100_000

// errScanDone stops a walk early.
var errScanDone = errors.New("scan done")

// DeniesFile reports whether the opened file fi is one of the denied
// files under another name: a hard link made inside a workspace to the
// push key ring, a database or a signing key (INPUT-1a). A path check
// cannot see it, so the file's identity (device and inode) is compared
// with every regular file of the denied paths on the same device. Only a
// file with more than one link can be such a name, so files with one link
// (nearly all) cost nothing. Where the platform reports no link count
// (linkInfo), the check is skipped: there only the path rules apply.
func (d *DenyList) DeniesFile(fi os.FileInfo) bool {
	dev, links, ok := linkInfo(fi)
	if !ok || links <= 1 || d == nil {
		return false
	}
	seen := 0
	for _, root := range d.Paths() {
		rfi, err := os.Lstat(root)
		if err != nil {
			continue
		}
		if rdev, _, ok := linkInfo(rfi); ok && rdev != dev {
			continue
		}
		found, err := scanForFile(root, fi, dev, &seen)
		if found || err != nil {
			return true // err: the scan hit its bound; refuse
		}
	}
	return false
}

// scanForFile walks root (a file or a directory, not following symlinks
// and not crossing onto other devices) for a regular file that is fi;
// seen counts the entries visited across calls, an error says the bound
// was hit.
func scanForFile(root string, fi os.FileInfo, dev uint64, seen *int) (bool, error) {
	found := false
	err := filepath.WalkDir(root, func(_ string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable entries cannot be read as input either
		}
		if *seen++; *seen > maxLinkScan {
			return errScanDone
		}
		info, err := e.Info()
		if err != nil {
			return nil
		}
		if d, _, ok := linkInfo(info); ok && d != dev {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if info.Mode().IsRegular() && os.SameFile(info, fi) {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	if found {
		return true, nil
	}
	return false, err
}

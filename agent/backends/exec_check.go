package backends

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// CheckProgram reports, at provision rather than at the first turn
// (OPS-9), why the program Argv[0] could not be started: a name without a
// slash is looked up in the gateway's PATH (as the start does), a relative
// path is taken from dir (the default workspace, where a turn naming no
// cwd starts it), and the file must be a regular file with an execute bit.
// The error names the program and the OS reason.
func (e *Exec) CheckProgram(dir string) error {
	if len(e.Argv) == 0 || e.Argv[0] == "" {
		return errors.New("exec: a command is required")
	}
	prog := e.Argv[0]
	if !strings.ContainsRune(prog, '/') && !strings.ContainsRune(prog, filepath.Separator) {
		if _, err := exec.LookPath(prog); err != nil {
			var ee *exec.Error
			if errors.As(err, &ee) {
				err = ee.Err
			}
			return fmt.Errorf("exec: program %q: %w", prog, err)
		}
		return nil
	}
	path := prog
	if !filepath.IsAbs(path) && dir != "" {
		path = filepath.Join(dir, path)
	}
	fi, err := os.Stat(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("exec: program %q: %w", path, err)
	}
	switch {
	case fi.IsDir():
		return fmt.Errorf("exec: program %q: is a directory", path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("exec: program %q: not a regular file", path)
	case runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("exec: program %q: not executable (mode %04o)", path, fi.Mode().Perm())
	}
	return nil
}

package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// ErrInvalidWorkspace is returned for a cwd that is not an absolute, existing
// directory inside an allowed root. Its text never includes the path.
var ErrInvalidWorkspace = errors.New("invalid workspace")

// Workspace resolves and checks the working directory a turn runs in
// (INPUT-1): an absolute, existing directory inside one of the allowed roots,
// after symlinks are resolved.
type Workspace struct {
	// Default is the directory used when a message names none.
	Default string
	// Roots are the allowed directories (symlinks resolved).
	Roots []string
}

// DefaultWorkspace uses the process's working directory as the default, and
// as roots the list in IACCODE_A2A_ALLOWED_CWDS (OS path-list separator) or
// else the working directory and the system temp dir.
func DefaultWorkspace() *Workspace {
	wd, _ := os.Getwd()
	var roots []string
	if env := os.Getenv("IACCODE_A2A_ALLOWED_CWDS"); env != "" {
		roots = filepath.SplitList(env)
	} else {
		roots = []string{wd, os.TempDir()}
	}
	return NewWorkspace(wd, roots)
}

// NewWorkspace returns a workspace with the given default and roots; roots
// that do not resolve are dropped.
func NewWorkspace(def string, roots []string) *Workspace {
	w := &Workspace{}
	for _, r := range roots {
		if r == "" {
			continue
		}
		if abs, err := filepath.Abs(r); err == nil {
			if res, err := filepath.EvalSymlinks(abs); err == nil {
				w.Roots = append(w.Roots, res)
			}
		}
	}
	if def != "" {
		if res, err := filepath.EvalSymlinks(def); err == nil {
			def = res
		}
	}
	w.Default = def
	return w
}

// Resolve returns the real path of cwd ("" means the default), or
// ErrInvalidWorkspace.
func (w *Workspace) Resolve(cwd string) (string, error) {
	if cwd == "" {
		return w.Default, nil
	}
	if !filepath.IsAbs(cwd) {
		return "", ErrInvalidWorkspace
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(cwd))
	if err != nil {
		return "", ErrInvalidWorkspace
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", ErrInvalidWorkspace
	}
	if !w.Contains(real) {
		return "", ErrInvalidWorkspace
	}
	return real, nil
}

// Contains reports whether the resolved path p lies inside an allowed root.
func (w *Workspace) Contains(p string) bool {
	for _, root := range w.Roots {
		if p == root || strings.HasPrefix(p, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// ErrInvalidWorkspace is returned for a cwd that is not an absolute, existing
// directory inside an allowed root. Its text never includes the path.
var ErrInvalidWorkspace = errors.New("invalid workspace")

// Workspace resolves and checks the working directory a turn runs in
// (INPUT-1): an absolute, existing directory inside one of the allowed roots,
// after symlinks are resolved, and outside the gateway's state (INPUT-1a).
type Workspace struct {
	// Default is the directory used when a message names none (and its
	// context is not bound yet). It must itself be a valid workspace.
	Default string
	// Roots are the allowed directories (symlinks resolved).
	Roots []string
	// Denied holds the gateway's state paths: no workspace lies in them and
	// no input reads them, whatever Roots say (INPUT-1a). Directories that
	// hold the StateMarker file are denied even when nil.
	Denied *DenyList
}

// DefaultWorkspace uses the process's working directory as the default, and
// as roots the list in IACCODE_A2A_ALLOWED_CWDS (OS path-list separator) or
// else the working directory and the system temp dir.
func DefaultWorkspace() *Workspace {
	wd, _ := os.Getwd()
	return NewWorkspace(wd, DefaultRoots(wd))
}

// DefaultRoots returns the allowed roots when none are configured: the list
// in IACCODE_A2A_ALLOWED_CWDS (OS path-list separator), else wd and the
// system temp dir.
func DefaultRoots(wd string) []string {
	if env := os.Getenv("IACCODE_A2A_ALLOWED_CWDS"); env != "" {
		return filepath.SplitList(env)
	}
	return []string{wd, os.TempDir()}
}

// NewWorkspace returns a workspace with the given default and roots; roots
// that do not resolve are dropped. A relative default is taken relative to
// the working directory; symlinks in it are resolved.
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
		if abs, err := filepath.Abs(def); err == nil {
			def = abs
		}
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
	if !w.Contains(real) || w.Denied.Denies(real) {
		return "", ErrInvalidWorkspace
	}
	return real, nil
}

// CheckDefault reports whether the default workspace is itself valid: an
// existing directory inside the roots and outside the gateway's state.
func (w *Workspace) CheckDefault() error {
	if w.Default == "" {
		return ErrInvalidWorkspace
	}
	_, err := w.Resolve(w.Default)
	return err
}

// Contains reports whether the resolved path p lies inside an allowed root.
func (w *Workspace) Contains(p string) bool {
	for _, root := range w.Roots {
		if within(p, root) {
			return true
		}
	}
	return false
}

// Readable reports whether input may read the resolved path p: inside an
// allowed root and not a gateway state path (INPUT-1a).
func (w *Workspace) Readable(p string) bool {
	return w.Contains(p) && !w.Denied.Denies(p)
}

// StateMarker is the name of the marker file every gateway data directory
// holds (MarkStateDir). A file whose resolved path has an ancestor
// directory holding it — this gateway's data directory or any other
// instance's — is never read through input and no workspace lies there
// (INPUT-1a).
const StateMarker = ".caddy-a2a-state"

// alwaysDenied are kernel views of the process (its environment, memory and
// descriptors) that are never input, whatever the roots say.
var alwaysDenied = []string{"/proc"}

// MarkStateDir writes the StateMarker file into dir (a gateway data
// directory), unless it is there already.
func MarkStateDir(dir string) error {
	p := filepath.Join(dir, StateMarker)
	if _, err := os.Lstat(p); err == nil {
		return nil
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot write the state marker in the data directory: %w", err)
	}
	_, werr := f.WriteString("caddy-a2a data directory: never readable through A2A input (INPUT-1a).\n")
	return errors.Join(werr, f.Close())
}

// DenyList is a set of gateway state paths (files or directories, symlinks
// resolved when added) that input never reads (INPUT-1a). It is safe for
// concurrent use; paths are only ever added.
type DenyList struct {
	mu    sync.RWMutex
	paths []string
}

// NewDenyList returns a list holding paths (see Add).
func NewDenyList(paths ...string) *DenyList {
	d := &DenyList{}
	d.Add(paths...)
	return d
}

// Add denies paths: each is made absolute and its symlinks are resolved
// (for a path that does not exist yet, those of its longest existing
// parent), and both the given and the resolved form are kept. Empty paths
// are ignored.
func (d *DenyList) Add(paths ...string) {
	var add []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		add = append(add, abs)
		if res := resolveExisting(abs); res != abs {
			add = append(add, res)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range add {
		dup := false
		for _, q := range d.paths {
			if q == p {
				dup = true
				break
			}
		}
		if !dup {
			d.paths = append(d.paths, p)
		}
	}
}

// Paths returns a copy of the denied paths.
func (d *DenyList) Paths() []string {
	if d == nil {
		return nil
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	return append([]string(nil), d.paths...)
}

// Denies reports whether the resolved path p is a denied path or lies
// inside one, lies in /proc, or has an ancestor directory (p itself
// included) holding the StateMarker file. A nil list checks the last two.
func (d *DenyList) Denies(p string) bool {
	for _, q := range alwaysDenied {
		if within(p, q) {
			return true
		}
	}
	if d != nil {
		d.mu.RLock()
		for _, q := range d.paths {
			if within(p, q) {
				d.mu.RUnlock()
				return true
			}
		}
		d.mu.RUnlock()
	}
	return markedAncestor(p)
}

// markedAncestor reports whether p or one of its parents holds StateMarker.
func markedAncestor(p string) bool {
	for dir := filepath.Clean(p); ; {
		if _, err := os.Lstat(filepath.Join(dir, StateMarker)); err == nil {
			return true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}

// resolveExisting resolves the symlinks of p, or of its longest existing
// parent when p does not exist (the rest is appended as given).
func resolveExisting(p string) string {
	if res, err := filepath.EvalSymlinks(p); err == nil {
		return res
	}
	parent := filepath.Dir(p)
	if parent == p {
		return p
	}
	return filepath.Join(resolveExisting(parent), filepath.Base(p))
}

// within reports whether the resolved path p is dir or inside it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

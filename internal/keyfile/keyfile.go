// Package keyfile holds the one rule for the private key files the gateway
// reads (the push key ring, push and card signing keys): a key file must be
// a regular file that neither its group nor others can read or write (mode
// 0600 or stricter), and it is read with a size bound. Errors name the file
// by its base name and give its mode and the fix; they never hold the key.
// TLS keys are Caddy's.
package keyfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/caddy-a2a/caddy-a2a/internal/limitio"
)

// Read opens the key file at path, checks it with Check and reads at most
// max bytes of it (a larger file is an error). A missing file's error
// matches fs.ErrNotExist.
func Read(path string, max int64) ([]byte, error) {
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		oe := &openError{name: name}
		if errors.Is(err, fs.ErrNotExist) {
			oe.cause = fs.ErrNotExist
		}
		return nil, oe
	}
	defer f.Close()
	if err := Check(f, name); err != nil {
		return nil, err
	}
	b, err := limitio.ReadAll(f, max)
	if limitio.IsTooLarge(err) {
		return nil, fmt.Errorf("key file %q: %w", name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("key file %q: cannot read the file", name)
	}
	return b, nil
}

// Check applies the key-file rule to the open file f, named name in
// errors: a regular file whose permission bits grant nothing to group or
// others (where the platform has such bits; see permissive).
func Check(f *os.File, name string) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("key file %q: cannot read the file", name)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("key file %q: not a regular file", name)
	}
	if perm := st.Mode().Perm(); permissive(perm) {
		return &ModeError{Name: name, Mode: perm}
	}
	return nil
}

// ModeError is the refusal of a key file that group or others can access.
type ModeError struct {
	// Name is the file's base name.
	Name string
	// Mode is its permission bits.
	Mode fs.FileMode
}

// Error implements error.
func (e *ModeError) Error() string {
	return fmt.Sprintf("key file %q has mode %04o: a private key must not be accessible by group or others (run: chmod 600 %s)", e.Name, uint32(e.Mode), e.Name)
}

// ErrMode matches every ModeError with errors.Is.
var ErrMode = errors.New("key file accessible by group or others")

// Is reports whether target is ErrMode.
func (e *ModeError) Is(target error) bool { return target == ErrMode }

// openError is a key file that could not be opened; it matches
// fs.ErrNotExist with errors.Is when the file does not exist, and its text
// names the file by its base name only.
type openError struct {
	name  string
	cause error
}

// Error implements error.
func (e *openError) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("key file %q: the file does not exist", e.name)
	}
	return fmt.Sprintf("key file %q: cannot open the file", e.name)
}

// Unwrap returns fs.ErrNotExist for a missing file, else nil.
func (e *openError) Unwrap() error { return e.cause }

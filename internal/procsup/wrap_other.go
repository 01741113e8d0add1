//go:build !unix

package procsup

import "os/exec"

// Tree is the handle on one supervised process tree; there is none on
// this platform (see the package documentation). A nil *Tree is valid.
type Tree struct{}

// Wrap leaves cmd alone: there is no supervisor on this platform; only
// the program itself is stopped.
func Wrap(cmd *exec.Cmd) (*Tree, error) { return nil, cmd.Err }

// Started does nothing here.
func (t *Tree) Started() {}

// Kill does nothing here.
func (t *Tree) Kill() {}

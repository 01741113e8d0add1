//go:build unix && !linux

package procsup

import "syscall"

// becomeSubreaper: there is no child subreaper here; processes that leave
// the group are re-parented to init and survive.
func becomeSubreaper() {}

// programAttr keeps the program in the supervisor's group (no
// parent-death signal outside Linux).
func programAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// killDescendants signals the group without the supervisor: not possible
// without /proc, so the group kill of the gateway (after the program
// exits) or of killTree (after the gateway died) does it.
func killDescendants() {}

//go:build unix

package agent

import "syscall"

// nonblockFlag opens files without blocking (a FIFO must not hang a read).
const nonblockFlag = syscall.O_NONBLOCK

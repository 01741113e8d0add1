//go:build linux

package caddymodule

import (
	"errors"
	"io"
	"net"
	"syscall"
)

// lockAddress takes the address lock as an abstract Unix socket: no file
// to clean up, released by the kernel when the process dies (kill -9
// included), and scoped to the network namespace, like the TCP port it
// stands for.
func lockAddress(key string) (io.Closer, error) {
	ln, err := net.Listen("unix", "@"+lockName(key))
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, errAddressTaken
	}
	if err != nil {
		return nil, errors.New("cannot create the address lock socket")
	}
	return ln, nil
}

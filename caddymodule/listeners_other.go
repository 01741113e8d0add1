//go:build !unix

package caddymodule

import "io"

// lockAddress takes no lock: Caddy does not set SO_REUSEPORT here, so the
// second gateway's bind already fails.
func lockAddress(string) (io.Closer, error) { return nopCloser{}, nil }

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

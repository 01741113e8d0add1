package store

import (
	"context"
	"crypto/rand"
	"errors"
)

// PageTokenKey returns the 32-byte page-token key every instance on this
// Redis shares (so a page token from one instance is accepted by all). The
// first caller creates it with SETNX; the others read that one.
func (s *Redis) PageTokenKey(ctx context.Context) ([]byte, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, errors.New("generating the page-token key failed")
	}
	if err := s.c.SetNX(ctx, s.pageKeyKey(), key, 0).Err(); err != nil {
		return nil, s.opErr("storing the page-token key", err)
	}
	got, err := s.c.Get(ctx, s.pageKeyKey()).Bytes()
	if err != nil {
		return nil, s.opErr("reading the page-token key", err)
	}
	if len(got) < 32 {
		return nil, errors.New("the page-token key in redis is shorter than 32 bytes")
	}
	return got[:32], nil
}

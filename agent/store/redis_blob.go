package store

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

var _ BlobStore = (*Redis)(nil)

func (s *Redis) blobKey(sha string) string { return s.p + "{b:" + keyPart(sha) + "}" }

// PutBlob stores an artifact payload as a Redis string under its sha256
// (content-addressed: an existing value is left alone).
func (s *Redis) PutBlob(ctx context.Context, sha string, b []byte) error {
	if err := s.live(); err != nil {
		return err
	}
	if int64(len(b)) > s.maxBlob {
		return ErrBlobTooLarge
	}
	if err := s.c.SetNX(ctx, s.blobKey(sha), b, 0).Err(); err != nil {
		return s.opErr("storing a payload", err)
	}
	return nil
}

// GetBlob returns a payload, or ErrNotFound.
func (s *Redis) GetBlob(ctx context.Context, sha string) ([]byte, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	b, err := s.c.Get(ctx, s.blobKey(sha)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, s.opErr("reading a payload", err)
	}
	return b, nil
}

// MaxBlobBytes is the cap of one payload (max_shared_blob_bytes).
func (s *Redis) MaxBlobBytes() int64 { return s.maxBlob }

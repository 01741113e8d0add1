package store

import (
	"context"
	"errors"
	"time"

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
	// Every store of a payload (also of one already there) marks it used
	// now: the retention pass removes payloads unused for longer than the
	// task retention (OPS-5), as the SQLite store's file times do.
	if err := s.c.ZAdd(ctx, s.blobUseKey(), redis.Z{Score: float64(time.Now().UnixMilli()), Member: sha}).Err(); err != nil {
		return s.opErr("storing a payload", err)
	}
	return nil
}

// blobUseKey is the sorted set of payload hashes scored by last use (ms).
func (s *Redis) blobUseKey() string { return s.p + "{bu}:z" }

// pruneBlobUseScript takes up to ARGV[2] payloads unused since before
// ARGV[1] off the use set and returns their hashes; with ARGV[3] "1" it
// only lists them. KEYS[1] the use set.
var pruneBlobUseScript = redis.NewScript(`
local shas = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
if ARGV[3] ~= '1' then
  for _, sha in ipairs(shas) do redis.call('ZREM', KEYS[1], sha) end
end
return shas
`)

// pruneBlobs removes the payloads unused since before cut, a batch at a
// time (the use set first, then the payload: a payload stored again in
// between is marked used again and kept locally by its instance).
func (s *Redis) pruneBlobs(ctx context.Context, cut time.Time, batch int, dry string) (int, error) {
	n := 0
	for ctx.Err() == nil {
		shas, err := pruneBlobUseScript.Run(ctx, s.c, []string{s.blobUseKey()}, cut.UnixMilli(), batch, dry).StringSlice()
		if err != nil {
			return n, s.opErr("pruning payloads", err)
		}
		n += len(shas)
		if dry == "1" {
			return n, nil
		}
		for _, sha := range shas {
			if err := s.c.Del(ctx, s.blobKey(sha)).Err(); err != nil {
				return n, s.opErr("pruning payloads", err)
			}
		}
		if len(shas) < batch {
			return n, nil
		}
	}
	return n, ctx.Err()
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

package store

import (
	"context"
	"errors"
)

// ErrLocalBlobs is returned by a BlobStore whose store is not shared: the
// payloads stay in the data directory only (SQLite).
var ErrLocalBlobs = errors.New("payloads are kept in the data directory only")

// ErrBlobTooLarge is returned by PutBlob for a payload over the store's
// max_shared_blob_bytes.
var ErrBlobTooLarge = errors.New("payload larger than max_shared_blob_bytes")

// BlobStore is implemented by shared stores that keep artifact payloads,
// content-addressed by their hex sha256, so that a download works from any
// instance (SCALE-1). The data directory stays the local copy.
type BlobStore interface {
	// PutBlob stores b under its sha256 (the caller computed it);
	// ErrBlobTooLarge beyond the store's cap.
	PutBlob(ctx context.Context, sha string, b []byte) error
	// GetBlob returns the payload, or ErrNotFound.
	GetBlob(ctx context.Context, sha string) ([]byte, error)
	// MaxBlobBytes is the cap of one payload.
	MaxBlobBytes() int64
}

// PutBlob forwards to the open store (ErrLocalBlobs when it keeps none).
func (d *Deferred) PutBlob(ctx context.Context, sha string, b []byte) error {
	s, err := d.get(ctx)
	if err != nil {
		return err
	}
	if bs, ok := s.(BlobStore); ok {
		return bs.PutBlob(ctx, sha, b)
	}
	return ErrLocalBlobs
}

// GetBlob forwards to the open store (ErrLocalBlobs when it keeps none).
func (d *Deferred) GetBlob(ctx context.Context, sha string) ([]byte, error) {
	s, err := d.get(ctx)
	if err != nil {
		return nil, err
	}
	if bs, ok := s.(BlobStore); ok {
		return bs.GetBlob(ctx, sha)
	}
	return nil, ErrLocalBlobs
}

// MaxBlobBytes is the open store's cap, 0 before Open or without blobs.
func (d *Deferred) MaxBlobBytes() int64 {
	s, err := d.now()
	if err != nil {
		return 0
	}
	if bs, ok := s.(BlobStore); ok {
		return bs.MaxBlobBytes()
	}
	return 0
}

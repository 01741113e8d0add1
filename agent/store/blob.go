package store

import (
	"context"
	"errors"
)

// ErrBlobTooLarge is returned by PutBlob for a payload over the store's
// max_shared_blob_bytes.
var ErrBlobTooLarge = errors.New("payload larger than max_shared_blob_bytes")

// BlobStore is implemented by shared stores that keep artifact payloads,
// content-addressed by their hex sha256, so that a download works from any
// instance (SCALE-1). The data directory stays the local copy; without
// it (SQLite, no Capabilities.Blobs) it is the only one.
type BlobStore interface {
	// PutBlob stores b under its sha256 (the caller computed it);
	// ErrBlobTooLarge beyond the store's cap.
	PutBlob(ctx context.Context, sha string, b []byte) error
	// GetBlob returns the payload, or ErrNotFound.
	GetBlob(ctx context.Context, sha string) ([]byte, error)
	// MaxBlobBytes is the cap of one payload.
	MaxBlobBytes() int64
}

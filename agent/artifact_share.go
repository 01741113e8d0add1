package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// Artifact payloads in a shared store (SCALE-1): a payload written to the
// data directory is also put in the store when it keeps blobs (Redis), so
// that /artifacts/… works on every instance; an instance that lacks the
// file fetches it from the store into its own directory (content-addressed
// and checked against its sha256) and serves it from there.

// sharedBlobTimeout bounds one payload transfer to or from the store.
const sharedBlobTimeout = 30 * time.Second

// shareArtifact puts a stored payload in the shared store. A payload over
// max_shared_blob_bytes fails the turn with a clear error.
func (s *Service) shareArtifact(ctx context.Context, sha string, b []byte) error {
	bs := s.st.caps().Blobs
	if bs == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, sharedBlobTimeout)
	defer cancel()
	err := bs.PutBlob(ctx, sha, b)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrBlobTooLarge):
		return protocolErrorf("artifact payload of %d bytes exceeds the shared store's max_shared_blob_bytes (%d)", len(b), bs.MaxBlobBytes())
	}
	return errors.New("storing an artifact payload in the shared store failed")
}

// openSharedArtifact fetches a payload this instance does not hold from
// the shared store into its artifact directory and opens it.
func (s *Service) openSharedArtifact(ctx context.Context, sha string) (*os.File, bool) {
	bs := s.st.caps().Blobs
	if bs == nil {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(ctx, sharedBlobTimeout)
	defer cancel()
	b, err := bs.GetBlob(ctx, sha)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.cfg.Logger.Warn("reading an artifact payload from the shared store", errField(err))
		}
		return nil, false
	}
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:]) != sha {
		s.cfg.Logger.Error("shared artifact payload does not match its sha256", zap.String("sha256", sha))
		return nil, false
	}
	if _, err := putArtifact(s.cfg.ArtifactDir, b); err != nil {
		s.cfg.Logger.Warn("caching a shared artifact payload", errField(err))
		return nil, false
	}
	f, err := os.Open(artifactPath(s.cfg.ArtifactDir, sha))
	return f, err == nil
}

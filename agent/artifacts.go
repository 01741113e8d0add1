package agent

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
)

// Artifact payloads (TURN-7) are stored content-addressed under
// Config.ArtifactDir as <dir>/<sha256[:2]>/<sha256>, mode 0600. The task
// records the artifact as a url part with metadata.<ns>.{mediaType,
// byteSize, sha256}; the HTTP route /artifacts/{taskId}/{artifactId} finds
// the bytes through that sha256.

// storedArtifact is a payload artifact stored during the current turn.
type storedArtifact struct {
	sha       string
	size      int64
	mediaType string
	filename  string
}

var (
	artifactIDRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	sha256Re     = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// artifactPath returns where the payload with this hex sha256 lives.
func artifactPath(dir, sha string) string {
	return filepath.Join(dir, sha[:2], sha)
}

// putArtifact stores b content-addressed under dir and returns its sha256.
func putArtifact(dir string, b []byte) (string, error) {
	sum := sha256.Sum256(b)
	sha := hex.EncodeToString(sum[:])
	p := artifactPath(dir, sha)
	if fi, err := os.Stat(p); err == nil && fi.Size() == int64(len(b)) {
		// Reused: its modification time is its last reference, which
		// retention goes by (OPS-5).
		now := time.Now()
		_ = os.Chtimes(p, now, now)
		return sha, nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", errors.New("creating the artifact directory failed")
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return "", errors.New("creating an artifact file failed")
	}
	tmp := f.Name()
	_, werr := f.Write(b)
	cerr := f.Close()
	if werr != nil || cerr != nil {
		_ = os.Remove(tmp)
		return "", errors.New("writing an artifact file failed")
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		_ = os.Remove(tmp)
		return "", errors.New("writing an artifact file failed")
	}
	if err := os.Rename(tmp, p); err != nil {
		_ = os.Remove(tmp)
		return "", errors.New("writing an artifact file failed")
	}
	return sha, nil
}

// payloadBytes decodes the payload of an artifact event, refusing anything
// over max before decoding it.
func payloadBytes(ev backend.Event, max int64) ([]byte, error) {
	switch {
	case ev.Base64 != "":
		if int64(base64.StdEncoding.DecodedLen(len(ev.Base64))) > max+2 {
			return nil, protocolErrorf("artifact payload exceeds %d bytes", max)
		}
		b, err := base64.StdEncoding.DecodeString(ev.Base64)
		if err != nil {
			return nil, protocolErrorf("artifact base64 is invalid")
		}
		if int64(len(b)) > max {
			return nil, protocolErrorf("artifact payload exceeds %d bytes", max)
		}
		return b, nil
	default:
		if int64(len(ev.Text)) > max {
			return nil, protocolErrorf("artifact payload exceeds %d bytes", max)
		}
		return []byte(ev.Text), nil
	}
}

// storePayload stores the payload of an artifact event (appending to the
// artifact's earlier payload of this turn when ev.Append) and returns the
// url part and metadata that record it on the task.
func (s *Service) storePayload(r *run, ts *turnState, id string, ev backend.Event) (a2a.Part, map[string]any, error) {
	if s.cfg.ArtifactDir == "" {
		return a2a.Part{}, nil, errors.New("artifact payloads need an artifact directory")
	}
	if ev.MediaType == "" {
		return a2a.Part{}, nil, protocolErrorf("artifact payload without mediaType")
	}
	b, err := payloadBytes(ev, s.cfg.MaxArtifactBytes)
	if err != nil {
		return a2a.Part{}, nil, err
	}
	prev, hasPrev := ts.stored[id]
	if ev.Append && hasPrev {
		if prev.size+int64(len(b)) > s.cfg.MaxArtifactBytes {
			return a2a.Part{}, nil, protocolErrorf("artifact payload exceeds %d bytes", s.cfg.MaxArtifactBytes)
		}
		old, err := os.ReadFile(artifactPath(s.cfg.ArtifactDir, prev.sha))
		if err != nil {
			return a2a.Part{}, nil, errors.New("reading an artifact file failed")
		}
		b = append(old, b...)
	}
	sha, err := putArtifact(s.cfg.ArtifactDir, b)
	if err != nil {
		return a2a.Part{}, nil, err
	}
	if err := s.shareArtifact(context.Background(), sha, b); err != nil {
		return a2a.Part{}, nil, err
	}
	sa := storedArtifact{sha: sha, size: int64(len(b)), mediaType: mediaBase(ev.MediaType), filename: safeFilename(ev.Filename)}
	if sa.filename == "" && hasPrev {
		sa.filename = prev.filename
	}
	if ts.stored == nil {
		ts.stored = map[string]storedArtifact{}
	}
	ts.stored[id] = sa
	link := s.artifactLink(r, ts, id, sha, false)
	md := map[string]any{"mediaType": sa.mediaType, "byteSize": sa.size, "sha256": sha}
	part := a2a.Part{URL: link, MediaType: sa.mediaType, Filename: sa.filename}
	return part, map[string]any{s.cfg.Namespace: md}, nil
}

// artifactLink returns the URL of a stored artifact file: with
// artifact_urls file its file:// URL; otherwise /artifacts/{taskId}/{artifactId}
// on the gateway, or /artifacts/{taskId}/{artifactId}/{sha256} for a
// stored part that is not the artifact's own payload (bySHA).
func (s *Service) artifactLink(r *run, ts *turnState, id, sha string, bySHA bool) string {
	if s.cfg.ArtifactURLs == "file" {
		return (&url.URL{Scheme: "file", Path: artifactPath(s.cfg.ArtifactDir, sha)}).String()
	}
	taskID, _ := r.ids()
	link := strings.TrimSuffix(ts.baseURL, "/") + "/artifacts/" + url.PathEscape(taskID) + "/" + url.PathEscape(id)
	if bySHA {
		link += "/" + sha
	}
	return link
}

// storeRawParts applies inline_artifact_bytes to the raw parts of an
// artifact event (TURN-7): a raw part up to InlineArtifactBytes stays
// inline; a larger one (or an empty one, which has no inline JSON form) is
// stored like a payload and becomes a url part with mediaType, filename and
// metadata.<ns>.{mediaType, byteSize, sha256}. The first part stored for a
// new artifact (not an append) is the artifact's payload: its URL is
// /artifacts/{taskId}/{artifactId} and the artifact carries the same
// metadata, exactly as for a base64 payload. Further stored parts are linked
// by their sha256. Without an artifact directory raw parts stay inline.
func (s *Service) storeRawParts(r *run, ts *turnState, id string, parts []a2a.Part, appendParts bool) ([]a2a.Part, map[string]any, error) {
	if s.cfg.ArtifactDir == "" {
		return parts, nil, nil
	}
	var artMD map[string]any
	for i, p := range parts {
		if p.Kind() != "raw" || (len(p.Raw) > 0 && int64(len(p.Raw)) <= s.cfg.InlineArtifactBytes) {
			continue
		}
		if int64(len(p.Raw)) > s.cfg.MaxArtifactBytes {
			return nil, nil, protocolErrorf("artifact raw part exceeds %d bytes", s.cfg.MaxArtifactBytes)
		}
		sha, err := putArtifact(s.cfg.ArtifactDir, p.Raw)
		if err != nil {
			return nil, nil, err
		}
		if err := s.shareArtifact(context.Background(), sha, p.Raw); err != nil {
			return nil, nil, err
		}
		mt := mediaBase(p.MediaType)
		if mt == "" {
			mt = "application/octet-stream"
		}
		md := map[string]any{"mediaType": mt, "byteSize": int64(len(p.Raw)), "sha256": sha}
		own := !appendParts && artMD == nil
		if own {
			artMD = map[string]any{s.cfg.Namespace: md}
		}
		pmd := map[string]any{}
		for k, v := range p.Metadata {
			pmd[k] = v
		}
		pmd[s.cfg.Namespace] = md
		parts[i] = a2a.Part{URL: s.artifactLink(r, ts, id, sha, !own), MediaType: mt, Filename: safeFilename(p.Filename), Metadata: pmd}
	}
	return parts, artMD, nil
}

// ArtifactFile is a stored artifact payload as the service hands it to a
// binding: the open file (the caller closes it) and what to serve it as.
type ArtifactFile struct {
	// File is the payload, opened read-only.
	File *os.File
	// SHA256 is the payload's hex sha256 (its ETag).
	SHA256 string
	// MediaType is the payload's media type (application/octet-stream when
	// none was recorded).
	MediaType string
	// Filename is the file name recorded for the payload ("" = none).
	Filename string
}

// errArtifactNotFound is the answer for every artifact that cannot be
// served: unknown, of another owner, or without a stored payload.
var errArtifactNotFound = errors.New("artifact not found")

// OpenArtifact opens a stored artifact payload of one of the caller's tasks
// (TURN-7): the artifact's own payload, or with partSHA one of its stored
// raw parts. Any failure is one error, so that the artifacts of other
// owners cannot be told from missing ones.
func (s *Service) OpenArtifact(ctx context.Context, call Call, ref ArtifactRef) (*ArtifactFile, error) {
	taskID, artifactID, partSHA := ref.TaskID, ref.ArtifactID, ref.PartSHA
	byPart := partSHA != ""
	if checkID("id", taskID) != nil || !artifactIDRe.MatchString(artifactID) || (byPart && !sha256Re.MatchString(partSHA)) {
		return nil, errArtifactNotFound
	}
	t, err := s.loadTask(ctx, s.owner(call.Principal), taskID)
	if err != nil {
		return nil, errArtifactNotFound
	}
	var sha, mediaType, filename string
	for _, a := range t.Artifacts {
		if a.ArtifactID != artifactID {
			continue
		}
		if byPart {
			// A stored part linked by its sha256 (a large raw part): the
			// gateway recorded it in the part's metadata.<ns>.
			for _, p := range a.Parts {
				if md, _ := p.Metadata[s.cfg.Namespace].(map[string]any); md["sha256"] == partSHA {
					sha, filename = partSHA, p.Filename
					mediaType, _ = md["mediaType"].(string)
				}
			}
			continue
		}
		md, _ := a.Metadata[s.cfg.Namespace].(map[string]any)
		sha, _ = md["sha256"].(string)
		mediaType, _ = md["mediaType"].(string)
		for _, p := range a.Parts {
			if pmd, _ := p.Metadata[s.cfg.Namespace].(map[string]any); pmd["sha256"] == sha && sha != "" {
				filename = p.Filename // the stored part itself
				break
			}
			if p.Filename != "" {
				filename = p.Filename
			}
		}
	}
	if !sha256Re.MatchString(sha) || s.cfg.ArtifactDir == "" {
		return nil, errArtifactNotFound
	}
	f, err := os.Open(artifactPath(s.cfg.ArtifactDir, sha))
	if err != nil {
		var ok bool
		if f, ok = s.openSharedArtifact(ctx, sha); !ok { // SCALE-1
			return nil, errArtifactNotFound
		}
	}
	if mediaType == "" {
		mediaType = "application/octet-stream"
	}
	return &ArtifactFile{File: f, SHA256: sha, MediaType: mediaType, Filename: filename}, nil
}

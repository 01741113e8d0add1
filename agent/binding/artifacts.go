package binding

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/httpx"
)

// serveArtifact answers GET/HEAD /artifacts/{taskId}/{artifactId} (the
// artifact's payload) and /artifacts/{taskId}/{artifactId}/{sha256} (one of
// its stored raw parts) for the task's owner, with ETag (the sha256) and
// Range support.
func (h *Handler) serveArtifact(w http.ResponseWriter, r *http.Request, principal string) bool {
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/artifacts/")
	if !ok {
		return false
	}
	notFound := func() {
		httpx.WriteJSON(w, http.StatusNotFound, map[string]string{"error": "Artifact not found"})
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		httpx.WriteJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "Method not allowed"})
		return true
	}
	taskEsc, artEsc, ok := strings.Cut(rest, "/")
	artEsc, partSHA, byPart := strings.Cut(artEsc, "/")
	taskID, err1 := url.PathUnescape(taskEsc)
	artID, err2 := url.PathUnescape(artEsc)
	if !ok || err1 != nil || err2 != nil || (byPart && partSHA == "") {
		notFound()
		return true
	}
	ref := agent.ArtifactRef{TaskID: taskID, ArtifactID: artID, PartSHA: partSHA}
	af, err := h.h.OpenArtifact(r.Context(), h.tc.NewCall(r, agent.BindingREST, principal, ""), ref)
	if err != nil {
		notFound()
		return true
	}
	defer af.File.Close()
	fi, err := af.File.Stat()
	if err != nil {
		notFound()
		return true
	}
	w.Header().Set("Content-Type", af.MediaType)
	w.Header().Set("Etag", strconv.Quote(af.SHA256))
	w.Header().Set("Cache-Control", "private, max-age=0, must-revalidate")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if af.Filename != "" {
		w.Header().Set("Content-Disposition", "attachment; filename="+strconv.Quote(af.Filename))
	}
	http.ServeContent(w, r, "", fi.ModTime(), io.NewSectionReader(af.File, 0, fi.Size()))
	return true
}

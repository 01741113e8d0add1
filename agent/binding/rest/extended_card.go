package rest

import (
	"net/http"
	"strconv"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/card"
)

// writeExtendedCard answers GET /extendedAgentCard (A2A 1.0 §13.3,
// CARD-8): the card with `Cache-Control: private, max-age=N` (the public
// card's max-age), a strong ETag of the exact bytes, Vary on the credential
// headers (the card may differ per caller), and 304 Not Modified when
// If-None-Match names that ETag. Errors are answered as any other.
func (h *Handler) writeExtendedCard(w http.ResponseWriter, r *http.Request, res any, err error) {
	if err != nil {
		writeRESTResult(w, nil, err)
		return
	}
	b, err := a2a.MarshalJSONValue(res)
	if err != nil {
		writeRESTError(w, a2a.ErrInternal(), 0)
		return
	}
	cc := h.tc.ExtendedCardCache
	etag := card.ETag(b)
	hdr := w.Header()
	hdr.Set("Cache-Control", "private, max-age="+strconv.FormatInt(int64(cc.MaxAge/time.Second), 10))
	hdr.Set("Etag", etag)
	for _, v := range cc.Vary {
		hdr.Add("Vary", v)
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" && card.ETagMatches(inm, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hdr.Set("Content-Type", "application/json") // A2A 1.0 §11.1 (RPC-15)
	_, _ = w.Write(b)
}

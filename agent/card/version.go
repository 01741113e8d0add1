package card

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"

	"go.uber.org/zap"
)

// previousCards remembers, process-wide and per card name, the content
// hash and version of the card last given to NewHandler, so a reload that
// changes the card without bumping its version is noticed.
var previousCards = struct {
	sync.Mutex
	m map[string][2]string
}{m: map[string][2]string{}}

// warnUnbumpedVersion logs a warning when the card's content changed
// since the previous handler of its name but its version did not (bump
// the version whenever the card changes).
func (h *Handler) warnUnbumpedVersion() {
	cfg := h.cfg
	version := cfg.Version
	if version == "" {
		version = DefaultVersion // what the card advertises
	}
	cfg.Version = ""
	b, err := json.Marshal(struct {
		C Config
		S *Security
		P bool
		T []string
		E int
	}{cfg, h.opts.Security, h.opts.PushNotifications, h.opts.ThinkingTypes, h.opts.EventLogSize})
	if err != nil {
		return
	}
	sum := sha256.Sum256(b)
	hash := hex.EncodeToString(sum[:])
	previousCards.Lock()
	defer previousCards.Unlock()
	prev, seen := previousCards.m[h.cfg.Name]
	if len(previousCards.m) > 256 {
		clear(previousCards.m)
	}
	previousCards.m[h.cfg.Name] = [2]string{hash, version}
	if seen && prev[0] != hash && prev[1] == version {
		h.logger.Warn("agent card content changed but its version did not; bump card version so clients notice",
			zap.String("card", h.cfg.Name), zap.String("version", version))
	}
}

package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/caddy-a2a/caddy-a2a/agent/backend"
)

// storeInputs writes the raw/data attachments under dir/<taskID>/ (0600)
// and sets their Path, so exec backends can read them.
func storeInputs(dir, taskID string, atts []backend.Attachment) error {
	if dir == "" {
		return nil
	}
	for i := range atts {
		a := &atts[i]
		if a.Source == "file" || a.Data == nil {
			continue
		}
		sub := filepath.Join(dir, taskID)
		if err := os.MkdirAll(sub, 0o700); err != nil {
			return fmt.Errorf("creating the input directory: %w", errors.Unwrap(err))
		}
		name := a.Filename
		if name == "" {
			name = "input"
		}
		p := filepath.Join(sub, fmt.Sprintf("%d-%s", a.Part, name))
		if err := os.WriteFile(p, a.Data, 0o600); err != nil {
			return errors.New("writing an input file failed")
		}
		a.Path = p
	}
	return nil
}

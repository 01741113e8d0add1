package agent

import (
	"encoding/json"
	"unicode/utf8"
)

// maxTraceField bounds tool input/result and thinking text in metadata (TURN-6).
const maxTraceField = 4000

// setIf sets m[k] to v unless v is nil or the empty string.
func setIf(m map[string]any, k string, v any) {
	switch x := v.(type) {
	case string:
		if x == "" {
			return
		}
	case nil:
		return
	}
	m[k] = v
}

// truncate cuts s to maxTraceField characters (runes).
func truncate(s string) string {
	if utf8.RuneCountInString(s) <= maxTraceField {
		return s
	}
	return string([]rune(s)[:maxTraceField])
}

// truncJSON renders a JSON value for metadata: strings and small values as
// they are, anything longer than the limit as truncated text.
func truncJSON(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return truncate(string(raw))
	}
	if str, ok := v.(string); ok {
		return truncate(str)
	}
	if utf8.RuneCount(raw) > maxTraceField {
		return truncate(string(raw))
	}
	return v
}

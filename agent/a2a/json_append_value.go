package a2a

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// This file holds the value encoders of the append-style JSON encoder
// (json_append.go): strings, bytes, raw JSON and free-form metadata, each
// writing exactly what encoding/json.Marshal writes (issue 17). A false
// result means the value is one encoding/json would refuse or one this
// encoder does not know: the caller then falls back to encoding/json for
// the whole value, so errors stay encoding/json's own.

const hexDigits = "0123456789abcdef"

// jsonSafe[b] reports whether the ASCII byte b is written as is inside a
// JSON string by encoding/json with HTML escaping on (its htmlSafeSet):
// not a control character, '"', '\\', '<', '>' or '&'.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = true
	}
	for _, b := range `"\<>&` {
		t[b] = false
	}
	return t
}()

// appendJSONString appends s as a JSON string, escaped as encoding/json
// escapes it (HTML-safe; U+2028 and U+2029 escaped; invalid UTF-8 as
// \ufffd).
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if jsonSafe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendJSONBytes appends b as encoding/json writes a []byte: a string of
// its standard base64, or null for a nil slice.
func appendJSONBytes(dst, b []byte) []byte {
	if b == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

// appendJSONStrings appends a []string (null when nil).
func appendJSONStrings(dst []byte, ss []string) []byte {
	if ss == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, s)
	}
	return append(dst, ']')
}

// appendRawJSON appends raw JSON as encoding/json writes a json.RawMessage:
// compacted, with <, >, &, U+2028 and U+2029 escaped; false when raw is not
// valid JSON (encoding/json's error). A nil raw is null.
func appendRawJSON(dst []byte, raw json.RawMessage) ([]byte, bool) {
	if raw == nil {
		return append(dst, "null"...), true
	}
	if !needsCompacting(raw) {
		if !json.Valid(raw) {
			return dst, false
		}
		return append(dst, raw...), true
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return dst, false
	}
	return appendHTMLEscaped(dst, buf.Bytes()), true
}

// needsCompacting reports whether raw holds a byte that compacting with
// HTML escaping may change: white space, <, >, & or the first byte of
// U+2028/U+2029.
func needsCompacting(raw []byte) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r', '<', '>', '&', 0xE2:
			return true
		}
	}
	return false
}

// appendHTMLEscaped appends compact JSON with <, >, &, U+2028 and U+2029
// escaped, as encoding/json.HTMLEscape does.
func appendHTMLEscaped(dst, src []byte) []byte {
	start := 0
	for i, c := range src {
		if c == '<' || c == '>' || c == '&' {
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			start = i + 1
		}
		if c == 0xE2 && i+2 < len(src) && src[i+1] == 0x80 && src[i+2]&^1 == 0xA8 {
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[src[i+2]&0xF])
			start = i + len("\u2029")
		}
	}
	return append(dst, src[start:]...)
}

// maxAnyDepth bounds the nesting appendAny follows itself; deeper values
// (or a cyclic map) go to encoding/json, which detects cycles.
const maxAnyDepth = 32

// appendMetadata appends a metadata map (the caller omits an empty one).
func appendMetadata(dst []byte, m map[string]any) ([]byte, bool) {
	return appendAnyMap(dst, m, 0)
}

// appendAnyMap appends a map[string]any with its keys sorted, as
// encoding/json does (null when nil). The metadata the service writes
// nests one-member objects ({namespace: {"tool": {…}}}): those are written
// without sorting, in a small frame (the recursion is on the turn
// goroutine's stack, issue 17).
func appendAnyMap(dst []byte, m map[string]any, depth int) ([]byte, bool) {
	if m == nil {
		return append(dst, "null"...), true
	}
	if depth > maxAnyDepth {
		return dst, false
	}
	switch len(m) {
	case 0:
		return append(dst, "{}"...), true
	case 1:
		k, v := onlyEntry(m)
		dst = appendJSONString(append(dst, '{'), k)
		dst, ok := appendAny(append(dst, ':'), v, depth+1)
		return append(dst, '}'), ok
	}
	return appendSortedMap(dst, m, depth)
}

// onlyEntry returns the entry of a one-member map.
//
//go:noinline
func onlyEntry(m map[string]any) (string, any) {
	for k, v := range m {
		return k, v
	}
	return "", nil
}

// appendSortedMap appends a map of several members, keys sorted.
//
//go:noinline
func appendSortedMap(dst []byte, m map[string]any, depth int) ([]byte, bool) {
	var arr [8]string
	keys := sortedKeys(m, arr[:0])
	dst = append(dst, '{')
	var ok bool
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, k)
		dst = append(dst, ':')
		if dst, ok = appendAny(dst, m[k], depth+1); !ok {
			return dst, false
		}
	}
	return append(dst, '}'), true
}

// sortedKeys appends the keys of m to keys, sorted. It is a function of
// its own so the map iterator is not in appendAnyMap's frame while it
// recurses: the turn goroutine's stack grows less (issue 17).
//
//go:noinline
func sortedKeys(m map[string]any, keys []string) []string {
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// appendAny appends the dynamic values JSON decoding and the service's
// metadata use (nil, strings, booleans, numbers, raw JSON, maps and slices
// of them); any other type is encoded by encoding/json.
func appendAny(dst []byte, v any, depth int) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case string:
		return appendJSONString(dst, x), true
	case bool:
		return strconv.AppendBool(dst, x), true
	case float64:
		return appendFloat64(dst, x)
	case int:
		return strconv.AppendInt(dst, int64(x), 10), true
	case int64:
		return strconv.AppendInt(dst, x, 10), true
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), true
	case uint64:
		return strconv.AppendUint(dst, x, 10), true
	case json.RawMessage:
		return appendRawJSON(dst, x)
	case map[string]any:
		return appendAnyMap(dst, x, depth)
	case []any:
		return appendAnyList(dst, x, depth)
	case []string:
		return appendJSONStrings(dst, x), true
	}
	return appendMarshaled(dst, v)
}

// appendAnyList appends a []any (null when nil).
func appendAnyList(dst []byte, list []any, depth int) ([]byte, bool) {
	if list == nil {
		return append(dst, "null"...), true
	}
	if depth > maxAnyDepth {
		return dst, false
	}
	dst = append(dst, '[')
	var ok bool
	for i, e := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, ok = appendAny(dst, e, depth+1); !ok {
			return dst, false
		}
	}
	return append(dst, ']'), true
}

// appendMarshaled appends encoding/json's encoding of a value of a type
// appendAny does not know; false when encoding/json refuses it.
//
//go:noinline
func appendMarshaled(dst []byte, v any) ([]byte, bool) {
	b, err := json.Marshal(v)
	if err != nil {
		return dst, false
	}
	return append(dst, b...), true
}

// appendFloat64 appends f as encoding/json does (ES6 number formatting);
// false for NaN and infinities, which it refuses.
func appendFloat64(dst []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 → e-9
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, true
}

// Package jcs implements the JSON Canonicalization Scheme of RFC 8785:
// object members sorted by the UTF-16 code units of their names, no
// insignificant whitespace, numbers in the ECMAScript (ES6) shortest
// round-trip form and strings with the minimal JSON escaping.
//
// The input must be I-JSON (RFC 7493): valid UTF-8, no duplicate member
// names, numbers that fit an IEEE 754 double. Anything else is an error,
// never a panic.
package jcs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth bounds the nesting of arrays and objects accepted by
// Canonicalize.
const MaxDepth = 256

// Canonicalize parses the JSON text data and returns its RFC 8785 canonical
// form.
func Canonicalize(data []byte) ([]byte, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("jcs: input is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("jcs: trailing data after the JSON value")
	}
	var buf bytes.Buffer
	if err := write(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Marshal encodes v with encoding/json and canonicalizes the result.
func Marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("jcs: %w", err)
	}
	return Canonicalize(b)
}

// Append writes the canonical form of an already-decoded JSON value (nil,
// bool, string, float64, json.Number, integer types, []any, map[string]any)
// to buf.
func Append(buf *bytes.Buffer, v any) error { return write(buf, v) }

// object keeps member names for duplicate detection during parsing.
type object map[string]any

func parseValue(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, errors.New("jcs: unexpected end of input")
		}
		return nil, fmt.Errorf("jcs: %w", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth >= MaxDepth {
			return nil, errors.New("jcs: nesting too deep")
		}
		switch t {
		case '{':
			m := map[string]any{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("jcs: %w", err)
				}
				k, ok := kt.(string)
				if !ok {
					return nil, errors.New("jcs: object member name is not a string")
				}
				if _, dup := m[k]; dup {
					return nil, fmt.Errorf("jcs: duplicate member name %q", k)
				}
				val, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				m[k] = val
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("jcs: %w", err)
			}
			return m, nil
		case '[':
			arr := []any{}
			for dec.More() {
				val, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, val)
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("jcs: %w", err)
			}
			return arr, nil
		}
		return nil, fmt.Errorf("jcs: unexpected %q", t)
	default:
		return t, nil
	}
}

// write appends the canonical form of v (a value as parseValue or
// encoding/json with UseNumber produce it, or a Go scalar) to buf.
func write(buf *bytes.Buffer, v any) error {
	switch t := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		if t {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case string:
		return writeString(buf, t)
	case json.Number:
		return writeNumber(buf, t)
	case float64:
		s, err := FormatNumber(t)
		if err != nil {
			return err
		}
		buf.WriteString(s)
	case float32:
		return write(buf, float64(t))
	case int:
		return write(buf, float64(t))
	case int64:
		return write(buf, float64(t))
	case []any:
		return writeArray(buf, t)
	case []string:
		buf.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeString(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case map[string]any:
		return writeObject(buf, t)
	default:
		return fmt.Errorf("jcs: unsupported value of type %T", v)
	}
	return nil
}

// writeNumber writes a JSON number as the double it denotes.
func writeNumber(buf *bytes.Buffer, n json.Number) error {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return fmt.Errorf("jcs: number %q does not fit a double", truncate(string(n)))
	}
	s, err := FormatNumber(f)
	if err != nil {
		return err
	}
	buf.WriteString(s)
	return nil
}

// writeArray writes the elements of t in order.
func writeArray(buf *bytes.Buffer, t []any) error {
	buf.WriteByte('[')
	for i, e := range t {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := write(buf, e); err != nil {
			return err
		}
	}
	buf.WriteByte(']')
	return nil
}

// writeObject writes the members of t sorted by SortKeys.
func writeObject(buf *bytes.Buffer, t map[string]any) error {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	SortKeys(keys)
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := writeString(buf, k); err != nil {
			return err
		}
		buf.WriteByte(':')
		if err := write(buf, t[k]); err != nil {
			return err
		}
	}
	buf.WriteByte('}')
	return nil
}

// SortKeys sorts member names by their UTF-16 code units, as RFC 8785
// §3.2.3 requires.
func SortKeys(keys []string) {
	slices.SortFunc(keys, compareUTF16)
}

func compareUTF16(a, b string) int {
	if isASCII(a) && isASCII(b) {
		return strings.Compare(a, b)
	}
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	return slices.Compare(ua, ub)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

const hexDigits = "0123456789abcdef"

func writeString(buf *bytes.Buffer, s string) error {
	if !utf8.ValidString(s) {
		return errors.New("jcs: string is not valid UTF-8")
	}
	buf.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			buf.WriteString(`\"`)
		case '\\':
			buf.WriteString(`\\`)
		case '\b':
			buf.WriteString(`\b`)
		case '\f':
			buf.WriteString(`\f`)
		case '\n':
			buf.WriteString(`\n`)
		case '\r':
			buf.WriteString(`\r`)
		case '\t':
			buf.WriteString(`\t`)
		default:
			if c < 0x20 {
				buf.WriteString(`\u00`)
				buf.WriteByte(hexDigits[c>>4])
				buf.WriteByte(hexDigits[c&0xf])
			} else {
				buf.WriteByte(c)
			}
		}
	}
	buf.WriteByte('"')
	return nil
}

// FormatNumber formats f as ECMAScript's Number.prototype.toString does
// (RFC 8785 §3.2.2.3). NaN and the infinities are errors.
func FormatNumber(f float64) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", errors.New("jcs: NaN and Infinity are not valid JSON numbers")
	}
	if f == 0 {
		return "0", nil // also for -0
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	format := byte('e')
	if f >= 1e-6 && f < 1e21 {
		format = 'f'
	}
	s := strconv.FormatFloat(f, format, -1, 64)
	if i := strings.IndexByte(s, 'e'); i > 0 && i+2 < len(s) && s[i+2] == '0' {
		// Go writes e-07 / e+09; ECMAScript has no leading exponent zero.
		s = s[:i+2] + s[i+3:]
	}
	return sign + s, nil
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

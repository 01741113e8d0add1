// Package protojson is the ProtoJSON input rule of the A2A bindings
// (RPC-14): one decoder of request bodies and query strings used by both
// the JSON-RPC and the HTTP+JSON binding.
package protojson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// ProtoJSON input rule (RPC-14). A2A 1.0 messages are protobuf messages and
// their JSON is ProtoJSON, whose parsers accept every field under its
// lowerCamelCase JSON name and under its original proto field name
// (`task_id` for `taskId`). Before the strict decoding of a request body,
// normalizeProtoJSON renames proto-spelled keys to their JSON names. Which
// objects are schema objects is read from the target Go type: the json
// tags of its struct fields, followed into nested structs and slices of
// structs. Everything else — maps such as `metadata`, raw JSON such as a
// data part's `data`, scalars and enums — is copied byte for byte, so user
// data is never rewritten. A field given under both spellings is an
// invalid params error naming the field. Enum numbers are accepted by the
// enums' own UnmarshalJSON (a2a.TaskState, a2a.Role).

// normalizeProtoJSON rewrites the proto-spelled keys of raw (a JSON object
// to be decoded into a value of type t) to their JSON names, at every
// nesting level of the schema. It scans raw once and splices only the
// renamed keys; free-form members are copied byte for byte, and raw itself
// is returned when nothing is renamed. A field given under both spellings
// is an invalid params error. Input that is not valid JSON is returned as
// is, for the decoder to report.
func normalizeProtoJSON(raw []byte, t reflect.Type) ([]byte, error) {
	t = derefType(t)
	if t.Kind() != reflect.Struct {
		return raw, nil
	}
	if bytes.IndexByte(raw, '_') < 0 && !bytes.Contains(raw, []byte(`\u005`)) {
		return raw, nil // no proto field name can occur without an underscore
	}
	n := &normalizer{src: raw, path: make([]pathElem, 0, 8)}
	i := n.ws(0)
	if i >= len(raw) || raw[i] != '{' {
		return raw, nil
	}
	if _, err := n.object(i, schemaFor(t)); err != nil {
		if errors.Is(err, errMalformed) {
			return raw, nil
		}
		return nil, err
	}
	if len(n.edits) == 0 {
		return raw, nil
	}
	out := make([]byte, 0, len(raw)+8*len(n.edits))
	last := 0
	for _, e := range n.edits {
		out = append(out, raw[last:e.start]...)
		out = append(out, '"')
		out = append(out, e.name...)
		out = append(out, '"')
		last = e.end
	}
	return append(out, raw[last:]...), nil
}

// errMalformed stops the scan of input that is not valid JSON.
var errMalformed = errors.New("malformed JSON")

// keyEdit replaces the key token src[start:end] by the quoted name.
type keyEdit struct {
	start, end int
	name       string
}

// normalizer scans one JSON document and records the keys to rename.
type normalizer struct {
	src   []byte
	edits []keyEdit
	// path is the member being scanned, outermost first, for error
	// messages only: rendered ("message.parts[0]") when an error names it.
	path []pathElem
}

// ws skips JSON whitespace from i.
func (n *normalizer) ws(i int) int {
	for i < len(n.src) {
		switch n.src[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// str returns the end of the string token starting at i (a quote).
func (n *normalizer) str(i int) (int, error) {
	k := i + 1
	for {
		j := bytes.IndexByte(n.src[k:], '"')
		if j < 0 {
			return 0, errMalformed
		}
		q := k + j
		bs := 0
		for p := q - 1; p > i && n.src[p] == '\\'; p-- {
			bs++
		}
		if bs%2 == 0 {
			return q + 1, nil
		}
		k = q + 1
	}
}

// value returns the end of the JSON value starting at i.
func (n *normalizer) value(i int) (int, error) {
	if i >= len(n.src) {
		return 0, errMalformed
	}
	switch n.src[i] {
	case '"':
		return n.str(i)
	case '{', '[':
		depth := 0
		for i < len(n.src) {
			switch n.src[i] {
			case '"':
				end, err := n.str(i)
				if err != nil {
					return 0, err
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return 0, errMalformed
	}
	start := i
	for i < len(n.src) {
		switch n.src[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			if i == start {
				return 0, errMalformed
			}
			return i, nil
		}
		i++
	}
	if i == start {
		return 0, errMalformed
	}
	return i, nil
}

// key decodes the key token src[start:end].
func (n *normalizer) key(start, end int) (string, error) {
	tok := n.src[start:end]
	if bytes.IndexByte(tok, '\\') < 0 {
		return string(tok[1 : len(tok)-1]), nil
	}
	var k string
	if err := json.Unmarshal(tok, &k); err != nil {
		return "", errMalformed
	}
	return k, nil
}

// field returns the schema field the key token src[start:end] names (nil
// for none) and the key as sent. A key without escapes is looked up
// without copying it: the key string is made only when it is renamed.
func (n *normalizer) field(s *protoSchema, start, end int) (*protoField, string, error) {
	tok := n.src[start:end]
	if bytes.IndexByte(tok, '\\') < 0 {
		f := s.fields[string(tok[1:len(tok)-1])]
		if f == nil || string(tok[1:len(tok)-1]) == f.name {
			return f, "", nil
		}
		return f, string(tok[1 : len(tok)-1]), nil
	}
	key, err := n.key(start, end)
	if err != nil {
		return nil, "", err
	}
	f := s.fields[key]
	if f != nil && key == f.name {
		key = ""
	}
	return f, key, nil
}

// seenField is a schema field met in an object, and the spelling it was
// sent under ("" for its JSON name).
type seenField struct {
	name, key string
}

// pathElem is one step of normalizer.path: a member's JSON name, or an
// array element's index (name "").
type pathElem struct {
	name  string
	index int
}

// pathTo renders the path of the member name of the object being scanned.
func (n *normalizer) pathTo(name string) string {
	var b strings.Builder
	for _, e := range n.path {
		if e.name == "" {
			b.WriteString("[" + strconv.Itoa(e.index) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(e.name)
	}
	if b.Len() > 0 {
		b.WriteByte('.')
	}
	b.WriteString(name)
	return b.String()
}

// object scans the schema object at i (a '{') and returns its end.
func (n *normalizer) object(i int, s *protoSchema) (int, error) {
	i = n.ws(i + 1)
	if i < len(n.src) && n.src[i] == '}' {
		return i + 1, nil
	}
	var seenBuf [8]seenField
	seen := seenBuf[:0]
	for {
		if i >= len(n.src) || n.src[i] != '"' {
			return 0, errMalformed
		}
		kEnd, err := n.str(i)
		if err != nil {
			return 0, err
		}
		f, key, err := n.field(s, i, kEnd)
		if err != nil {
			return 0, err
		}
		j := n.ws(kEnd)
		if j >= len(n.src) || n.src[j] != ':' {
			return 0, errMalformed
		}
		v := n.ws(j + 1)
		var end int
		if f != nil {
			for _, p := range seen {
				if p.name == f.name && p.key != key {
					return 0, a2a.ErrInvalidParams(n.pathTo(f.name), fmt.Sprintf("is given twice, as %q and %q", spelling(p), spelling(seenField{f.name, key})))
				}
			}
			seen = append(seen, seenField{f.name, key})
			if key != "" {
				n.edits = append(n.edits, keyEdit{start: i, end: kEnd, name: f.name})
			}
			switch {
			case f.shape == shapeObject && v < len(n.src) && n.src[v] == '{':
				n.path = append(n.path, pathElem{name: f.name})
				end, err = n.object(v, schemaFor(f.elem))
				n.path = n.path[:len(n.path)-1]
			case f.shape == shapeArray && v < len(n.src) && n.src[v] == '[':
				n.path = append(n.path, pathElem{name: f.name})
				end, err = n.array(v, schemaFor(f.elem))
				n.path = n.path[:len(n.path)-1]
			default:
				end, err = n.value(v)
			}
		} else {
			end, err = n.value(v)
		}
		if err != nil {
			return 0, err
		}
		var done bool
		if i, done, err = n.next(end, '}'); err != nil || done {
			return i, err
		}
	}
}

// spelling is the key a seen field was sent under.
func spelling(p seenField) string {
	if p.key == "" {
		return p.name
	}
	return p.key
}

// array scans an array of schema objects at i (a '[') and returns its end.
func (n *normalizer) array(i int, s *protoSchema) (int, error) {
	i = n.ws(i + 1)
	if i < len(n.src) && n.src[i] == ']' {
		return i + 1, nil
	}
	for k := 0; ; k++ {
		var end int
		var err error
		if i < len(n.src) && n.src[i] == '{' {
			n.path = append(n.path, pathElem{index: k})
			end, err = n.object(i, s)
			n.path = n.path[:len(n.path)-1]
		} else {
			end, err = n.value(i)
		}
		if err != nil {
			return 0, err
		}
		var done bool
		if i, done, err = n.next(end, ']'); err != nil || done {
			return i, err
		}
	}
}

// next scans past the member or element ending at end in an object or
// array closed by closer: it returns the start of the next one, or the
// container's end with done set.
func (n *normalizer) next(end int, closer byte) (i int, done bool, err error) {
	i = n.ws(end)
	if i >= len(n.src) {
		return 0, false, errMalformed
	}
	switch n.src[i] {
	case ',':
		return n.ws(i + 1), false, nil
	case closer:
		return i + 1, true, nil
	}
	return 0, false, errMalformed
}

// NormalizeQuery applies the same rule to the query parameters of an
// HTTP+JSON GET whose fields are those of struct type t: a parameter under
// its proto field name (`history_length`) is moved to its JSON name
// (`historyLength`); both spellings at once are an invalid params error.
func NormalizeQuery(q url.Values, t reflect.Type) (url.Values, error) {
	s := schemaFor(derefType(t))
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(url.Values, len(q))
	for _, k := range keys {
		name := k
		if f := s.fields[k]; f != nil && f.name != k {
			if _, dup := q[f.name]; dup {
				return nil, a2a.ErrInvalidParams(f.name, fmt.Sprintf("is given twice, as %q and %q", f.name, k))
			}
			name = f.name
		}
		out[name] = q[k]
	}
	return out, nil
}

package a2a

import (
	"encoding/json"
	"sync"
)

// JSONAppender is implemented by the hot A2A types: AppendJSON appends the
// value's JSON to dst, byte for byte what encoding/json.Marshal writes for
// it, without reflection (issue 17: encoding/json's reflection and the
// stack growth of its recursion showed in the send profile). When a value
// in it cannot be encoded (invalid raw JSON in Part.Data, a metadata value
// encoding/json refuses) the whole value is encoded by encoding/json, whose
// error is returned with dst unchanged.
type JSONAppender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

// MarshalJSONValue returns the JSON of v: AppendJSON's when v is a
// JSONAppender (see AppendJSONValue), else encoding/json.Marshal's. The
// encoding is written in a pooled buffer and copied out at its size.
func MarshalJSONValue(v any) ([]byte, error) {
	var out []byte
	err := UseJSON(v, func(b []byte) { out = append(make([]byte, 0, len(b)), b...) })
	return out, err
}

// MarshalJSONString is MarshalJSONValue as a string (one copy).
func MarshalJSONString(v any) (string, error) {
	var out string
	err := UseJSON(v, func(b []byte) { out = string(b) })
	return out, err
}

// scratchPool holds the buffers MarshalJSONValue encodes in.
var scratchPool = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// maxScratch is the largest buffer put back in the pool.
const maxScratch = 64 << 10

// UseJSON encodes v as AppendJSONValue does, in a pooled buffer, and
// calls use with the bytes (not on error), which are valid only during
// the call; a value AppendJSONValue does not encode itself is encoded by
// encoding/json.Marshal directly.
func UseJSON(v any, use func([]byte)) error {
	if !isAppender(v) {
		b, err := json.Marshal(v)
		if err == nil {
			use(b)
		}
		return err
	}
	bp := scratchPool.Get().(*[]byte)
	b, err := AppendJSONValue((*bp)[:0], v)
	if err == nil {
		use(b)
	}
	if cap(b) <= maxScratch {
		*bp = b[:0]
		scratchPool.Put(bp)
	}
	return err
}

// isAppender reports whether AppendJSONValue encodes v itself.
func isAppender(v any) bool {
	switch v.(type) {
	case JSONAppender, StreamResponse, SendMessageResponse, Task, Message, []Artifact:
		return true
	}
	return false
}

// AppendJSONValue appends the JSON of v to dst: AppendJSON's when v is a
// JSONAppender (a pointer to one of the hot types; a StreamResponse,
// SendMessageResponse, Task or Message value; an []Artifact), else
// encoding/json.Marshal's.
func AppendJSONValue(dst []byte, v any) ([]byte, error) {
	if a, ok := v.(JSONAppender); ok {
		return a.AppendJSON(dst)
	}
	return appendJSONValueType(dst, v)
}

// appendJSONValueType is AppendJSONValue for the value types, apart so
// their copies are not in the frame of the common pointer case.
//
//go:noinline
func appendJSONValueType(dst []byte, v any) ([]byte, error) {
	var out []byte
	ok := false
	switch x := v.(type) {
	case StreamResponse:
		out, ok = x.appendJSON(dst)
	case SendMessageResponse:
		out, ok = x.appendJSON(dst)
	case Task:
		out, ok = x.appendJSON(dst)
	case Message:
		out, ok = x.appendJSON(dst)
	case []Artifact:
		out, ok = appendArtifacts(dst, x)
	}
	// The fallback encodes v itself: no copy of a value case escapes.
	return appendOrMarshal(dst, out, ok, v)
}

// appendMarshal appends encoding/json's encoding of v (dst unchanged on
// error).
func appendMarshal(dst []byte, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// appendOrMarshal finishes an AppendJSON: the appended bytes when the
// encoder could write them, else encoding/json's encoding of v.
func appendOrMarshal(dst, out []byte, ok bool, v any) ([]byte, error) {
	if ok {
		return out, nil
	}
	return appendMarshal(dst, v)
}

// AppendJSON appends the part's JSON (see JSONAppender); null for nil.
func (p *Part) AppendJSON(dst []byte) ([]byte, error) {
	if p == nil {
		return append(dst, "null"...), nil
	}
	out, ok := p.appendJSON(dst)
	return appendOrMarshal(dst, out, ok, p)
}

// AppendJSON appends the message's JSON (see JSONAppender); null for nil.
func (m *Message) AppendJSON(dst []byte) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	out, ok := m.appendJSON(dst)
	return appendOrMarshal(dst, out, ok, m)
}

// AppendJSON appends the status's JSON (see JSONAppender); null for nil.
func (s *TaskStatus) AppendJSON(dst []byte) ([]byte, error) {
	if s == nil {
		return append(dst, "null"...), nil
	}
	out, ok := s.appendJSON(dst)
	return appendOrMarshal(dst, out, ok, s)
}

// AppendJSON appends the artifact's JSON (see JSONAppender); null for nil.
func (a *Artifact) AppendJSON(dst []byte) ([]byte, error) {
	if a == nil {
		return append(dst, "null"...), nil
	}
	out, ok := a.appendJSON(dst)
	return appendOrMarshal(dst, out, ok, a)
}

// AppendArtifactsJSON appends the JSON of a list of artifacts, as
// encoding/json.Marshal writes the slice (null when nil).
func AppendArtifactsJSON(dst []byte, arts []Artifact) ([]byte, error) {
	out, ok := appendArtifacts(dst, arts)
	return appendOrMarshal(dst, out, ok, arts)
}

// AppendJSON appends the task's JSON (see JSONAppender); null for nil.
func (t *Task) AppendJSON(dst []byte) ([]byte, error) {
	if t == nil {
		return append(dst, "null"...), nil
	}
	out, ok := t.appendJSON(dst)
	return appendOrMarshal(dst, out, ok, t)
}

// AppendJSON appends the event's JSON (see JSONAppender); null for nil.
func (e *TaskStatusUpdateEvent) AppendJSON(dst []byte) ([]byte, error) {
	if e == nil {
		return append(dst, "null"...), nil
	}
	out, ok := e.appendJSON(dst)
	return appendOrMarshal(dst, out, ok, e)
}

// AppendJSON appends the event's JSON (see JSONAppender); null for nil.
func (e *TaskArtifactUpdateEvent) AppendJSON(dst []byte) ([]byte, error) {
	if e == nil {
		return append(dst, "null"...), nil
	}
	out, ok := e.appendJSON(dst)
	return appendOrMarshal(dst, out, ok, e)
}

// AppendJSON appends the event's JSON (see JSONAppender); null for nil.
// Legacy is not encoded, as its json tag says.
func (r *StreamResponse) AppendJSON(dst []byte) ([]byte, error) {
	if r == nil {
		return append(dst, "null"...), nil
	}
	out, ok := r.appendJSON(dst)
	return appendOrMarshal(dst, out, ok, r)
}

// AppendJSON appends the response's JSON (see JSONAppender); null for nil.
func (r *SendMessageResponse) AppendJSON(dst []byte) ([]byte, error) {
	if r == nil {
		return append(dst, "null"...), nil
	}
	out, ok := r.appendJSON(dst)
	return appendOrMarshal(dst, out, ok, r)
}

// AppendJSONString appends s as a JSON string, escaped exactly as
// encoding/json.Marshal escapes it (HTML characters, U+2028/U+2029, invalid
// UTF-8 as \ufffd).
func AppendJSONString(dst []byte, s string) []byte { return appendJSONString(dst, s) }

package a2a

// This file holds the struct encoders of the append-style JSON encoder
// (json_append.go): each writes the members of its type in declaration
// order with the omitempty rules of its json tags, exactly as
// encoding/json.Marshal does. A false result means a value in it cannot
// be encoded here (see json_append_value.go).

func (p *Part) appendJSON(dst []byte) ([]byte, bool) {
	dst = append(dst, '{')
	n := len(dst)
	if p.Text != nil {
		dst = append(dst, `"text":`...)
		dst = appendJSONString(dst, *p.Text)
	}
	if len(p.Raw) > 0 {
		dst = appendComma(dst, n)
		dst = append(dst, `"raw":`...)
		dst = appendJSONBytes(dst, p.Raw)
	}
	if p.URL != "" {
		dst = appendComma(dst, n)
		dst = append(dst, `"url":`...)
		dst = appendJSONString(dst, p.URL)
	}
	var ok bool
	if len(p.Data) > 0 {
		dst = appendComma(dst, n)
		dst = append(dst, `"data":`...)
		if dst, ok = appendRawJSON(dst, p.Data); !ok {
			return dst, false
		}
	}
	if p.MediaType != "" {
		dst = appendComma(dst, n)
		dst = append(dst, `"mediaType":`...)
		dst = appendJSONString(dst, p.MediaType)
	}
	if p.Filename != "" {
		dst = appendComma(dst, n)
		dst = append(dst, `"filename":`...)
		dst = appendJSONString(dst, p.Filename)
	}
	if len(p.Metadata) > 0 {
		dst = appendComma(dst, n)
		dst = append(dst, `"metadata":`...)
		if dst, ok = appendMetadata(dst, p.Metadata); !ok {
			return dst, false
		}
	}
	return append(dst, '}'), true
}

// appendParts appends a []Part (null when nil).
func appendParts(dst []byte, parts []Part) ([]byte, bool) {
	return appendList(dst, parts, (*Part).appendJSON)
}

// appendList appends list as a JSON array (null when nil), each element
// encoded by enc.
func appendList[T any](dst []byte, list []T, enc func(*T, []byte) ([]byte, bool)) ([]byte, bool) {
	if list == nil {
		return append(dst, "null"...), true
	}
	dst = append(dst, '[')
	var ok bool
	for i := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, ok = enc(&list[i], dst); !ok {
			return dst, false
		}
	}
	return append(dst, ']'), true
}

func (m *Message) appendJSON(dst []byte) ([]byte, bool) {
	dst = append(dst, `{"messageId":`...)
	dst = appendJSONString(dst, m.MessageID)
	dst = appendOptString(dst, `,"contextId":`, m.ContextID)
	dst = appendOptString(dst, `,"taskId":`, m.TaskID)
	dst = append(dst, `,"role":`...)
	dst = appendJSONString(dst, string(m.Role))
	var ok bool
	if dst, ok = appendContent(dst, m.Parts, m.Metadata, m.Extensions); !ok {
		return dst, false
	}
	dst = appendOptStrings(dst, `,"referenceTaskIds":`, m.ReferenceTaskIDs)
	return append(dst, '}'), true
}

// appendContent appends the members Message and Artifact share, in their
// order: `,"parts":` and, when not empty, metadata and extensions.
func appendContent(dst []byte, parts []Part, md map[string]any, exts []string) ([]byte, bool) {
	dst = append(dst, `,"parts":`...)
	var ok bool
	if dst, ok = appendParts(dst, parts); !ok {
		return dst, false
	}
	if dst, ok = appendOptMetadata(dst, md); !ok {
		return dst, false
	}
	return appendOptStrings(dst, `,"extensions":`, exts), true
}

func (s *TaskStatus) appendJSON(dst []byte) ([]byte, bool) {
	dst = append(dst, `{"state":`...)
	dst = appendJSONString(dst, string(s.State))
	if s.Message != nil {
		dst = append(dst, `,"message":`...)
		var ok bool
		if dst, ok = s.Message.appendJSON(dst); !ok {
			return dst, false
		}
	}
	dst = appendOptString(dst, `,"timestamp":`, s.Timestamp)
	return append(dst, '}'), true
}

func (a *Artifact) appendJSON(dst []byte) ([]byte, bool) {
	dst = append(dst, `{"artifactId":`...)
	dst = appendJSONString(dst, a.ArtifactID)
	dst = appendOptString(dst, `,"name":`, a.Name)
	dst = appendOptString(dst, `,"description":`, a.Description)
	var ok bool
	if dst, ok = appendContent(dst, a.Parts, a.Metadata, a.Extensions); !ok {
		return dst, false
	}
	return append(dst, '}'), true
}

// appendArtifacts appends an []Artifact (null when nil).
func appendArtifacts(dst []byte, arts []Artifact) ([]byte, bool) {
	return appendList(dst, arts, (*Artifact).appendJSON)
}

func (t *Task) appendJSON(dst []byte) ([]byte, bool) {
	dst = append(dst, `{"id":`...)
	dst = appendJSONString(dst, t.ID)
	dst = append(dst, `,"contextId":`...)
	dst = appendJSONString(dst, t.ContextID)
	dst = append(dst, `,"status":`...)
	var ok bool
	if dst, ok = t.Status.appendJSON(dst); !ok {
		return dst, false
	}
	if len(t.Artifacts) > 0 {
		dst = append(dst, `,"artifacts":`...)
		if dst, ok = appendArtifacts(dst, t.Artifacts); !ok {
			return dst, false
		}
	}
	if len(t.History) > 0 {
		dst = append(dst, `,"history":`...)
		if dst, ok = appendList(dst, t.History, (*Message).appendJSON); !ok {
			return dst, false
		}
	}
	if dst, ok = appendOptMetadata(dst, t.Metadata); !ok {
		return dst, false
	}
	return append(dst, '}'), true
}

// appendEventHead opens an update event's object with its task and
// context ids.
func appendEventHead(dst []byte, taskID, contextID string) []byte {
	dst = append(dst, `{"taskId":`...)
	dst = appendJSONString(dst, taskID)
	dst = append(dst, `,"contextId":`...)
	return appendJSONString(dst, contextID)
}

func (e *TaskStatusUpdateEvent) appendJSON(dst []byte) ([]byte, bool) {
	dst = appendEventHead(dst, e.TaskID, e.ContextID)
	dst = append(dst, `,"status":`...)
	var ok bool
	if dst, ok = e.Status.appendJSON(dst); !ok {
		return dst, false
	}
	if dst, ok = appendOptMetadata(dst, e.Metadata); !ok {
		return dst, false
	}
	return append(dst, '}'), true
}

func (e *TaskArtifactUpdateEvent) appendJSON(dst []byte) ([]byte, bool) {
	dst = appendEventHead(dst, e.TaskID, e.ContextID)
	dst = append(dst, `,"artifact":`...)
	var ok bool
	if dst, ok = e.Artifact.appendJSON(dst); !ok {
		return dst, false
	}
	if e.Append {
		dst = append(dst, `,"append":true`...)
	}
	if e.LastChunk {
		dst = append(dst, `,"lastChunk":true`...)
	}
	if dst, ok = appendOptMetadata(dst, e.Metadata); !ok {
		return dst, false
	}
	return append(dst, '}'), true
}

func (r *StreamResponse) appendJSON(dst []byte) ([]byte, bool) {
	dst = append(dst, '{')
	n := len(dst)
	var ok bool
	if r.Task != nil {
		dst = append(dst, `"task":`...)
		if dst, ok = r.Task.appendJSON(dst); !ok {
			return dst, false
		}
	}
	if r.Message != nil {
		dst = appendComma(dst, n)
		dst = append(dst, `"message":`...)
		if dst, ok = r.Message.appendJSON(dst); !ok {
			return dst, false
		}
	}
	if r.StatusUpdate != nil {
		dst = appendComma(dst, n)
		dst = append(dst, `"statusUpdate":`...)
		if dst, ok = r.StatusUpdate.appendJSON(dst); !ok {
			return dst, false
		}
	}
	if r.ArtifactUpdate != nil {
		dst = appendComma(dst, n)
		dst = append(dst, `"artifactUpdate":`...)
		if dst, ok = r.ArtifactUpdate.appendJSON(dst); !ok {
			return dst, false
		}
	}
	return append(dst, '}'), true
}

// appendJSON writes the response as the StreamResponse with the same Task
// and Message: the members and their order are the same.
func (r *SendMessageResponse) appendJSON(dst []byte) ([]byte, bool) {
	ev := StreamResponse{Task: r.Task, Message: r.Message}
	return ev.appendJSON(dst)
}

// appendComma appends the comma before an object member unless dst has
// not grown past n, the length just after the object's '{'.
func appendComma(dst []byte, n int) []byte {
	if len(dst) > n {
		return append(dst, ',')
	}
	return dst
}

// appendOptString appends key (`,"name":`) and v when v is not empty, as
// omitempty does.
func appendOptString(dst []byte, key, v string) []byte {
	if v == "" {
		return dst
	}
	return appendJSONString(append(dst, key...), v)
}

// appendOptStrings appends key (`,"name":`) and list when list is not
// empty, as omitempty does.
func appendOptStrings(dst []byte, key string, list []string) []byte {
	if len(list) == 0 {
		return dst
	}
	return appendJSONStrings(append(dst, key...), list)
}

// appendOptMetadata appends `,"metadata":` and md when md is not empty.
func appendOptMetadata(dst []byte, md map[string]any) ([]byte, bool) {
	if len(md) == 0 {
		return dst, true
	}
	return appendMetadata(append(dst, `,"metadata":`...), md)
}

package a2a

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// checkAppend asserts that v's AppendJSON writes what encoding/json.Marshal
// writes for it, or fails the same way, and leaves a prefix in dst alone.
func checkAppend(t *testing.T, v JSONAppender) {
	t.Helper()
	want, werr := json.Marshal(v)
	prefix := []byte("prefix")
	got, gerr := v.AppendJSON(append(make([]byte, 0, 4), prefix...))
	if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("%T: error %v, encoding/json's %v", v, gerr, werr)
	}
	if !bytes.HasPrefix(got, prefix) {
		t.Fatalf("%T: prefix lost: %q", v, got)
	}
	got = got[len(prefix):]
	if werr != nil {
		if len(got) != 0 {
			t.Fatalf("%T: appended %q with error %v", v, got, gerr)
		}
		return
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%T:\n got %s\nwant %s", v, got, want)
	}
	if !json.Valid(got) {
		t.Fatalf("%T: invalid JSON %s", v, got)
	}
}

// wrapAll returns v's value in every type that holds it (directly or in a
// message, artifact, task, event or response).
func wrapAll(p Part, md map[string]any, s string) []JSONAppender {
	msg := &Message{MessageID: s, ContextID: s, TaskID: s, Role: Role(s), Parts: []Part{p, TextPart(s)}, Metadata: md,
		Extensions: []string{s, ""}, ReferenceTaskIDs: []string{s}}
	bare := &Message{MessageID: s, Role: RoleUser}
	art := &Artifact{ArtifactID: s, Name: s, Description: s, Parts: []Part{p}, Metadata: md, Extensions: []string{s}}
	st := TaskStatus{State: TaskState(s), Message: msg, Timestamp: s}
	task := &Task{ID: s, ContextID: s, Status: st, Artifacts: []Artifact{*art, {ArtifactID: s}}, History: []Message{*msg, *bare}, Metadata: md}
	su := &TaskStatusUpdateEvent{TaskID: s, ContextID: s, Status: st, Metadata: md}
	au := &TaskArtifactUpdateEvent{TaskID: s, ContextID: s, Artifact: *art, Append: s != "", LastChunk: len(s)%2 == 1, Metadata: md}
	return []JSONAppender{
		&p, msg, bare, art, &st, &TaskStatus{}, task, &Task{}, su, au, &TaskArtifactUpdateEvent{},
		&StreamResponse{}, &StreamResponse{Task: task}, &StreamResponse{Message: msg}, &StreamResponse{StatusUpdate: su},
		&StreamResponse{ArtifactUpdate: au}, &StreamResponse{Task: task, Message: bare, StatusUpdate: su, ArtifactUpdate: au, Legacy: s},
		&SendMessageResponse{}, &SendMessageResponse{Task: task}, &SendMessageResponse{Message: msg}, &SendMessageResponse{Task: task, Message: msg},
		(*Task)(nil), (*Message)(nil), (*StreamResponse)(nil),
	}
}

func TestAppendJSONTricky(t *testing.T) {
	strs := []string{
		"", "plain", `quote " backslash \ slash /`, "<script>&amp;</script>", "\x00\x01\x07\b\f\n\r\t\x1f\x7f",
		"\u2028\u2029 line seps", "é ü 日本 🎉", "bad \xff utf8 \xc3", "\xed\xa0\x80 surrogate", "trunc \xe2\x80", "\xe2\x80\xa8\xe2\x80\xa9",
	}
	datas := []json.RawMessage{
		nil, json.RawMessage(`{"a":1}`), json.RawMessage(" { \"a\" : [ 1 , 2 ] ,\n\"b\":\"<&>\" } "), json.RawMessage(`"\u2028 ` + "\u2028\u2029" + `"`),
		json.RawMessage(`null`), json.RawMessage(`12.50`), json.RawMessage(`{"a":`), json.RawMessage(`{} {}`), json.RawMessage(" "),
		json.RawMessage("\"\xff\""), json.RawMessage(`[1,2,3]`),
	}
	mds := []map[string]any{
		nil, {}, {"b": "x", "a": 1.5, "c": nil, "<": true, "é": false, "\xff": "k"},
		{"n": map[string]any{"z": []any{1.0, "s", nil, map[string]any{}, []any{}}, "y": int64(-7), "x": 3, "w": uint64(9), "v": int32(2)}},
		{"f": []any{0.0, -0.0, 1e21, 1e-7, 123456789.0, 1e-6, 0.000001234, math.MaxFloat64, math.SmallestNonzeroFloat64, 1e20}},
		{"raw": json.RawMessage(` [ "<x>" ] `), "nilraw": json.RawMessage(nil), "strs": []string{"a", "<"}, "nilmap": map[string]any(nil)},
		{"other": struct{ A int }{3}, "ss": map[string]string{"k": "v"}, "num": json.Number("12")},
		{"nan": math.NaN()}, {"inf": []any{math.Inf(1)}}, {"badraw": json.RawMessage(`{`)}, {"ch": make(chan int)},
	}
	for _, s := range strs {
		for _, d := range datas {
			p := Part{Text: &s, Raw: []byte(s), URL: s, Data: d, MediaType: s, Filename: s}
			for _, v := range wrapAll(p, nil, s) {
				checkAppend(t, v)
			}
		}
		for _, md := range mds {
			p := Part{Metadata: md}
			for _, v := range wrapAll(p, md, s) {
				checkAppend(t, v)
			}
		}
	}
	empty := ""
	for _, p := range []Part{{}, {Text: &empty}, {Raw: []byte{}}, {Raw: []byte{0, 255, 1}}, {Data: json.RawMessage{}}, {URL: "u", MediaType: "m"}} {
		for _, v := range wrapAll(p, nil, "") {
			checkAppend(t, v)
		}
	}
	// Nil slices the tags do not omit are null, as encoding/json writes them.
	checkAppend(t, &Message{})
	checkAppend(t, &Artifact{})
	arts := []Artifact{{ArtifactID: "a", Parts: []Part{TextPart("<x>")}}, {}}
	for _, list := range [][]Artifact{nil, {}, arts} {
		want, _ := json.Marshal(list)
		got, err := AppendArtifactsJSON(nil, list)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("artifacts %v: %s, %v; want %s", list, got, err, want)
		}
	}
}

func TestAppendJSONValue(t *testing.T) {
	task := Task{ID: "t", ContextID: "c", Status: TaskStatus{State: TaskStateCompleted}}
	for _, v := range []any{task, &task, StreamResponse{Task: &task}, SendMessageResponse{Task: &task}, Message{MessageID: "m"},
		map[string]int{"b": 1, "a": 2}, struct{}{}, nil} {
		want, _ := json.Marshal(v)
		got, err := MarshalJSONValue(v)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%T: %s, %v; want %s", v, got, err, want)
		}
	}
	if _, err := MarshalJSONValue(&Part{Data: json.RawMessage(`{`)}); err == nil {
		t.Fatal("invalid data encoded without error")
	}
}

// FuzzAppendJSON compares AppendJSON with encoding/json.Marshal for every
// hot type: values built from the inputs (any string, bytes and raw JSON),
// and tasks, messages and events decoded from doc.
func FuzzAppendJSON(f *testing.F) {
	f.Add([]byte(`{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"},"metadata":{"a":[1,2.5e-9,"x"]}}`), "<\u2028\xff>", []byte(` {"a" : 1} `), 1.5)
	f.Add([]byte(`{"statusUpdate":{"taskId":"t","status":{"message":{"parts":[{"text":"hi","metadata":{"z":{},"a":null}}]}}}}`), "", []byte(`{`), math.Inf(1))
	f.Add([]byte(`{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"k":"\u003c"}},{"raw":"AAE="}]}`), "\x00\x1f\"\\", []byte(`null`), 1e21)
	f.Fuzz(func(t *testing.T, doc []byte, s string, raw []byte, num float64) {
		md := map[string]any{s: num, "s": s, "raw": json.RawMessage(raw), "list": []any{s, num, nil, true}}
		if len(raw)%3 == 0 {
			md = map[string]any{s: map[string]any{"n": num}}
		}
		p := Part{Text: &s, Raw: raw, URL: s, Data: raw, MediaType: s, Filename: s, Metadata: md}
		for _, v := range wrapAll(p, md, s) {
			checkAppend(t, v)
		}
		var docMD map[string]any
		if json.Unmarshal(doc, &docMD) == nil {
			for _, v := range wrapAll(Part{Metadata: docMD}, docMD, s) {
				checkAppend(t, v)
			}
		}
		for _, v := range []JSONAppender{&Task{}, &Message{}, &StreamResponse{}, &SendMessageResponse{}, &Artifact{}, &Part{},
			&TaskStatusUpdateEvent{}, &TaskArtifactUpdateEvent{}, &TaskStatus{}} {
			if json.Unmarshal(doc, v) == nil {
				checkAppend(t, v)
			}
		}
	})
}

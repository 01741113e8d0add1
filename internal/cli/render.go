package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/client"
)

// Mode is how a Renderer writes.
type Mode int

// Output modes.
const (
	// ModePlain writes the assistant text to stdout and nothing decorative.
	ModePlain Mode = iota
	// ModeTTY adds a spinner, progress lines and a summary line on stderr.
	ModeTTY
	// ModeJSON writes one StreamResponse per line (NDJSON) to stdout.
	ModeJSON
)

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// Renderer prints the events of a call or subscription. It is safe for
// concurrent use (the spinner runs in its own goroutine).
type Renderer struct {
	out, err  io.Writer
	mode      Mode
	ns        string
	color     bool
	mu        sync.Mutex
	stop      chan struct{}
	done      chan struct{}
	frame     int
	shown     bool // spinner is on screen
	lineStart bool // stdout cursor at column 0
	wroteText bool
	label     string

	// TaskID, ContextID and State describe the task seen so far.
	TaskID, ContextID string
	State             a2a.TaskState
	// DirectMessage is set when the agent answered with a message, no task.
	DirectMessage bool
	// InputTokens and OutputTokens are the usage reported by the gateway.
	InputTokens, OutputTokens int64

	streamed  map[string]string // task id → status text printed so far
	artifacts map[string]bool   // artifact ids printed
	shownText map[string]bool   // task id + NUL + artifact text printed
	statusMsg string            // latest status message text (for errors)
}

// NewRenderer returns a renderer; ns is the gateway metadata namespace
// (tool progress, usage) and color enables ANSI styling in ModeTTY.
func NewRenderer(out, errw io.Writer, mode Mode, ns string, color bool) *Renderer {
	if ns == "" {
		ns = client.DefaultNamespace
	}
	return &Renderer{out: out, err: errw, mode: mode, ns: ns, color: color, lineStart: true,
		label: "waiting for the agent", streamed: map[string]string{}, artifacts: map[string]bool{}, shownText: map[string]bool{}}
}

// Start starts the spinner (ModeTTY only).
func (r *Renderer) Start() {
	if r.mode != ModeTTY || r.stop != nil {
		return
	}
	r.stop, r.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(r.done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		r.tick()
		for {
			select {
			case <-r.stop:
				return
			case <-t.C:
				r.tick()
			}
		}
	}()
}

func (r *Renderer) tick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.lineStart {
		return // the spinner would overwrite partial text on the same line
	}
	r.frame = (r.frame + 1) % len(spinnerFrames)
	fmt.Fprintf(r.err, "\r%s %s\x1b[K", r.style("36", spinnerFrames[r.frame]), r.style("2", r.label))
	r.shown = true
}

// Stop stops the spinner and clears it.
func (r *Renderer) Stop() {
	if r.stop != nil {
		close(r.stop)
		<-r.done
		r.stop = nil
	}
	r.mu.Lock()
	r.clearSpinner()
	r.mu.Unlock()
}

func (r *Renderer) clearSpinner() {
	if r.shown {
		fmt.Fprint(r.err, "\r\x1b[K")
		r.shown = false
	}
}

func (r *Renderer) style(code, s string) string {
	if !r.color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// text writes assistant text to stdout.
func (r *Renderer) text(s string) {
	if s == "" {
		return
	}
	r.clearSpinner()
	fmt.Fprint(r.out, s)
	r.wroteText = true
	r.lineStart = strings.HasSuffix(s, "\n")
}

// progress writes a compact line on stderr (ModeTTY only).
func (r *Renderer) progress(s string) {
	if r.mode != ModeTTY {
		return
	}
	r.clearSpinner()
	if !r.lineStart {
		fmt.Fprintln(r.out)
		r.lineStart = true
	}
	fmt.Fprintln(r.err, r.style("2", "  "+s))
}

// Event renders one stream event.
func (r *Renderer) Event(ev a2a.StreamResponse) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mode == ModeJSON {
		b, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(r.out, "%s\n", b); err != nil {
			return err
		}
	}
	switch {
	case ev.Task != nil:
		t := ev.Task
		r.setTask(t.ID, t.ContextID, t.Status.State)
		r.statusText(t.ID, t.Status)
		for _, a := range t.Artifacts {
			if !r.artifacts[a.ArtifactID] {
				r.artifact(t.ID, a, false)
			}
		}
	case ev.Message != nil:
		m := ev.Message
		if r.TaskID == "" {
			r.DirectMessage = true
			if m.ContextID != "" {
				r.ContextID = m.ContextID
			}
		}
		if r.mode != ModeJSON {
			r.text(textOf(m.Parts))
			for _, d := range describeParts(m.Parts) {
				r.text("\n" + d)
			}
		}
	case ev.StatusUpdate != nil:
		u := ev.StatusUpdate
		prev := r.State
		r.setTask(u.TaskID, u.ContextID, u.Status.State)
		r.metadata(u.Metadata)
		r.statusText(u.TaskID, u.Status)
		if u.Status.State != prev && u.Status.State != a2a.TaskStateWorking && !u.Status.State.Terminal() && !u.Status.State.Interrupted() {
			r.progress("· " + StateName(u.Status.State))
		}
	case ev.ArtifactUpdate != nil:
		u := ev.ArtifactUpdate
		r.setTask(u.TaskID, u.ContextID, r.State)
		r.artifact(u.TaskID, u.Artifact, u.Append)
	}
	return nil
}

func (r *Renderer) setTask(id, ctx string, st a2a.TaskState) {
	if id != "" {
		r.TaskID = id
	}
	if ctx != "" {
		r.ContextID = ctx
	}
	if st != "" {
		r.State = st
		r.label = StateName(st) + "…"
	}
}

// statusText prints the new part of a status message: agents stream the
// answer as deltas and then repeat it whole in the final status, so text
// that starts with what was already printed only adds its remainder, and
// a final status repeating the last delta adds nothing.
func (r *Renderer) statusText(taskID string, st a2a.TaskStatus) {
	if st.Message == nil {
		return
	}
	t := textOf(st.Message.Parts)
	if t != "" {
		r.statusMsg = t
	}
	if r.mode == ModeJSON {
		return
	}
	done := r.streamed[taskID]
	final := st.State.Terminal() || st.State.Interrupted()
	switch {
	case t == "":
	case strings.HasPrefix(t, done):
		r.text(t[len(done):])
		r.streamed[taskID] = t
	case final && (r.shownText[taskID+"\x00"+t] || strings.HasSuffix(done, t)):
		// already printed: as an artifact, or as the last streamed delta
		// that the final status repeats (an exec agent's end text)
	case final:
		// a closing message that does not continue the streamed text
		if !r.lineStart {
			r.text("\n")
		}
		r.text(t)
	default:
		r.text(t)
		r.streamed[taskID] = done + t
	}
	for _, d := range describeParts(st.Message.Parts) {
		r.progress(d)
	}
}

func (r *Renderer) artifact(taskID string, a a2a.Artifact, appendChunk bool) {
	first := !r.artifacts[a.ArtifactID] && !appendChunk
	r.artifacts[a.ArtifactID] = true
	if r.mode == ModeJSON {
		return
	}
	t := textOf(a.Parts)
	if first {
		name := a.Name
		if name == "" {
			name = a.ArtifactID
		}
		r.progress("artifact " + name)
		if t != "" && t == r.streamed[taskID] {
			t = "" // the artifact repeats the streamed answer
		} else if t != "" && !r.lineStart {
			r.text("\n")
		}
	}
	if t != "" {
		r.shownText[taskID+"\x00"+t] = true
	}
	r.text(t)
	for _, d := range describeParts(a.Parts) {
		if r.mode == ModeTTY {
			r.progress(d)
		}
	}
}

// metadata shows gateway tool progress and records token usage.
func (r *Renderer) metadata(md map[string]any) {
	m, _ := md[r.ns].(map[string]any)
	if m == nil {
		return
	}
	if u, ok := m["usage"].(map[string]any); ok {
		r.InputTokens = toInt(u["inputTokens"])
		r.OutputTokens = toInt(u["outputTokens"])
	}
	if t, ok := m["tool"].(map[string]any); ok {
		name, _ := t["name"].(string)
		status, _ := t["status"].(string)
		if name == "" {
			name, _ = t["toolUseId"].(string)
		}
		line := "⚙ " + orDash(name)
		if status != "" {
			line += " " + status
		}
		if in, ok := t["input"]; ok && status != "running" {
			if b, err := json.Marshal(in); err == nil && len(b) <= 80 {
				line += " " + string(b)
			}
		}
		r.progress(line)
	}
	if p, ok := m["permission"].(map[string]any); ok {
		name, _ := p["toolName"].(string)
		line := "🔒 permission " + orDash(name)
		if auto, ok := p["autoApproved"].(bool); ok && auto {
			line += " (auto-approved)"
		}
		r.progress(line)
	}
}

func toInt(v any) int64 {
	switch n := v.(type) {
	case float64:
		return int64(n)
	case json.Number:
		i, _ := n.Int64()
		return i
	}
	return 0
}

// StateName is a short lowercase name of a state, e.g. "input-required".
func StateName(s a2a.TaskState) string {
	n := strings.TrimPrefix(string(s), "TASK_STATE_")
	return strings.ReplaceAll(strings.ToLower(n), "_", "-")
}

// Finish stops the spinner, ends the text line and prints the summary on
// stderr: decorated on a TTY, one plain "key=value" line otherwise (none
// in ModeJSON).
func (r *Renderer) Finish() {
	r.Stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mode == ModeJSON {
		return
	}
	if r.wroteText && !r.lineStart {
		fmt.Fprintln(r.out)
		r.lineStart = true
	}
	if r.mode == ModeTTY {
		mark := r.style("32", "✓")
		switch {
		case r.State.Terminal() && r.State != a2a.TaskStateCompleted:
			mark = r.style("31", "✗")
		case r.State.Interrupted():
			mark = r.style("33", "?")
		}
		parts := []string{}
		if r.DirectMessage {
			parts = append(parts, "message")
		} else if r.State != "" {
			parts = append(parts, StateName(r.State))
		}
		if r.TaskID != "" {
			parts = append(parts, "task "+r.TaskID)
		}
		if r.ContextID != "" {
			parts = append(parts, "context "+r.ContextID)
		}
		if r.InputTokens+r.OutputTokens > 0 {
			parts = append(parts, fmt.Sprintf("tokens %d in / %d out", r.InputTokens, r.OutputTokens))
		}
		fmt.Fprintf(r.err, "%s %s\n", mark, r.style("2", strings.Join(parts, " · ")))
		return
	}
	var kv []string
	if r.State != "" {
		kv = append(kv, "state="+StateName(r.State))
	}
	if r.TaskID != "" {
		kv = append(kv, "task="+r.TaskID)
	}
	if r.ContextID != "" {
		kv = append(kv, "context="+r.ContextID)
	}
	if len(kv) > 0 {
		fmt.Fprintln(r.err, strings.Join(kv, " "))
	}
}

// LastStatusText is the text of the latest status message seen.
func (r *Renderer) LastStatusText() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.statusMsg
}

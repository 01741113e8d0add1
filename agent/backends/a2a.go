package backends

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/client"
)

// DefaultCardTTL is how long a discovered upstream card is reused.
const DefaultCardTTL = 5 * time.Minute

// maxMappedTasks bounds the upstream task ids kept per context.
const maxMappedTasks = 32

// A2A fronts an existing A2A agent (TURN-9): each turn is forwarded as
// SendStreamingMessage (SendMessage when the upstream does not stream) with
// the backend's own upstream credentials; the upstream's task and context
// ids are kept in the context's durable session state, so follow-ups reach
// the same upstream context (and an interrupted upstream task) even after a
// restart; status, message and artifact events become turn events; a
// canceled turn forwards CancelTask. The upstream card is discovered (A2A
// 1.0, or 0.3 translated by agent/a2a/v03), optionally signature-checked,
// and must offer a JSON-RPC interface on the configured URL's host.
type A2A struct {
	// URL is the upstream agent's base URL or card URL (http or https).
	// Required.
	URL string
	// Client sends the requests (Caddy's HTTP transport). Default: a
	// client over http.DefaultTransport. Redirects are never followed.
	Client *http.Client
	// Header is added to every upstream request (the upstream credentials).
	Header http.Header
	// Timeout bounds one turn; 0 means no limit.
	Timeout time.Duration
	// Trust, when set, names the keys the upstream card's signature must
	// verify with; a card that fails refuses every turn.
	Trust *client.Trust
	// CardTTL is how long a discovered card is reused. Default DefaultCardTTL.
	CardTTL time.Duration

	once sync.Once
	hc   *http.Client
	mu   sync.Mutex
	disc *discovered
	gen  uint64 // counts discoveries, the version of Skills
}

// Validate checks the configuration.
func (a *A2A) Validate() error {
	if err := checkUpstream(a.URL, "a2a backend: url", "header or bearer"); err != nil {
		return err
	}
	if a.Timeout < 0 || a.CardTTL < 0 {
		return errors.New("a2a backend: durations must not be negative")
	}
	return nil
}

// http returns the client used for every upstream request: the configured
// one without redirects, its answers 408/429/5xx turned into errors.
func (a *A2A) http() *http.Client {
	a.once.Do(func() {
		base := a.Client
		if base == nil {
			base = &http.Client{}
		}
		rt := base.Transport
		if rt == nil {
			rt = http.DefaultTransport
		}
		a.hc = &http.Client{Transport: statusTransport{rt}, Jar: base.Jar,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	})
	return a.hc
}

// upstream returns the discovered upstream, discovering it again after
// CardTTL (or after forget).
func (a *A2A) upstream(ctx context.Context) (*discovered, error) {
	ttl := a.CardTTL
	if ttl == 0 {
		ttl = DefaultCardTTL
	}
	a.mu.Lock()
	d := a.disc
	a.mu.Unlock()
	if d != nil && time.Since(d.at) < ttl {
		return d, nil
	}
	d, err := a.discover(ctx)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.disc = d
	a.gen++
	a.mu.Unlock()
	return d, nil
}

// Skills returns the upstream card's skills as last discovered and a
// version that changes with every discovery (for the gateway's card).
func (a *A2A) Skills() ([]a2a.AgentSkill, uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.disc == nil {
		return nil, a.gen
	}
	return a.disc.card.Skills, a.gen
}

// forget drops the discovered card, so the next turn discovers it again.
func (a *A2A) forget() {
	a.mu.Lock()
	a.disc = nil
	a.mu.Unlock()
}

// Card returns the upstream card as last discovered (nil before the first
// discovery): the gateway merges its skills into the served card.
func (a *A2A) Card() *a2a.AgentCard {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.disc == nil {
		return nil
	}
	return a.disc.card
}

// Discover fetches the upstream card now (e.g. at start, for its skills).
func (a *A2A) Discover(ctx context.Context) (*a2a.AgentCard, error) {
	d, err := a.upstream(ctx)
	if err != nil {
		return nil, err
	}
	return d.card, nil
}

// a2aState is the durable session state of a context: the upstream
// context id and the upstream task of each gateway task whose upstream
// task waits for input.
type a2aState struct {
	ContextID string            `json:"contextId,omitempty"`
	Tasks     map[string]string `json:"tasks,omitempty"`
	Order     []string          `json:"order,omitempty"`
}

func loadA2AState(s *backend.Session) *a2aState {
	st := &a2aState{}
	if s != nil && len(s.State) > 0 {
		_ = json.Unmarshal(s.State, st)
	}
	if st.Tasks == nil {
		st.Tasks = map[string]string{}
	}
	return st
}

// save stores st in the session (the gateway persists it after the turn).
func (st *a2aState) save(s *backend.Session) {
	if s == nil {
		return
	}
	for len(st.Order) > maxMappedTasks {
		delete(st.Tasks, st.Order[0])
		st.Order = st.Order[1:]
	}
	if b, err := json.Marshal(st); err == nil {
		s.State = b
	}
}

// mapTask records (or, with upstream "", drops) the upstream task of a
// gateway task.
func (st *a2aState) mapTask(gw, up string) {
	if i := indexOf(st.Order, gw); i >= 0 {
		st.Order = append(st.Order[:i], st.Order[i+1:]...)
	}
	delete(st.Tasks, gw)
	if up != "" {
		st.Tasks[gw] = up
		st.Order = append(st.Order, gw)
	}
}

func indexOf(list []string, v string) int {
	for i, x := range list {
		if x == v {
			return i
		}
	}
	return -1
}

// RunTurn implements backend.Backend.
func (a *A2A) RunTurn(ctx context.Context, req *backend.TurnRequest, emit backend.Emit) error {
	ctx, cancel := turnContext(ctx, a.Timeout)
	defer cancel()
	d, err := a.upstream(ctx)
	if err != nil {
		return classifyUpstream(ctx, err)
	}
	st := loadA2AState(req.Session)
	msg := upstreamMessage(req, st)
	r := &relay{emit: emit, st: st, gwTask: req.TaskID}
	err = d.up.send(ctx, &a2a.SendMessageRequest{Message: msg}, r.event)
	if ae := upstreamA2AError(err); ae != nil && ae.Code == a2a.CodeTaskNotFound && msg.TaskID != "" && r.upTask == "" {
		// The upstream forgot the task (it restarted): continue its context.
		st.mapTask(req.TaskID, "")
		msg.TaskID = ""
		err = d.up.send(ctx, &a2a.SendMessageRequest{Message: msg}, r.event)
	}
	st.save(req.Session)
	if ctx.Err() != nil && r.upTask != "" && !r.ended {
		// The turn was canceled (or timed out): forward CancelTask (TURN-9).
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		_ = d.up.cancel(cctx, r.upTask)
		cancel()
	}
	switch {
	case errors.Is(err, errTurnEnded):
	case err != nil:
		if ae := upstreamA2AError(err); ae != nil {
			// Internal (TURN-8): the upstream's message stays in the log.
			return fmt.Errorf("upstream answered A2A error %d", ae.Code)
		}
		cerr := classifyUpstream(ctx, err)
		var te *backend.TurnError
		if errors.As(cerr, &te) && te.Kind == backend.ErrorKindAuth {
			a.forget() // discover again: the upstream may have changed
		}
		return cerr
	case !r.ended:
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// The upstream stream stopped without a final state (TURN-8).
		return errKind(backend.ErrorKindTransient, errors.New("upstream stream ended before the task did"))
	}
	return nil
}

// upstreamA2AError returns the A2A error an upstream answered, if err is one.
func upstreamA2AError(err error) *a2a.Error {
	if err == nil {
		return nil
	}
	var ae *a2a.Error
	if errors.As(err, &ae) {
		return ae
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		return ce.A2A
	}
	return nil
}

// upstreamMessage is the turn's user message as sent upstream: the
// upstream context (and interrupted upstream task) in place of the
// gateway's ids.
func upstreamMessage(req *backend.TurnRequest, st *a2aState) *a2a.Message {
	m := &a2a.Message{MessageID: req.MessageID, Role: a2a.RoleUser}
	if req.Message != nil {
		c := *req.Message
		m = &c
		m.Metadata = nil         // the gateway's namespace metadata stays here
		m.ReferenceTaskIDs = nil // gateway task ids mean nothing upstream
	}
	if len(m.Parts) == 0 {
		m.Parts = []a2a.Part{a2a.TextPart(req.Text)}
	}
	m.ContextID = st.ContextID
	m.TaskID = st.Tasks[req.TaskID]
	return m
}

// errTurnEnded stops reading an upstream stream once the turn has ended.
var errTurnEnded = errors.New("turn ended")

// relay turns upstream events into turn events.
type relay struct {
	emit   backend.Emit
	st     *a2aState
	gwTask string
	upTask string
	ended  bool
}

// event handles one upstream event.
func (r *relay) event(ev a2a.StreamResponse) error {
	if r.ended {
		return errTurnEnded
	}
	switch {
	case ev.Message != nil:
		r.see(ev.Message.ContextID, "")
		if err := r.emit(backend.Event{V: backend.EventVersion, Type: backend.EventMessage, Text: partsText(ev.Message.Parts), Parts: mustParts(ev.Message.Parts)}); err != nil {
			return err
		}
		return r.end(a2a.TaskStateInputRequired, nil)
	case ev.Task != nil:
		t := ev.Task
		r.see(t.ContextID, t.ID)
		for _, art := range t.Artifacts {
			if err := r.artifact(art, false, true); err != nil {
				return err
			}
		}
		if t.Status.State.Terminal() || t.Status.State.Interrupted() {
			return r.end(t.Status.State, t.Status.Message)
		}
	case ev.StatusUpdate != nil:
		u := ev.StatusUpdate
		r.see(u.ContextID, u.TaskID)
		s := u.Status.State
		if s.Terminal() || s.Interrupted() {
			return r.end(s, u.Status.Message)
		}
		if u.Status.Message != nil {
			if text := partsText(u.Status.Message.Parts); text != "" {
				return r.emit(backend.Event{V: backend.EventVersion, Type: backend.EventText, Text: text})
			}
		}
	case ev.ArtifactUpdate != nil:
		u := ev.ArtifactUpdate
		r.see(u.ContextID, u.TaskID)
		return r.artifact(u.Artifact, u.Append, u.LastChunk)
	}
	return nil
}

// see records the upstream context and task ids.
func (r *relay) see(contextID, taskID string) {
	if contextID != "" {
		r.st.ContextID = contextID
	}
	if taskID != "" {
		r.upTask = taskID
	}
}

func (r *relay) artifact(art a2a.Artifact, appendTo, last bool) error {
	return r.emit(backend.Event{V: backend.EventVersion, Type: backend.EventArtifact, ArtifactID: art.ArtifactID, Name: art.Name,
		Parts: mustParts(art.Parts), Append: appendTo, LastChunk: last})
}

// end emits the end event of an upstream final state and maps the
// gateway task to an interrupted upstream task (for the follow-up).
func (r *relay) end(s a2a.TaskState, m *a2a.Message) error {
	r.ended = true
	if s.Interrupted() && r.upTask != "" {
		r.st.mapTask(r.gwTask, r.upTask)
	} else {
		r.st.mapTask(r.gwTask, "")
	}
	ev := backend.Event{V: backend.EventVersion, Type: backend.EventEnd, Outcome: outcomeOf(s)}
	if m != nil {
		ev.Text = partsText(m.Parts)
	}
	if err := r.emit(ev); err != nil {
		return err
	}
	return errTurnEnded
}

// outcomeOf maps an upstream final state to a turn outcome.
func outcomeOf(s a2a.TaskState) string {
	switch s {
	case a2a.TaskStateCompleted:
		return backend.OutcomeCompleted
	case a2a.TaskStateFailed:
		return backend.OutcomeFailed
	case a2a.TaskStateCanceled:
		return backend.OutcomeCanceled
	case a2a.TaskStateRejected:
		return backend.OutcomeRejected
	}
	return backend.OutcomeInputRequired
}

// partsText joins the text parts of a message.
func partsText(ps []a2a.Part) string {
	var b strings.Builder
	for _, p := range ps {
		if p.Text != nil {
			b.WriteString(*p.Text)
		}
	}
	return b.String()
}

func mustParts(ps []a2a.Part) json.RawMessage {
	b, err := json.Marshal(ps)
	if err != nil {
		return nil
	}
	return b
}

var _ backend.Backend = (*A2A)(nil)

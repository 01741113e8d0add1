package tests

// Interop with the official A2A Go SDK client (github.com/a2aproject/a2a-go/v2,
// pinned in go.mod), over the JSON-RPC and the HTTP+JSON (REST) bindings.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
)

// interopSlowEcho is a turn that runs for about 3 s (20 chunks, 150 ms apart),
// long enough to cancel it or subscribe to it while it runs. Prompts sent to
// it must be at least 14 characters long to get all 20 chunks.
const interopSlowEcho = "backend echo {\n\t\t\tchunks 20\n\t\t\tdelay 150ms\n\t\t}"

func TestInteropGoSDK(t *testing.T) {
	t.Parallel()
	for _, binding := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON} {
		t.Run(string(binding), func(t *testing.T) {
			t.Parallel()
			fast := interopStartGateway(t, "backend echo")
			slow := interopStartGateway(t, interopSlowEcho)
			interopGoScenario(t, binding, fast, slow)
			fast.interopCheckVersionHeaders(t, "a2a-go "+string(binding)+" (fast gateway)")
			slow.interopCheckVersionHeaders(t, "a2a-go "+string(binding)+" (slow gateway)")
			interopCheckBindingUsed(t, binding, fast)
			interopCheckBindingUsed(t, binding, slow)
		})
	}
}

// interopCheckBindingUsed asserts from the access log that the calls went
// over the wanted binding (JSON-RPC: POST /; REST: the /message:… and
// /tasks… routes).
func interopCheckBindingUsed(t *testing.T, binding a2a.TransportProtocol, gw *interopGateway) {
	t.Helper()
	for _, e := range gw.interopAccessLog(t) {
		if strings.HasPrefix(e.URI, "/.well-known/") {
			continue
		}
		isRPC := e.Method == "POST" && e.URI == "/"
		isGRPC := e.Method == "POST" && strings.HasPrefix(e.URI, "/lf.a2a.v1.A2AService/")
		if (binding == a2a.TransportProtocolJSONRPC) != isRPC || (binding == a2a.TransportProtocolGRPC) != isGRPC {
			t.Errorf("binding %s: unexpected request %s %s", binding, e.Method, e.URI)
		}
	}
}

func interopGoClient(t *testing.T, ctx context.Context, binding a2a.TransportProtocol, gw *interopGateway) (*a2aclient.Client, *a2a.AgentCard) {
	t.Helper()
	resolver := agentcard.DefaultResolver
	if gw.httpClient != nil {
		resolver = agentcard.NewResolver(gw.httpClient)
	}
	card, err := resolver.Resolve(ctx, gw.BaseURL)
	if err != nil {
		t.Fatalf("resolve agent card: %v", err)
	}
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithConfig(a2aclient.Config{
		PreferredTransports: []a2a.TransportProtocol{binding},
	}), interopGRPCTransport(gw))
	if err != nil {
		t.Fatalf("NewFromCard(%s): %v", binding, err)
	}
	t.Cleanup(func() { _ = client.Destroy() })
	return client, card
}

func interopGoScenario(t *testing.T, binding a2a.TransportProtocol, fast, slow *interopGateway) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	client, card := interopGoClient(t, ctx, binding, fast)
	slowClient, _ := interopGoClient(t, ctx, binding, slow)

	t.Run("AgentCard", func(t *testing.T) {
		if card.Name != "test-agent" {
			t.Errorf("card name = %q, want test-agent", card.Name)
		}
		if !card.Capabilities.Streaming {
			t.Errorf("card capabilities.streaming = false, want true")
		}
		if len(card.Skills) != 1 || card.Skills[0].ID != "echo" || card.Skills[0].Name != "Echo" {
			t.Errorf("card skills = %+v, want one skill echo/Echo", card.Skills)
		}
		found := false
		for _, iface := range card.SupportedInterfaces {
			if iface.ProtocolBinding == binding {
				found = true
				if iface.ProtocolVersion != "1.0" {
					t.Errorf("interface %s has protocolVersion %q, want 1.0", binding, iface.ProtocolVersion)
				}
				if !strings.HasPrefix(iface.URL, interopInterfaceURL(binding, fast.BaseURL)) {
					t.Errorf("interface %s url = %q, want it under %s", binding, iface.URL, fast.BaseURL)
				}
			}
		}
		if !found {
			t.Errorf("card has no %s interface: %+v", binding, card.SupportedInterfaces)
		}
	})

	// SendMessage (blocking): a Task that ended its turn INPUT_REQUIRED.
	prompt1 := "hello from a2a-go over " + string(binding)
	var first *a2a.Task
	t.Run("SendMessage", func(t *testing.T) {
		task := interopGoSendTask(t, ctx, client, "SendMessage", &a2a.SendMessageRequest{
			Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(prompt1)),
		})
		first = task
		interopGoCheckTurnDone(t, task, prompt1)
		if !interopGoHistoryHas(task, a2a.MessageRoleUser, prompt1) {
			t.Errorf("history of %s lacks the user message %q: %s", task.ID, prompt1, interopGoDescribeHistory(task))
		}
	})
	if first == nil {
		t.Fatal("no task from SendMessage; stopping")
	}

	t.Run("SendStreamingMessage", func(t *testing.T) {
		prompt := "streaming via a2a-go " + string(binding)
		var events []a2a.Event
		for ev, err := range client.SendStreamingMessage(ctx, &a2a.SendMessageRequest{
			Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(prompt)),
		}) {
			if err != nil {
				t.Fatalf("stream error after %d events: %v", len(events), err)
			}
			events = append(events, ev)
		}
		interopGoCheckStream(t, events, prompt, a2a.TaskStateInputRequired)
	})

	var followUp *a2a.Task
	t.Run("FollowUpSameContext", func(t *testing.T) {
		prompt := "second turn from a2a-go"
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(prompt))
		msg.ContextID = first.ContextID
		task := interopGoSendTask(t, ctx, client, "SendMessage (follow-up)", &a2a.SendMessageRequest{Message: msg})
		followUp = task
		if task.ContextID != first.ContextID {
			t.Errorf("follow-up contextId = %q, want the first turn's %q", task.ContextID, first.ContextID)
		}
		if task.ID == first.ID {
			t.Errorf("follow-up reused task id %q, want a new task", task.ID)
		}
		interopGoCheckTurnDone(t, task, prompt)
	})

	t.Run("GetTask", func(t *testing.T) {
		task, err := client.GetTask(ctx, &a2a.GetTaskRequest{ID: first.ID})
		if err != nil {
			t.Fatalf("GetTask: %v", err)
		}
		if task.ID != first.ID || task.ContextID != first.ContextID {
			t.Errorf("GetTask returned %s/%s, want %s/%s", task.ID, task.ContextID, first.ID, first.ContextID)
		}
		interopGoCheckTurnDone(t, task, prompt1)

		zero := 0
		task, err = client.GetTask(ctx, &a2a.GetTaskRequest{ID: first.ID, HistoryLength: &zero})
		if err != nil {
			t.Fatalf("GetTask historyLength=0: %v", err)
		}
		if len(task.History) != 0 {
			t.Errorf("GetTask historyLength=0 returned %d history messages, want 0", len(task.History))
		}

		_, err = client.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID("no-such-task-" + strings.ReplaceAll(string(binding), "+", "-"))})
		if !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("GetTask(unknown id) error = %v, want a2a.ErrTaskNotFound", err)
		}
	})

	t.Run("ListTasks", func(t *testing.T) {
		if followUp == nil {
			t.Skip("no follow-up task")
		}
		resp, err := client.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: first.ContextID})
		if err != nil {
			t.Fatalf("ListTasks: %v", err)
		}
		ids := map[a2a.TaskID]bool{}
		for _, task := range resp.Tasks {
			ids[task.ID] = true
			if task.ContextID != first.ContextID {
				t.Errorf("ListTasks(contextId=%s) returned task %s of context %s", first.ContextID, task.ID, task.ContextID)
			}
		}
		if len(resp.Tasks) != 2 || !ids[first.ID] || !ids[followUp.ID] {
			t.Errorf("ListTasks(contextId) = %d tasks %v, want exactly %s and %s", len(resp.Tasks), ids, first.ID, followUp.ID)
		}
		if resp.TotalSize != 2 {
			t.Errorf("ListTasks totalSize = %d, want 2", resp.TotalSize)
		}
		if resp.NextPageToken != "" {
			t.Errorf("ListTasks nextPageToken = %q, want \"\" on the last page", resp.NextPageToken)
		}
		if len(resp.Tasks) == 2 {
			a, b := resp.Tasks[0].Status.Timestamp, resp.Tasks[1].Status.Timestamp
			if a != nil && b != nil && a.Before(*b) {
				t.Errorf("ListTasks not sorted by status.timestamp descending: %v before %v", a, b)
			}
		}

		// All tasks (no filter) include the streaming turn as well.
		all, err := client.ListTasks(ctx, &a2a.ListTasksRequest{})
		if err != nil {
			t.Fatalf("ListTasks (no filter): %v", err)
		}
		if len(all.Tasks) < 3 || all.TotalSize < 3 {
			t.Errorf("ListTasks (no filter) = %d tasks, totalSize %d; want at least 3", len(all.Tasks), all.TotalSize)
		}

		page, err := client.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: 1})
		if err != nil {
			t.Fatalf("ListTasks pageSize=1: %v", err)
		}
		if len(page.Tasks) != 1 || page.NextPageToken == "" || page.PageSize != 1 {
			t.Errorf("ListTasks pageSize=1: %d tasks, nextPageToken %q, pageSize %d; want 1 task, a token, pageSize 1",
				len(page.Tasks), page.NextPageToken, page.PageSize)
		}
	})

	t.Run("CancelTask", func(t *testing.T) {
		prompt := "please cancel this long running turn (" + string(binding) + ")"
		sctx, stop := context.WithCancel(ctx)
		defer stop()
		s := interopGoStream(t, sctx, slowClient, prompt)
		task, canceled := s.cancelRunning(ctx, slowClient)
		if canceled.ID != task.ID || canceled.Status.State != a2a.TaskStateCanceled {
			t.Errorf("CancelTask returned %s in %s, want %s in %s", canceled.ID, canceled.Status.State, task.ID, a2a.TaskStateCanceled)
		}
		// The stream ends with the terminal CANCELED state.
		events := s.rest()
		last := events[len(events)-1]
		if st := interopGoEventState(last); st != a2a.TaskStateCanceled {
			t.Errorf("last stream event after cancel is %T in %q, want state %s", last, st, a2a.TaskStateCanceled)
		}
		got, err := slowClient.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
		if err != nil {
			t.Fatalf("GetTask after cancel: %v", err)
		}
		if got.Status.State != a2a.TaskStateCanceled {
			t.Errorf("GetTask after cancel: state %s, want %s", got.Status.State, a2a.TaskStateCanceled)
		}
		// A terminal task cannot be subscribed to: the gateway answers with a
		// plain (non-SSE) UnsupportedOperationError, as the spec recommends.
		var subErr error
		subEvents := 0
		for _, err := range slowClient.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
			if err != nil {
				subErr = err
				break
			}
			subEvents++
		}
		if subEvents != 0 {
			t.Errorf("SubscribeToTask(canceled task) yielded %d events, want none", subEvents)
		}
		switch {
		case errors.Is(subErr, a2a.ErrUnsupportedOperation):
		case subErr == nil && binding == a2a.TransportProtocolJSONRPC:
			// a2a-go v2.3.1's JSON-RPC client parses every streaming reply as
			// SSE without looking at its Content-Type, so a plain
			// application/json JSON-RPC error before the stream starts shows
			// up as an empty stream with no error (its own server always
			// sends errors as SSE events). Known client limitation.
			t.Logf("a2a-go JSON-RPC client swallowed the pre-stream UnsupportedOperationError (empty stream, nil error): known a2a-go v2.3.1 limitation")
		default:
			t.Errorf("SubscribeToTask(canceled task) error = %v, want a2a.ErrUnsupportedOperation", subErr)
		}
	})

	t.Run("SubscribeToTask", func(t *testing.T) {
		prompt := "subscribe to this long running turn (" + string(binding) + ")"
		task := interopGoSendTask(t, ctx, slowClient, "SendMessage returnImmediately", &a2a.SendMessageRequest{
			Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(prompt)),
			Config:  &a2a.SendMessageConfig{ReturnImmediately: true},
		})
		if task.Status.State.Terminal() || task.Status.State == a2a.TaskStateInputRequired {
			t.Fatalf("SendMessage returnImmediately returned state %s; want a running task (SUBMITTED/WORKING)", task.Status.State)
		}
		var events []a2a.Event
		for ev, err := range slowClient.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
			if err != nil {
				t.Fatalf("subscribe stream error after %d events: %v", len(events), err)
			}
			events = append(events, ev)
		}
		interopGoCheckStream(t, events, prompt, a2a.TaskStateInputRequired)
		if len(events) > 0 {
			if got, ok := events[0].(*a2a.Task); ok && got.ID != task.ID {
				t.Errorf("subscribe first event is task %s, want %s", got.ID, task.ID)
			}
		}
	})

	// RPC-11: a subscription to an input-required task stays open until a
	// follow-up turn of the task ends, and carries that turn's events.
	t.Run("SubscribeToInputRequiredTask", func(t *testing.T) {
		res, err := client.SendMessage(ctx, &a2a.SendMessageRequest{
			Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("wait for me ("+string(binding)+")")),
		})
		if err != nil {
			t.Fatalf("SendMessage: %v", err)
		}
		task, ok := res.(*a2a.Task)
		if !ok || task.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("SendMessage result %T %+v, want an INPUT_REQUIRED task", res, res)
		}
		firstEv := make(chan a2a.Event, 1)
		done := make(chan []a2a.Event, 1)
		subErr := make(chan error, 1)
		go func() {
			var events []a2a.Event
			for ev, err := range client.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
				if err != nil {
					subErr <- err
					break
				}
				if len(events) == 0 {
					firstEv <- ev
				}
				events = append(events, ev)
			}
			done <- events
		}()
		select {
		case ev := <-firstEv:
			if got, ok := ev.(*a2a.Task); !ok || got.ID != task.ID || got.Status.State != a2a.TaskStateInputRequired {
				t.Fatalf("first subscribe event %T %+v, want the INPUT_REQUIRED Task", ev, ev)
			}
		case err := <-subErr:
			t.Fatalf("SubscribeToTask: %v", err)
		case <-time.After(20 * time.Second):
			t.Fatal("no first event from SubscribeToTask")
		}
		prompt := "the follow-up a subscriber sees (" + string(binding) + ")"
		if _, err := client.SendMessage(ctx, &a2a.SendMessageRequest{
			Message: a2a.NewMessageForTask(a2a.MessageRoleUser, task, a2a.NewTextPart(prompt)),
		}); err != nil {
			t.Fatalf("follow-up SendMessage: %v", err)
		}
		var events []a2a.Event
		select {
		case events = <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("subscription did not end after the follow-up turn")
		}
		select {
		case err := <-subErr:
			t.Fatalf("subscribe stream error: %v", err)
		default:
		}
		if len(events) < 3 {
			t.Fatalf("subscription events: %s, want the Task and the follow-up's updates", interopGoDescribeEvents(events))
		}
		if st := interopGoEventState(events[1]); st != a2a.TaskStateWorking {
			t.Errorf("event after the Task is in %q, want %s: %s", st, a2a.TaskStateWorking, interopGoDescribeEvents(events))
		}
		for i, ev := range events {
			if info := ev.TaskInfo(); info.TaskID != task.ID {
				t.Errorf("event %d (%T) is for task %s, want %s", i, ev, info.TaskID, task.ID)
			}
		}
		last, ok := events[len(events)-1].(*a2a.TaskStatusUpdateEvent)
		if !ok || last.Status.State != a2a.TaskStateInputRequired || !strings.Contains(interopGoText(last.Status.Message), "Echo: "+prompt) {
			t.Errorf("last event %s, want the follow-up's INPUT_REQUIRED answer %q", interopGoDescribeEvents(events[len(events)-1:]), "Echo: "+prompt)
		}
	})
}

// interopGoCheckStream asserts the event order of a SendStreamingMessage or
// SubscribeToTask stream: a Task first, then only status/artifact updates of
// that task, the last one in wantLast, whose message is "Echo: <prompt>".
func interopGoCheckStream(t *testing.T, events []a2a.Event, prompt string, wantLast a2a.TaskState) {
	t.Helper()
	if len(events) < 2 {
		t.Fatalf("stream had %d events, want a Task and status updates: %s", len(events), interopGoDescribeEvents(events))
	}
	task, ok := events[0].(*a2a.Task)
	if !ok {
		t.Fatalf("first stream event is %T, want *a2a.Task: %s", events[0], interopGoDescribeEvents(events))
	}
	if task.ID == "" || task.ContextID == "" {
		t.Errorf("first Task event lacks id or contextId: %+v", task)
	}
	if task.Status.State.Terminal() {
		t.Errorf("first Task event is already terminal (%s)", task.Status.State)
	}
	sawWorking := false
	for i, ev := range events[1:] {
		info := ev.TaskInfo()
		if info.TaskID != task.ID || info.ContextID != task.ContextID {
			t.Errorf("event %d (%T) is for %s/%s, want %s/%s", i+1, ev, info.TaskID, info.ContextID, task.ID, task.ContextID)
		}
		switch e := ev.(type) {
		case *a2a.TaskStatusUpdateEvent:
			if e.Status.State == a2a.TaskStateWorking {
				sawWorking = true
			}
		case *a2a.TaskArtifactUpdateEvent, *a2a.Task:
		default:
			t.Errorf("event %d is %T, want a status or artifact update", i+1, ev)
		}
	}
	if !sawWorking {
		t.Errorf("stream had no TASK_STATE_WORKING status update: %s", interopGoDescribeEvents(events))
	}
	last := events[len(events)-1]
	if st := interopGoEventState(last); st != wantLast {
		t.Fatalf("last stream event is %T in %q, want %s: %s", last, st, wantLast, interopGoDescribeEvents(events))
	}
	// Once the final state is reached, nothing but that state may follow (a
	// server may re-send a final Task snapshot before it closes the stream).
	for i, ev := range events {
		if st := interopGoEventState(ev); st == wantLast || st.Terminal() {
			for j, later := range events[i+1:] {
				if lst := interopGoEventState(later); lst != st {
					t.Errorf("event %d (%T, %q) follows the final state %s of event %d", i+1+j, later, lst, st, i)
				}
			}
			break
		}
	}
	want := "Echo: " + prompt
	var msg *a2a.Message
	switch e := last.(type) {
	case *a2a.TaskStatusUpdateEvent:
		msg = e.Status.Message
	case *a2a.Task:
		msg = e.Status.Message
	}
	if msg == nil || !strings.Contains(interopGoText(msg), want) {
		t.Errorf("final status message = %q, want it to contain %q", interopGoText(msg), want)
	}
	if msg != nil && msg.Role != a2a.MessageRoleAgent {
		t.Errorf("final status message role = %s, want %s", msg.Role, a2a.MessageRoleAgent)
	}
}

// interopGoCheckTurnDone asserts a Task whose turn ended INPUT_REQUIRED with
// the echo answer in its status message (and in its history, if any).
func interopGoCheckTurnDone(t *testing.T, task *a2a.Task, prompt string) {
	t.Helper()
	want := "Echo: " + prompt
	if task.ID == "" || task.ContextID == "" {
		t.Errorf("task lacks id or contextId: id=%q contextId=%q", task.ID, task.ContextID)
	}
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Errorf("task %s state = %s, want %s", task.ID, task.Status.State, a2a.TaskStateInputRequired)
	}
	if task.Status.Message == nil || !strings.Contains(interopGoText(task.Status.Message), want) {
		t.Errorf("task %s status message = %q, want it to contain %q", task.ID, interopGoText(task.Status.Message), want)
	}
	if len(task.History) > 0 && !interopGoHistoryHas(task, a2a.MessageRoleAgent, want) {
		t.Errorf("task %s history lacks the agent answer %q: %s", task.ID, want, interopGoDescribeHistory(task))
	}
}

func interopGoEventState(ev a2a.Event) a2a.TaskState {
	switch e := ev.(type) {
	case *a2a.Task:
		return e.Status.State
	case *a2a.TaskStatusUpdateEvent:
		return e.Status.State
	}
	return ""
}

func interopGoText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range m.Parts {
		b.WriteString(p.Text())
	}
	return b.String()
}

func interopGoHistoryHas(task *a2a.Task, role a2a.MessageRole, text string) bool {
	for _, m := range task.History {
		if m.Role == role && strings.Contains(interopGoText(m), text) {
			return true
		}
	}
	return false
}

func interopGoDescribeHistory(task *a2a.Task) string {
	var parts []string
	for _, m := range task.History {
		parts = append(parts, fmt.Sprintf("%s:%q", m.Role, interopGoText(m)))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func interopGoDescribeEvents(events []a2a.Event) string {
	var parts []string
	for _, ev := range events {
		s := fmt.Sprintf("%T", ev)
		if st := interopGoEventState(ev); st != "" {
			s += "(" + string(st) + ")"
		}
		parts = append(parts, s)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// interopGoStreamItem is one event or error of an a2a-go stream.
type interopGoStreamItem struct {
	ev  a2a.Event
	err error
}

// interopGoEvents is an a2a-go SendStreamingMessage stream read in the
// background; next and rest take its events (the ones taken so far are
// in events).
type interopGoEvents struct {
	t      *testing.T
	ch     chan interopGoStreamItem
	events []a2a.Event
}

// interopGoStream starts SendStreamingMessage of a user message with
// prompt on client; the stream stops with ctx.
func interopGoStream(t *testing.T, ctx context.Context, client *a2aclient.Client, prompt string) *interopGoEvents {
	s := &interopGoEvents{t: t, ch: make(chan interopGoStreamItem, 256)}
	go func() {
		defer close(s.ch)
		for ev, err := range client.SendStreamingMessage(ctx, &a2a.SendMessageRequest{
			Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(prompt)),
		}) {
			s.ch <- interopGoStreamItem{ev, err}
			if err != nil {
				return
			}
		}
	}()
	return s
}

// next returns the next event, false at the end of the stream; it fails
// the test on a stream error or when nothing comes within 20s.
func (s *interopGoEvents) next() (a2a.Event, bool) {
	s.t.Helper()
	select {
	case it, ok := <-s.ch:
		if !ok {
			return nil, false
		}
		if it.err != nil {
			s.t.Fatalf("stream error after %d events: %v", len(s.events), it.err)
		}
		s.events = append(s.events, it.ev)
		return it.ev, true
	case <-time.After(20 * time.Second):
		s.t.Fatalf("no stream event within 20s (after %d events)", len(s.events))
		return nil, false
	}
}

// rest reads the stream to its end and returns every event it carried.
func (s *interopGoEvents) rest() []a2a.Event {
	s.t.Helper()
	for {
		if _, ok := s.next(); !ok {
			return s.events
		}
	}
}

// cancelRunning takes the stream's first event, which must be the Task,
// waits until the turn produces text (so the cancel hits a running
// turn), and cancels the task on client; it fails the test when CancelTask
// fails, and returns the task and CancelTask's answer.
func (s *interopGoEvents) cancelRunning(ctx context.Context, client *a2aclient.Client) (task, canceled *a2a.Task) {
	t := s.t
	t.Helper()
	ev, ok := s.next()
	if !ok {
		t.Fatal("stream closed before the first event")
	}
	task, isTask := ev.(*a2a.Task)
	if !isTask {
		t.Fatalf("first stream event is %T, want *a2a.Task", ev)
	}
	for {
		ev, ok := s.next()
		if !ok {
			t.Fatal("stream closed before the turn produced text")
		}
		if su, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && su.Status.Message != nil && interopGoText(su.Status.Message) != "" {
			break
		}
	}
	canceled, err := client.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatalf("CancelTask(%s): %v", task.ID, err)
	}
	return task, canceled
}

// interopGoSendTask sends req with client and returns the task it
// answers; it fails the test (naming the call what) on an error and on a
// result that is not a task.
func interopGoSendTask(t *testing.T, ctx context.Context, client *a2aclient.Client, what string, req *a2a.SendMessageRequest) *a2a.Task {
	t.Helper()
	res, err := client.SendMessage(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("%s result is %T, want *a2a.Task", what, res)
	}
	return task
}

package backends

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/backend"
)

// Unit tests of the exec, http and openai backends (TURN-3, TURN-4,
// TURN-5, TURN-8) and of the stream limits (each at -1, =, +1).

type recorder struct {
	mu     sync.Mutex
	events []backend.Event
}

func (r *recorder) emit(ev backend.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
	return nil
}

func (r *recorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, ev := range r.events {
		if ev.Type == backend.EventText {
			b.WriteString(ev.Text)
		}
	}
	return b.String()
}

func turnReq(t *testing.T, prompt string) *backend.TurnRequest {
	return &backend.TurnRequest{V: 1, Type: "turn", ContextID: "c", TaskID: "t", MessageID: "m", Cwd: t.TempDir(), Prompt: prompt, Session: &backend.Session{}}
}

func groupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(-pgid, 0) != syscall.ESRCH {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still alive", pgid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestLineReaderLimits(t *testing.T) {
	for _, n := range []int{9, 10, 11} {
		lr := newLineReader(strings.NewReader(strings.Repeat("x", n)+"\n"), 10, 1<<20)
		_, err := lr.next()
		if (err == nil) != (n <= 10) {
			t.Errorf("line of %d bytes (limit 10): %v", n, err)
		}
	}
	for _, n := range []int64{19, 20, 21} { // total includes the newline
		lr := newLineReader(strings.NewReader(strings.Repeat("y", int(n-1))+"\n"), 1<<10, 20)
		_, err := lr.next()
		if (err == nil) != (n <= 20) {
			t.Errorf("output of %d bytes (limit 20): %v", n, err)
		}
	}
}

func TestExecPerTurnBasics(t *testing.T) {
	script := `read -r line; case "$line" in
*crash*) echo boom >&2; exit 7;;
*malformed*) echo 'not json';;
*noend*) echo '{"v":1,"type":"text","text":"partial"}';;
*v2*) echo '{"v":2,"type":"text","text":"x"}';;
*) echo '{"v":1,"type":"text","text":"pid '$PPID'"}'; echo '{"v":1,"type":"end","outcome":"input_required"}';;
esac`
	e := &Exec{Argv: []string{"bash", "-c", script}, GracePeriod: 200 * time.Millisecond}
	if err := e.Validate(); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	if err := e.RunTurn(context.Background(), turnReq(t, "hello"), rec.emit); err != nil {
		t.Fatalf("RunTurn: %v", err)
	}
	var pid int
	fmt.Sscanf(rec.text(), "pid %d", &pid)
	groupGone(t, pid)

	if err := e.RunTurn(context.Background(), turnReq(t, "crash"), (&recorder{}).emit); err == nil || !strings.Contains(err.Error(), "status 7") {
		t.Errorf("crash: %v", err)
	}
	if err := e.RunTurn(context.Background(), turnReq(t, "malformed"), (&recorder{}).emit); err == nil {
		t.Error("malformed output accepted")
	}
	if err := e.RunTurn(context.Background(), turnReq(t, "v2"), (&recorder{}).emit); err == nil {
		t.Error("protocol version 2 accepted")
	}
	rec = &recorder{}
	if err := e.RunTurn(context.Background(), turnReq(t, "noend"), rec.emit); err != nil || rec.text() != "partial" {
		t.Errorf("exit 0 without end: %v %q", err, rec.text())
	}
}

func TestExecTextFormatAndOutputLimit(t *testing.T) {
	e := &Exec{Argv: []string{"printf", "line one\nline two\n"}, Format: FormatText}
	rec := &recorder{}
	if err := e.RunTurn(context.Background(), turnReq(t, "x"), rec.emit); err != nil || rec.text() != "line one\nline two\n" {
		t.Errorf("text format: %v %q", err, rec.text())
	}
	if err := (&Exec{Argv: []string{"x"}, Format: FormatText, Mode: ModePerContext}).Validate(); err == nil {
		t.Error("text format per_context accepted")
	}
	// 18 bytes of output: "line one\nline two\n".
	for _, max := range []int64{17, 18, 19} {
		e := &Exec{Argv: []string{"printf", "line one\nline two\n"}, Format: FormatText, MaxOutputBytes: max}
		err := e.RunTurn(context.Background(), turnReq(t, "x"), (&recorder{}).emit)
		if (err == nil) != (max >= 18) {
			t.Errorf("max_output %d: %v", max, err)
		}
	}
}

func TestExecCancelTimeoutKillGroup(t *testing.T) {
	// The script starts a child in its group and ignores SIGTERM.
	script := `trap '' TERM; sleep 30 & echo '{"v":1,"type":"text","text":"pid '$PPID'"}'; while :; do sleep 1; done`
	e := &Exec{Argv: []string{"bash", "-c", script}, GracePeriod: 200 * time.Millisecond, Timeout: 700 * time.Millisecond}
	rec := &recorder{}
	start := time.Now()
	err := e.RunTurn(context.Background(), turnReq(t, "x"), rec.emit)
	var te *backend.TurnError
	if !errors.As(err, &te) || te.Kind != backend.ErrorKindTransient {
		t.Fatalf("timeout: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("timeout took %v", d)
	}
	var pid int
	fmt.Sscanf(rec.text(), "pid %d", &pid)
	groupGone(t, pid)

	e.Timeout = 0
	ctx, cancel := context.WithCancel(context.Background())
	rec = &recorder{}
	done := make(chan error, 1)
	go func() { done <- e.RunTurn(ctx, turnReq(t, "x"), rec.emit) }()
	for rec.text() == "" {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancel: %v", err)
	}
	fmt.Sscanf(rec.text(), "pid %d", &pid)
	groupGone(t, pid)
}

func TestExecPerContextSessionAndClose(t *testing.T) {
	script := `n=0; while IFS= read -r line; do case "$line" in *cancel*) continue;; esac; n=$((n+1)); echo '{"v":1,"type":"text","text":"'$n' '$PPID'"}'; echo '{"v":1,"type":"end"}'; done`
	e := &Exec{Argv: []string{"bash", "-c", script}, Mode: ModePerContext, GracePeriod: 200 * time.Millisecond}
	sess := &backend.Session{}
	cwd := t.TempDir()
	var pids []int
	for i := 1; i <= 2; i++ {
		req := turnReq(t, "x")
		req.Session, req.Cwd = sess, cwd
		rec := &recorder{}
		if err := e.RunTurn(context.Background(), req, rec.emit); err != nil {
			t.Fatal(err)
		}
		var n, pid int
		fmt.Sscanf(rec.text(), "%d %d", &n, &pid)
		if n != i {
			t.Errorf("turn %d saw counter %d", i, n)
		}
		pids = append(pids, pid)
	}
	if pids[0] != pids[1] || PGID(sess) != pids[0] {
		t.Fatalf("per_context used several processes: %v (session %d)", pids, PGID(sess))
	}
	e.CloseSession(sess)
	groupGone(t, pids[0])
	if sess.Value != nil {
		t.Error("session still holds the process")
	}
}

func TestHTTPStatusMapping(t *testing.T) {
	for code, kind := range map[int]string{401: backend.ErrorKindAuth, 403: backend.ErrorKindAuth, 408: backend.ErrorKindTransient, 429: backend.ErrorKindTransient, 500: backend.ErrorKindTransient, 503: backend.ErrorKindTransient, 400: "", 404: ""} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "upstream secret body", code)
		}))
		err := (&HTTP{URL: srv.URL}).RunTurn(context.Background(), turnReq(t, "x"), (&recorder{}).emit)
		srv.Close()
		var te *backend.TurnError
		switch {
		case err == nil:
			t.Errorf("%d: no error", code)
		case strings.Contains(err.Error(), "secret"):
			t.Errorf("%d: error holds the body: %v", code, err)
		case kind == "" && errors.As(err, &te):
			t.Errorf("%d: kind %s, want internal", code, te.Kind)
		case kind != "" && (!errors.As(err, &te) || te.Kind != kind):
			t.Errorf("%d: %v, want %s", code, err, kind)
		}
	}
	// Connection refused is transient.
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	var te *backend.TurnError
	if err := (&HTTP{URL: url}).RunTurn(context.Background(), turnReq(t, "x"), (&recorder{}).emit); !errors.As(err, &te) || te.Kind != backend.ErrorKindTransient {
		t.Errorf("connection refused: %v", err)
	}
	for _, bad := range []string{"", "ftp://x", "http://u:p@h/", "/relative"} {
		if (&HTTP{URL: bad}).Validate() == nil {
			t.Errorf("url %q accepted", bad)
		}
	}
}

func TestOpenAITrim(t *testing.T) {
	o := &OpenAI{MaxMessages: 3, MaxChars: 10}
	msgs := []ChatMessage{{"user", "aaaa"}, {"assistant", "bbbb"}, {"user", "cc"}, {"assistant", "dd"}}
	got := o.trim(msgs)
	if len(got) != 2 || got[0].Content != "cc" {
		t.Errorf("trim = %v", got)
	}
	// The newest message is kept even over budget.
	got = (&OpenAI{MaxChars: 1}).trim([]ChatMessage{{"user", "long message"}})
	if len(got) != 1 {
		t.Errorf("trim dropped the last message: %v", got)
	}
	if (&OpenAI{BaseURL: "http://h/v1"}).Validate() == nil {
		t.Error("missing model accepted")
	}
}

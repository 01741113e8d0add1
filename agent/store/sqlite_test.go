package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

var bg = context.Background()

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func openTest(t testing.TB, path string, opts SQLiteOptions) *SQLite {
	t.Helper()
	s, err := OpenSQLite(path, opts)
	if err != nil {
		t.Fatalf("OpenSQLite: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func newTestStore(t testing.TB) (*SQLite, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data", "a2a.db")
	return openTest(t, path, SQLiteOptions{}), path
}

func mkTask(id, ctxID string, state a2a.TaskState, ts time.Time) *a2a.Task {
	return &a2a.Task{
		ID:        id,
		ContextID: ctxID,
		Status:    a2a.TaskStatus{State: state, Timestamp: a2a.Timestamp(ts)},
		History: []a2a.Message{{
			MessageID: "m-" + id, ContextID: ctxID, TaskID: id, Role: a2a.RoleUser,
			Parts: []a2a.Part{a2a.TextPart("hello " + id)},
		}},
	}
}

func mustPut(t testing.TB, s FullStore, owner string, task *a2a.Task) {
	t.Helper()
	if err := s.PutTask(bg, owner, task); err != nil {
		t.Fatalf("PutTask(%s, %s): %v", owner, task.ID, err)
	}
}

func mustGet(t testing.TB, s FullStore, owner, id string) *a2a.Task {
	t.Helper()
	got, err := s.GetTask(bg, owner, id)
	if err != nil {
		t.Fatalf("GetTask(%s, %s): %v", owner, id, err)
	}
	return got
}

func mustList(t testing.TB, s FullStore, q ListQuery) ListResult {
	t.Helper()
	res, err := s.ListTasks(bg, q)
	if err != nil {
		t.Fatalf("ListTasks(%+v): %v", q, err)
	}
	return res
}

func ids(tasks []a2a.Task) []string {
	out := make([]string, len(tasks))
	for i := range tasks {
		out[i] = tasks[i].ID
	}
	return out
}

func TestPutGetRoundtrip(t *testing.T) { eachStore(t, testPutGetRoundtrip) }

func testPutGetRoundtrip(t *testing.T, s FullStore) {
	want := &a2a.Task{
		ID:        "task-1",
		ContextID: "ctx-1",
		Status: a2a.TaskStatus{
			State: a2a.TaskStateInputRequired,
			Message: &a2a.Message{
				MessageID: "s1", ContextID: "ctx-1", TaskID: "task-1", Role: a2a.RoleAgent,
				Parts: []a2a.Part{a2a.TextPart("need more <input> & \"quotes\" ✓")},
			},
			Timestamp: "2026-03-01T12:00:00.123Z",
		},
		History: []a2a.Message{
			{
				MessageID: "m1", ContextID: "ctx-1", TaskID: "task-1", Role: a2a.RoleUser,
				Parts: []a2a.Part{
					a2a.TextPart("first"),
					{Raw: []byte{0, 1, 2, 255}, MediaType: "application/octet-stream", Filename: "x.bin"},
					{URL: "https://example.com/f.png", MediaType: "image/png"},
					{Data: json.RawMessage(`{"a":[1,2,{"b":null}],"c":"d"}`), Metadata: map[string]any{"k": "v"}},
				},
				Metadata:         map[string]any{"n": 1.5, "b": true, "nested": map[string]any{"l": []any{"x", 2.0}}},
				Extensions:       []string{"urn:ext:1"},
				ReferenceTaskIDs: []string{"task-0"},
			},
			{MessageID: "m2", Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart("")}},
		},
		Artifacts: []a2a.Artifact{
			{ArtifactID: "a1", Name: "out", Description: "d", Parts: []a2a.Part{a2a.TextPart("result")},
				Metadata: map[string]any{"size": 3.0}, Extensions: []string{"urn:ext:2"}},
			{ArtifactID: "a2", Parts: []a2a.Part{{Data: json.RawMessage(`[true,false]`)}}},
		},
		Metadata: map[string]any{"owner-note": "x", "count": 42.0, "list": []any{1.0, "two", nil}},
	}
	orig, _ := json.Marshal(want)
	mustPut(t, s, "alice", want)
	if now, _ := json.Marshal(want); string(now) != string(orig) {
		t.Fatalf("PutTask modified its argument:\n%s\n%s", orig, now)
	}
	got := mustGet(t, s, "alice", "task-1")
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		t.Fatalf("roundtrip mismatch:\n got %s\nwant %s", g, orig)
	}

	// Replace: fewer artifacts, new status.
	want.Artifacts = nil
	want.Status.State = a2a.TaskStateCompleted
	want.History = append(want.History, a2a.Message{MessageID: "m3", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("third")}})
	mustPut(t, s, "alice", want)
	got = mustGet(t, s, "alice", "task-1")
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("replace mismatch: got %+v", got)
	}
	if got.Artifacts != nil {
		t.Fatalf("artifacts should be gone, got %v", got.Artifacts)
	}

	if _, err := s.GetTask(bg, "alice", "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetTask of a missing id: %v, want ErrNotFound", err)
	}
}

func TestPutTaskValidation(t *testing.T) { eachStore(t, testPutTaskValidation) }

func testPutTaskValidation(t *testing.T, s FullStore) {
	if err := s.PutTask(bg, "a", nil); err == nil {
		t.Fatal("nil task accepted")
	}
	if err := s.PutTask(bg, "a", &a2a.Task{}); err == nil {
		t.Fatal("empty id accepted")
	}
	bad := mkTask("t", "c", a2a.TaskStateWorking, t0)
	bad.Status.Timestamp = "yesterday"
	if err := s.PutTask(bg, "a", bad); err == nil {
		t.Fatal("bad timestamp accepted")
	}
	if _, err := s.ListTasks(bg, ListQuery{Owner: "a"}); err == nil {
		t.Fatal("limit 0 accepted")
	}

	// An empty timestamp is stored as now.
	before := time.Now().Add(-time.Millisecond)
	nots := mkTask("t2", "c", a2a.TaskStateWorking, t0)
	nots.Status.Timestamp = ""
	mustPut(t, s, "a", nots)
	res := mustList(t, s, ListQuery{Owner: "a", Limit: 10, StatusAfter: before})
	if len(res.Tasks) != 1 || res.Tasks[0].ID != "t2" || res.Total != 1 {
		t.Fatalf("task without timestamp not listed as recent: %+v", res)
	}
	if res.Tasks[0].Status.Timestamp != "" {
		t.Fatalf("stored body changed: timestamp %q", res.Tasks[0].Status.Timestamp)
	}
}

func TestForeignOwner(t *testing.T) { eachStore(t, testForeignOwner) }

func testForeignOwner(t *testing.T, s FullStore) {
	task := mkTask("shared-id", "c1", a2a.TaskStateWorking, t0)
	mustPut(t, s, "alice", task)

	if _, err := s.GetTask(bg, "bob", "shared-id"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetTask by another owner: %v, want ErrNotFound", err)
	}
	if _, err := s.GetTask(bg, "", "shared-id"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetTask by the anonymous owner: %v, want ErrNotFound", err)
	}
	hijack := mkTask("shared-id", "c2", a2a.TaskStateCompleted, t0.Add(time.Hour))
	hijack.Metadata = map[string]any{"evil": true}
	if err := s.PutTask(bg, "bob", hijack); !errors.Is(err, ErrNotFound) {
		t.Fatalf("PutTask over another owner's id: %v, want ErrNotFound", err)
	}
	got := mustGet(t, s, "alice", "shared-id")
	if !reflect.DeepEqual(got, task) {
		t.Fatalf("another owner's PutTask changed the task: %+v", got)
	}
	if res := mustList(t, s, ListQuery{Owner: "bob", Limit: 10}); len(res.Tasks) != 0 || res.Total != 0 {
		t.Fatalf("bob sees %+v", res)
	}
	if res := mustList(t, s, ListQuery{Owner: "alice", Limit: 10}); len(res.Tasks) != 1 || res.Total != 1 {
		t.Fatalf("alice sees %+v", res)
	}
	if res := mustList(t, s, ListQuery{Owner: "alice", Limit: 10, State: a2a.TaskStateCompleted}); res.Total != 0 {
		t.Fatalf("failed takeover changed counts: %+v", res)
	}
}

func TestListOrderingTies(t *testing.T) { eachStore(t, testListOrderingTies) }

func testListOrderingTies(t *testing.T, s FullStore) {
	for _, id := range []string{"b", "d", "a", "c"} {
		mustPut(t, s, "o", mkTask(id, "c", a2a.TaskStateWorking, t0))
	}
	mustPut(t, s, "o", mkTask("z-old", "c", a2a.TaskStateWorking, t0.Add(-time.Millisecond)))
	mustPut(t, s, "o", mkTask("0-new", "c", a2a.TaskStateWorking, t0.Add(time.Millisecond)))

	res := mustList(t, s, ListQuery{Owner: "o", Limit: 100})
	want := []string{"0-new", "d", "c", "b", "a", "z-old"}
	if got := ids(res.Tasks); !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	if res.Next != nil || res.Total != 6 {
		t.Fatalf("Next %v Total %d", res.Next, res.Total)
	}

	// Page through the ties two at a time.
	var got []string
	q := ListQuery{Owner: "o", Limit: 2}
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatal("too many pages")
		}
		res := mustList(t, s, q)
		got = append(got, ids(res.Tasks)...)
		if res.Next == nil {
			break
		}
		if last := res.Tasks[len(res.Tasks)-1]; res.Next.TaskID != last.ID {
			t.Fatalf("cursor id %q, last task %q", res.Next.TaskID, last.ID)
		}
		q.After = res.Next
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paged order %v, want %v", got, want)
	}
}

// model is a brute-force copy of what the store should hold.
type model struct {
	owner, ctx string
	state      a2a.TaskState
	ms         int64
	id         string
}

var testStates = []a2a.TaskState{
	a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired,
	a2a.TaskStateCompleted, a2a.TaskStateFailed,
}

// fillRandom stores n tasks spread over owners, contexts, states and a few
// hundred distinct milliseconds (so there are many ties) and returns them.
func fillRandom(t *testing.T, s FullStore, n int, seed uint64) map[string]*model {
	r := rand.New(rand.NewPCG(seed, 1))
	owners := []string{"", "alice", "bob"}
	// "" exercises the trigger's de-duplication of the (owner, '', …) rows.
	ctxs := []string{"c1", "c2", "c3", ""}
	all := make(map[string]*model, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range n {
		m := &model{
			owner: owners[r.IntN(len(owners))],
			ctx:   ctxs[r.IntN(len(ctxs))],
			state: testStates[r.IntN(len(testStates))],
			ms:    t0.UnixMilli() + int64(r.IntN(300)),
			id:    fmt.Sprintf("t%04d-%x", i, r.Uint32()),
		}
		all[m.id] = m
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			task := mkTask(m.id, m.ctx, m.state, time.UnixMilli(m.ms))
			task.Artifacts = []a2a.Artifact{{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart(m.id)}}}
			if err := s.PutTask(bg, m.owner, task); err != nil {
				t.Errorf("PutTask: %v", err)
			}
		}()
	}
	wg.Wait()
	return all
}

// expect returns the ids matching q (ignoring After and Limit) in list order.
func expect(all map[string]*model, q ListQuery) []string {
	var ms []*model
	after := ceilMilli(q.StatusAfter)
	for _, m := range all {
		if m.owner != q.Owner || (q.ContextID != "" && m.ctx != q.ContextID) ||
			(q.State != "" && m.state != q.State) || (!q.StatusAfter.IsZero() && m.ms < after) {
			continue
		}
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(a, b *model) int {
		if a.ms != b.ms {
			return -cmpInt(a.ms, b.ms)
		}
		return -strings.Compare(a.id, b.id)
	})
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.id
	}
	return out
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// listAll pages through q and checks every page's Total and cursor.
func listAll(t *testing.T, s FullStore, q ListQuery, wantTotal int) []string {
	t.Helper()
	var got []string
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatal("pagination does not end")
		}
		res := mustList(t, s, q)
		if res.Total != wantTotal {
			t.Fatalf("%+v: Total %d, want %d", q, res.Total, wantTotal)
		}
		if len(res.Tasks) > q.Limit {
			t.Fatalf("page of %d > limit %d", len(res.Tasks), q.Limit)
		}
		for i := range res.Tasks {
			if !q.IncludeArtifacts && res.Tasks[i].Artifacts != nil {
				t.Fatalf("artifacts returned without IncludeArtifacts")
			}
			if q.IncludeArtifacts && len(res.Tasks[i].Artifacts) != 1 {
				t.Fatalf("artifacts missing with IncludeArtifacts")
			}
		}
		got = append(got, ids(res.Tasks)...)
		if res.Next == nil {
			return got
		}
		if len(res.Tasks) != q.Limit {
			t.Fatalf("short page (%d of %d) with a Next cursor", len(res.Tasks), q.Limit)
		}
		q.After = res.Next
	}
}

func TestListPaginationAndFilters(t *testing.T) { eachStore(t, testListPaginationAndFilters) }

func testListPaginationAndFilters(t *testing.T, s FullStore) {
	all := fillRandom(t, s, 600, 7)

	// StatusAfter values: a time between milliseconds, and an exact stored
	// timestamp (inclusive bound).
	var some *model
	for _, m := range all {
		some = m
		break
	}
	afters := []time.Time{{}, time.UnixMilli(some.ms), t0.Add(150*time.Millisecond + 300*time.Microsecond)}
	seen := 0
	for _, owner := range []string{"", "alice", "bob", "nobody"} {
		for _, ctxID := range []string{"", "c1", "c3", "c-none"} {
			for _, state := range append([]a2a.TaskState{""}, testStates[:3]...) {
				for _, after := range afters {
					for _, limit := range []int{1, 7, 50} {
						if limit == 1 && (after.IsZero() || ctxID == "") {
							continue // keep the test fast; 1 is covered below
						}
						q := ListQuery{Owner: owner, ContextID: ctxID, State: state, StatusAfter: after, Limit: limit, IncludeArtifacts: limit == 7}
						want := expect(all, q)
						got := listAll(t, s, q, len(want))
						if !slices.Equal(got, want) {
							t.Fatalf("%+v:\n got %v\nwant %v", q, got, want)
						}
						seen += len(got)
					}
				}
			}
		}
	}
	if seen == 0 {
		t.Fatal("no tasks matched any query")
	}

	// Every task of an owner exactly once, one per page.
	want := expect(all, ListQuery{Owner: "alice"})
	got := listAll(t, s, ListQuery{Owner: "alice", Limit: 1}, len(want))
	if !slices.Equal(got, want) {
		t.Fatalf("limit 1 paging differs")
	}
	total := 0
	for _, o := range []string{"", "alice", "bob"} {
		total += len(expect(all, ListQuery{Owner: o}))
	}
	if total != len(all) {
		t.Fatalf("owners hold %d tasks, stored %d", total, len(all))
	}
}

func TestStatusAfterInclusive(t *testing.T) { eachStore(t, testStatusAfterInclusive) }

func testStatusAfterInclusive(t *testing.T, s FullStore) {
	mustPut(t, s, "o", mkTask("before", "c", a2a.TaskStateWorking, t0.Add(-time.Millisecond)))
	mustPut(t, s, "o", mkTask("at", "c", a2a.TaskStateWorking, t0))
	mustPut(t, s, "o", mkTask("after", "c", a2a.TaskStateWorking, t0.Add(time.Millisecond)))
	res := mustList(t, s, ListQuery{Owner: "o", Limit: 10, StatusAfter: t0})
	if got := ids(res.Tasks); !slices.Equal(got, []string{"after", "at"}) || res.Total != 2 {
		t.Fatalf("StatusAfter=t0: %v total %d", got, res.Total)
	}
	res = mustList(t, s, ListQuery{Owner: "o", Limit: 10, StatusAfter: t0.Add(time.Microsecond)})
	if got := ids(res.Tasks); !slices.Equal(got, []string{"after"}) || res.Total != 1 {
		t.Fatalf("StatusAfter=t0+1µs: %v total %d", got, res.Total)
	}
}

func TestIncludeArtifacts(t *testing.T) { eachStore(t, testIncludeArtifacts) }

func testIncludeArtifacts(t *testing.T, s FullStore) {
	task := mkTask("t", "c", a2a.TaskStateCompleted, t0)
	task.Artifacts = []a2a.Artifact{{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart("x")}}}
	mustPut(t, s, "o", task)
	res := mustList(t, s, ListQuery{Owner: "o", Limit: 10})
	if len(res.Tasks) != 1 || res.Tasks[0].Artifacts != nil {
		t.Fatalf("without IncludeArtifacts: %+v", res.Tasks)
	}
	if len(res.Tasks[0].History) != 1 {
		t.Fatalf("history lost in list: %+v", res.Tasks[0])
	}
	res = mustList(t, s, ListQuery{Owner: "o", Limit: 10, IncludeArtifacts: true})
	if len(res.Tasks) != 1 || !reflect.DeepEqual(&res.Tasks[0], task) {
		t.Fatalf("with IncludeArtifacts: %+v", res.Tasks)
	}
}

// totals returns Total for every filter combination over owner o.
func totals(t *testing.T, s FullStore, o string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, c := range []string{"", "c1", "c2"} {
		for _, st := range []a2a.TaskState{"", a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateCompleted} {
			out[c+"/"+string(st)] = mustList(t, s, ListQuery{Owner: o, ContextID: c, State: st, Limit: 1}).Total
		}
	}
	return out
}

func TestCountsFollowUpdates(t *testing.T) {
	s, path := newTestStore(t)
	task := mkTask("t1", "c1", a2a.TaskStateWorking, t0)
	mustPut(t, s, "o", task)
	mustPut(t, s, "o", mkTask("t2", "c2", a2a.TaskStateWorking, t0))
	mustPut(t, s, "o", mkTask("t3", "c1", a2a.TaskStateCompleted, t0))
	mustPut(t, s, "other", mkTask("t4", "c1", a2a.TaskStateWorking, t0))

	check := func(s *SQLite, want map[string]int) {
		t.Helper()
		if got := totals(t, s, "o"); !reflect.DeepEqual(got, want) {
			t.Fatalf("totals\n got %v\nwant %v", got, want)
		}
	}
	want := map[string]int{
		"/": 3, "/TASK_STATE_WORKING": 2, "/TASK_STATE_INPUT_REQUIRED": 0, "/TASK_STATE_COMPLETED": 1,
		"c1/": 2, "c1/TASK_STATE_WORKING": 1, "c1/TASK_STATE_INPUT_REQUIRED": 0, "c1/TASK_STATE_COMPLETED": 1,
		"c2/": 1, "c2/TASK_STATE_WORKING": 1, "c2/TASK_STATE_INPUT_REQUIRED": 0, "c2/TASK_STATE_COMPLETED": 0,
	}
	check(s, want)

	// WORKING -> INPUT_REQUIRED.
	task.Status.State = a2a.TaskStateInputRequired
	mustPut(t, s, "o", task)
	want["/TASK_STATE_WORKING"], want["/TASK_STATE_INPUT_REQUIRED"] = 1, 1
	want["c1/TASK_STATE_WORKING"], want["c1/TASK_STATE_INPUT_REQUIRED"] = 0, 1
	check(s, want)

	// Re-putting without a state change must not double count.
	mustPut(t, s, "o", task)
	check(s, want)

	// A context move.
	task.ContextID = "c2"
	mustPut(t, s, "o", task)
	want["c1/"], want["c1/TASK_STATE_INPUT_REQUIRED"] = 1, 0
	want["c2/"], want["c2/TASK_STATE_INPUT_REQUIRED"] = 2, 1
	check(s, want)

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openTest(t, path, SQLiteOptions{})
	check(s2, want)
	if got := totals(t, s2, "other"); got["/"] != 1 || got["c1/TASK_STATE_WORKING"] != 1 {
		t.Fatalf("other owner's totals: %v", got)
	}

	// Deleting a row (no API does it yet, but the trigger must keep counts
	// right for the future retention job).
	if _, err := s2.w.conn.ExecContext(bg, "DELETE FROM tasks WHERE id = 't3'"); err != nil {
		t.Fatal(err)
	}
	want["/"], want["/TASK_STATE_COMPLETED"], want["c1/"], want["c1/TASK_STATE_COMPLETED"] = 2, 0, 0, 0
	check(s2, want)
}

func TestCountsMatchBruteForce(t *testing.T) {
	s, _ := newTestStore(t)
	all := fillRandom(t, s, 300, 3)
	// Move some tasks between states and contexts.
	r := rand.New(rand.NewPCG(9, 9))
	n := 0
	for _, m := range all {
		if n++; n > 100 {
			break
		}
		m.state = testStates[r.IntN(len(testStates))]
		m.ctx = []string{"c1", "c2", "c9"}[r.IntN(3)]
		mustPut(t, s, m.owner, mkTask(m.id, m.ctx, m.state, time.UnixMilli(m.ms)))
	}
	var rows []struct {
		owner, ctx, state string
		n                 int
	}
	qr, err := s.rdb.QueryContext(bg, "SELECT owner, context_id, state, n FROM task_counts")
	if err != nil {
		t.Fatal(err)
	}
	for qr.Next() {
		var x struct {
			owner, ctx, state string
			n                 int
		}
		if err := qr.Scan(&x.owner, &x.ctx, &x.state, &x.n); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, x)
	}
	_ = qr.Close()
	if len(rows) == 0 {
		t.Fatal("no count rows")
	}
	for _, x := range rows {
		want := len(expect(all, ListQuery{Owner: x.owner, ContextID: x.ctx, State: a2a.TaskState(x.state)}))
		if x.n != want {
			t.Errorf("task_counts(%q,%q,%q) = %d, brute force %d", x.owner, x.ctx, x.state, x.n, want)
		}
	}
}

func TestReopenAndMigrations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a2a.db")
	s, err := OpenSQLite(path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	task := mkTask("t1", "c1", a2a.TaskStateCompleted, t0)
	mustPut(t, s, "o", task)
	rec := ContextRecord{Owner: "o", ID: "c1", Cwd: "/w", State: []byte("state"), CreatedAt: t0, UpdatedAt: t0.Add(time.Second)}
	if err := s.PutContext(bg, rec); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		s, err = OpenSQLite(path, SQLiteOptions{Durability: "normal"})
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		if got := mustGet(t, s, "o", "t1"); !reflect.DeepEqual(got, task) {
			t.Fatalf("after reopen: %+v", got)
		}
		got, err := s.GetContext(bg, "o", "c1")
		if err != nil || !reflect.DeepEqual(*got, rec) {
			t.Fatalf("context after reopen: %+v, %v", got, err)
		}
		var v int
		if err := s.rdb.QueryRowContext(bg, "PRAGMA user_version").Scan(&v); err != nil || v != schemaVersion {
			t.Fatalf("user_version %d (%v), want %d", v, err, schemaVersion)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}

	// A database from a newer build is refused with a clear error.
	s = openTest(t, path, SQLiteOptions{})
	if _, err := s.w.conn.ExecContext(bg, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	_, err = OpenSQLite(path, SQLiteOptions{})
	if err == nil || !strings.Contains(err.Error(), "newer") || !strings.HasPrefix(err.Error(), "opening task store: ") {
		t.Fatalf("opening a newer schema: %v", err)
	}
}

func TestContexts(t *testing.T) { eachStore(t, testContexts) }

func testContexts(t *testing.T, s FullStore) {
	if _, err := s.GetContext(bg, "o", "c"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing context: %v", err)
	}
	buf := []byte("history")
	rec := ContextRecord{Owner: "o", ID: "c", Cwd: "", State: buf, CreatedAt: t0, UpdatedAt: t0}
	if err := s.PutContext(bg, rec); err != nil {
		t.Fatal(err)
	}
	buf[0] = 'X' // the store must not alias the caller's buffer
	got, err := s.GetContext(bg, "o", "c")
	if err != nil || string(got.State) != "history" || got.Owner != "o" || got.ID != "c" || !got.CreatedAt.Equal(t0) {
		t.Fatalf("GetContext: %+v, %v", got, err)
	}
	if _, err := s.GetContext(bg, "p", "c"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another owner's context: %v", err)
	}
	rec.State, rec.Cwd, rec.UpdatedAt = nil, "/work", t0.Add(time.Minute)
	if err := s.PutContext(bg, rec); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetContext(bg, "o", "c")
	if err != nil || got.State != nil || got.Cwd != "/work" || !got.UpdatedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("replaced context: %+v, %v", got, err)
	}
}

func TestFailInterrupted(t *testing.T) {
	s, path := newTestStore(t)
	states := map[string]a2a.TaskState{
		"sub": a2a.TaskStateSubmitted, "work": a2a.TaskStateWorking, "input": a2a.TaskStateInputRequired,
		"done": a2a.TaskStateCompleted, "work2": a2a.TaskStateWorking,
	}
	orig := map[string]*a2a.Task{}
	for id, st := range states {
		owner := "alice"
		if id == "work2" {
			owner = "bob"
		}
		task := mkTask(id, "ctx-"+id, st, t0)
		task.Metadata = map[string]any{"keep": id}
		task.Artifacts = []a2a.Artifact{{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart(id)}}}
		orig[id] = task
		mustPut(t, s, owner, task)
	}
	now := t0.Add(time.Hour + 123*time.Millisecond)
	n, err := s.FailInterrupted(bg, "the server restarted", now)
	if err != nil || n != 3 {
		t.Fatalf("FailInterrupted = %d, %v; want 3", n, err)
	}
	msgIDs := map[string]bool{}
	for id, st := range states {
		owner := "alice"
		if id == "work2" {
			owner = "bob"
		}
		got := mustGet(t, s, owner, id)
		if st != a2a.TaskStateSubmitted && st != a2a.TaskStateWorking {
			if !reflect.DeepEqual(got, orig[id]) {
				t.Fatalf("%s changed: %+v", id, got)
			}
			continue
		}
		m := got.Status.Message
		if got.Status.State != a2a.TaskStateFailed || got.Status.Timestamp != "2026-03-01T13:00:00.123Z" || m == nil {
			t.Fatalf("%s status: %+v", id, got.Status)
		}
		if m.Role != a2a.RoleAgent || m.TaskID != id || m.ContextID != "ctx-"+id || len(m.Parts) != 1 ||
			m.Parts[0].Text == nil || *m.Parts[0].Text != "the server restarted" || len(m.MessageID) != 36 {
			t.Fatalf("%s status message: %+v", id, m)
		}
		if msgIDs[m.MessageID] {
			t.Fatalf("message id %s reused", m.MessageID)
		}
		msgIDs[m.MessageID] = true
		want := *orig[id]
		want.Status = got.Status
		if !reflect.DeepEqual(got, &want) {
			t.Fatalf("%s: more than the status changed: %+v", id, got)
		}
	}
	// Counts and status times follow.
	res := mustList(t, s, ListQuery{Owner: "alice", Limit: 10, State: a2a.TaskStateFailed})
	if res.Total != 2 || len(res.Tasks) != 2 {
		t.Fatalf("failed tasks of alice: %+v", res)
	}
	if res := mustList(t, s, ListQuery{Owner: "alice", Limit: 10, State: a2a.TaskStateWorking}); res.Total != 0 {
		t.Fatalf("alice still has working tasks: %d", res.Total)
	}
	res = mustList(t, s, ListQuery{Owner: "alice", Limit: 10, StatusAfter: now})
	if res.Total != 2 {
		t.Fatalf("status time not updated: %+v", res)
	}
	if n, err := s.FailInterrupted(bg, "again", now); err != nil || n != 0 {
		t.Fatalf("second FailInterrupted = %d, %v", n, err)
	}
	_ = s.Close()
	s2 := openTest(t, path, SQLiteOptions{})
	if got := mustGet(t, s2, "bob", "work2"); got.Status.State != a2a.TaskStateFailed {
		t.Fatalf("not durable: %+v", got.Status)
	}
}

func TestConcurrentWriters(t *testing.T) { eachStore(t, testConcurrentWriters) }

func testConcurrentWriters(t *testing.T, s FullStore) {
	const writers, per = 32, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := fmt.Sprintf("owner-%d", w%4)
			for i := range per {
				id := fmt.Sprintf("w%02d-%03d", w, i)
				task := mkTask(id, "c", a2a.TaskStateWorking, t0.Add(time.Duration(i)*time.Millisecond))
				if err := s.PutTask(bg, owner, task); err != nil {
					t.Errorf("PutTask: %v", err)
					return
				}
				// Update half of them right away.
				if i%2 == 0 {
					task.Status.State = a2a.TaskStateCompleted
					if err := s.PutTask(bg, owner, task); err != nil {
						t.Errorf("PutTask update: %v", err)
						return
					}
				}
				if _, err := s.GetTask(bg, owner, id); err != nil {
					t.Errorf("GetTask right after PutTask: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	total, done := 0, 0
	for o := range 4 {
		q := ListQuery{Owner: fmt.Sprintf("owner-%d", o), Limit: 100}
		total += len(listAll(t, s, q, mustList(t, s, q).Total))
		q.State = a2a.TaskStateCompleted
		done += mustList(t, s, q).Total
	}
	if total != writers*per || done != writers*((per+1)/2) {
		t.Fatalf("listed %d tasks (%d completed), want %d (%d)", total, done, writers*per, writers*((per+1)/2))
	}
	sq, ok := s.(*SQLite)
	if !ok {
		return
	}
	batches, reqs := sq.w.nBatches.Load(), sq.w.nRequests.Load()
	t.Logf("%d writes in %d transactions (%.1f per commit)", reqs, batches, float64(reqs)/float64(batches))
	if reqs != int64(writers*per+writers*((per+1)/2)) {
		t.Fatalf("writer saw %d requests", reqs)
	}
}

// blockingCtx is a context whose Err blocks until release is closed; the
// writer calls Err when it starts a batch, so it holds the writer up.
type blockingCtx struct {
	context.Context
	release chan struct{}
	entered chan struct{}
	once    sync.Once
}

func (c *blockingCtx) Err() error {
	c.once.Do(func() { close(c.entered) })
	<-c.release
	return nil
}

func TestBadWriteDoesNotFailBatch(t *testing.T) {
	s, _ := newTestStore(t)
	// Hold the writer in a batch while the other requests queue up.
	hold := &blockingCtx{Context: bg, release: make(chan struct{}), entered: make(chan struct{})}
	holdDone := make(chan error, 1)
	go func() { holdDone <- s.PutTask(hold, "o", mkTask("hold", "c", a2a.TaskStateWorking, t0)) }()
	<-hold.entered

	const good = 20
	var wg sync.WaitGroup
	errs := make([]error, good)
	for i := range good {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.PutTask(bg, "o", mkTask(fmt.Sprintf("g%02d", i), "c", a2a.TaskStateWorking, t0))
		}()
	}
	badDone := make(chan error, 1)
	go func() {
		r := getReq(bg, opKind(99)) // fails inside the transaction
		_, err := s.submit(bg, r)
		badDone <- err
	}()
	time.Sleep(100 * time.Millisecond) // sleep: lets everyone queue behind the held batch; shorter weakens, never flakes
	close(hold.release)
	if err := <-holdDone; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if err := <-badDone; err == nil || !strings.Contains(err.Error(), "unknown write kind") {
		t.Fatalf("bad write: %v", err)
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("good write %d failed: %v", i, err)
		}
		mustGet(t, s, "o", fmt.Sprintf("g%02d", i))
	}
	if s.w.nRetries.Load() == 0 {
		t.Fatal("the bad write was never batched with others (test did not exercise the retry)")
	}
	if res := mustList(t, s, ListQuery{Owner: "o", Limit: 1}); res.Total != good+1 {
		t.Fatalf("Total %d after retries", res.Total)
	}
}

func TestContextCanceled(t *testing.T) {
	s, _ := newTestStore(t)
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if err := s.PutTask(ctx, "o", mkTask("t", "c", a2a.TaskStateWorking, t0)); !errors.Is(err, context.Canceled) {
		t.Fatalf("PutTask with a canceled context: %v", err)
	}
	if _, err := s.GetTask(bg, "o", "t"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("canceled write was stored: %v", err)
	}
	if _, err := s.GetTask(ctx, "o", "t"); err == nil {
		t.Fatal("GetTask with a canceled context succeeded")
	}
}

func TestClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a2a.db")
	s, err := OpenSQLite(path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Writers racing with Close either succeed (and are durable) or get ErrClosed.
	var wg sync.WaitGroup
	var ok sync.Map
	var nOK, nClosed atomic.Int32
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				id := fmt.Sprintf("w%d-%d", w, i)
				err := s.PutTask(bg, "o", mkTask(id, "c", a2a.TaskStateWorking, t0))
				if errors.Is(err, ErrClosed) {
					nClosed.Add(1)
					return
				}
				if err != nil {
					t.Errorf("PutTask: %v", err)
					return
				}
				nOK.Add(1)
				ok.Store(id, true)
			}
		}()
	}
	time.Sleep(50 * time.Millisecond) // sleep: lets writers run before Close races them; shorter weakens, never flakes
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wg.Wait()
	if nClosed.Load() != 16 || nOK.Load() == 0 {
		t.Fatalf("ok %d, closed %d", nOK.Load(), nClosed.Load())
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	task := mkTask("x", "c", a2a.TaskStateWorking, t0)
	if err := s.PutTask(bg, "o", task); !errors.Is(err, ErrClosed) {
		t.Fatalf("PutTask after Close: %v", err)
	}
	if _, err := s.GetTask(bg, "o", "x"); !errors.Is(err, ErrClosed) {
		t.Fatalf("GetTask after Close: %v", err)
	}
	if _, err := s.ListTasks(bg, ListQuery{Owner: "o", Limit: 1}); !errors.Is(err, ErrClosed) {
		t.Fatalf("ListTasks after Close: %v", err)
	}
	if err := s.PutContext(bg, ContextRecord{Owner: "o", ID: "c"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("PutContext after Close: %v", err)
	}
	if _, err := s.GetContext(bg, "o", "c"); !errors.Is(err, ErrClosed) {
		t.Fatalf("GetContext after Close: %v", err)
	}
	if _, err := s.FailInterrupted(bg, "x", t0); !errors.Is(err, ErrClosed) {
		t.Fatalf("FailInterrupted after Close: %v", err)
	}

	s2 := openTest(t, path, SQLiteOptions{})
	res := mustList(t, s2, ListQuery{Owner: "o", Limit: 1})
	if res.Total != int(nOK.Load()) {
		t.Fatalf("%d tasks after reopen, %d writes succeeded", res.Total, nOK.Load())
	}
	ok.Range(func(k, _ any) bool {
		mustGet(t, s2, "o", k.(string))
		return true
	})
	// A clean close checkpoints and removes the WAL.
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("WAL left after Close: %v", err)
	}
}

func TestNoGoroutineLeak(t *testing.T) {
	settle := func(max int) int {
		n := runtime.NumGoroutine()
		for i := 0; i < 200 && n > max; i++ {
			time.Sleep(10 * time.Millisecond)
			n = runtime.NumGoroutine()
		}
		return n
	}
	before := runtime.NumGoroutine()
	dir := t.TempDir()
	for i := range 3 {
		s, err := OpenSQLite(filepath.Join(dir, "a2a.db"), SQLiteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mustPut(t, s, "o", mkTask(fmt.Sprint(i), "c", a2a.TaskStateWorking, t0))
		mustGet(t, s, "o", fmt.Sprint(i))
		mustList(t, s, ListQuery{Owner: "o", Limit: 5, StatusAfter: t0})
		ctx, cancel := context.WithCancel(bg)
		_ = s.PutTask(ctx, "o", mkTask("c"+fmt.Sprint(i), "c", a2a.TaskStateWorking, t0))
		cancel()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if after := settle(before); after > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("goroutines: %d before, %d after\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}

func TestDurabilityOption(t *testing.T) {
	for in, want := range map[string]string{"": "full", "full": "full", " FULL ": "full", "Normal": "normal"} {
		got, err := ParseDurability(in)
		if err != nil || got != want {
			t.Errorf("ParseDurability(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"off", "extra", "fulll"} {
		if _, err := ParseDurability(in); err == nil {
			t.Errorf("ParseDurability(%q) accepted", in)
		}
	}
	dir := t.TempDir()
	if _, err := OpenSQLite(filepath.Join(dir, "x.db"), SQLiteOptions{Durability: "off"}); err == nil ||
		!strings.HasPrefix(err.Error(), "opening task store: unknown durability") {
		t.Fatalf("bad durability: %v", err)
	}
	if _, err := OpenSQLite(filepath.Join(dir, "y.db"), SQLiteOptions{BusyTimeout: -1}); err == nil {
		t.Fatal("negative busy timeout accepted")
	}
	if _, err := OpenSQLite("", SQLiteOptions{}); err == nil {
		t.Fatal("empty path accepted")
	}
	// Durability full syncs through the pipelined WAL syncer (the write
	// connection itself runs NORMAL), or inside COMMIT (FULL) when
	// serialSync asks for the baseline; normal never syncs a commit.
	for _, tc := range []struct {
		durability string
		serial     bool
		want       int
		syncer     bool
	}{{"", false, 1, true}, {"full", true, 2, false}, {"normal", false, 1, false}} {
		durability := tc.durability
		s := openTest(t, filepath.Join(dir, fmt.Sprintf("d%s%v.db", durability, tc.serial)), SQLiteOptions{Durability: durability, BusyTimeout: 1500 * time.Millisecond, serialSync: tc.serial})
		if (s.w.sync != nil) != tc.syncer {
			t.Fatalf("durability %q serial %v: WAL syncer %v, want %v", durability, tc.serial, s.w.sync != nil, tc.syncer)
		}
		want := tc.want
		var sync, busy int
		var mode string
		c := s.w.conn
		if err := c.QueryRowContext(bg, "PRAGMA synchronous").Scan(&sync); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(bg, "PRAGMA busy_timeout").Scan(&busy); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(bg, "PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if sync != want || busy != 1500 || mode != "wal" {
			t.Fatalf("durability %q: synchronous=%d busy_timeout=%d journal_mode=%s", durability, sync, busy, mode)
		}
	}
}

func TestFilePermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "dir")
	path := filepath.Join(dir, "a2a.db")
	s := openTest(t, path, SQLiteOptions{})
	mustPut(t, s, "o", mkTask("t", "c", a2a.TaskStateWorking, t0))
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", filepath.Base(p), fi.Mode().Perm())
		}
	}
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v (%v), want 0700", fi.Mode().Perm(), err)
	}
}

// TestCrashAfterPut copies the database files while the store is still open
// (as a crash would leave them) and checks that the copy holds every write
// PutTask acknowledged.
func TestCrashAfterPut(t *testing.T) {
	s, path := newTestStore(t)
	for i := range 10 {
		mustPut(t, s, "o", mkTask(fmt.Sprint(i), "c", a2a.TaskStateWorking, t0))
	}
	crash := filepath.Join(t.TempDir(), "copy.db")
	for _, suffix := range []string{"", "-wal"} {
		copyFile(t, path+suffix, crash+suffix)
	}
	c := openTest(t, crash, SQLiteOptions{})
	if res := mustList(t, c, ListQuery{Owner: "o", Limit: 100}); res.Total != 10 || len(res.Tasks) != 10 {
		t.Fatalf("after a crash: total %d, %d tasks", res.Total, len(res.Tasks))
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestQueryPlans checks that every list and count query walks an index in
// list order (no temporary sort, no table scan), so a page costs the same
// however many tasks are stored.
func TestQueryPlans(t *testing.T) {
	s, _ := newTestStore(t)
	plan := func(q string, nargs int) string {
		t.Helper()
		args := make([]any, nargs)
		for i := range args {
			args[i] = "x"
		}
		rows, err := s.rdb.QueryContext(bg, "EXPLAIN QUERY PLAN "+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var b strings.Builder
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			b.WriteString(detail + "; ")
		}
		return b.String()
	}
	for v := range listVariants {
		q := listSQL(v)
		p := plan(q, strings.Count(q, "?"))
		if strings.Contains(p, "TEMP B-TREE") || !strings.Contains(p, "USING INDEX tasks_owner") {
			t.Errorf("list variant %05b: %s\n%s", v, p, q)
		}
		wantIdx := map[int]string{0: "tasks_owner_ts ", lvContext: "tasks_owner_ctx_ts ", lvState: "tasks_owner_state_ts ",
			lvContext | lvState: "tasks_owner_ctx_ts "}[v&(lvContext|lvState)]
		if !strings.Contains(p+" ", wantIdx) {
			t.Errorf("list variant %05b uses %s, want %s", v, p, wantIdx)
		}
	}
	for v := range countVariants {
		if v&(lvContext|lvState) == lvContext|lvState {
			// Filtered by state within the context's index range
			// (migration 4): reads the rows, still no table scan.
			q := countSQL(v)
			if p := plan(q, strings.Count(q, "?")); !strings.Contains(p, "USING INDEX tasks_owner_ctx_ts") {
				t.Errorf("count variant %03b: %s", v, p)
			}
			continue
		}
		if v&lvAfter == 0 {
			continue // served by task_counts
		}
		q := countSQL(v)
		if p := plan(q, strings.Count(q, "?")); !strings.Contains(p, "USING COVERING INDEX") {
			t.Errorf("count variant %03b: %s", v, p)
		}
	}
	if p := plan(`SELECT n FROM task_counts WHERE owner = ? AND context_id = ? AND state = ?`, 3); !strings.Contains(p, "PRIMARY KEY") {
		t.Errorf("count lookup: %s", p)
	}
	if p := plan(selInterruptedSQL, 2); !strings.Contains(p, "tasks_owner_state_ts") {
		t.Errorf("FailInterrupted select: %s", p)
	}
}

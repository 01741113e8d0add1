package store

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// TestMigration4KeepsCountsExact fills a version 3 database (four indexes,
// counts per context and state), migrates it to the current schema and
// checks that the ctx+state index is gone and every ListTasks total —
// including context+state, now counted over the context's index — matches
// a brute-force count, before and after further state changes and moves.
func TestMigration4KeepsCountsExact(t *testing.T) {
	s, all := migratedFrom(t, 3, `SELECT COUNT(*) FROM task_counts WHERE context_id <> '' AND state <> ''`)
	var n int
	if err := s.rdb.QueryRowContext(bg, `SELECT COUNT(*) FROM sqlite_schema WHERE name = 'tasks_owner_ctx_state_ts'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("ctx+state index after migration: %d, %v", n, err)
	}
	checkCountsThroughChanges(t, s, all)
}

// TestMigration6KeepsCountsExact: a version 5 database (count rows per
// context) migrated to the current schema has no per-context count rows,
// and every ListTasks total — a context's now counted over its index
// range — matches a brute-force count, before and after further state
// changes, moves and deletes.
func TestMigration6KeepsCountsExact(t *testing.T) {
	s, all := migratedFrom(t, 5, `SELECT COUNT(*) FROM task_counts WHERE context_id <> ''`)
	checkCountsThroughChanges(t, s, all)
}

// migratedFrom fills a database at schema version from with random tasks
// (countQuery, which counts the rows the migrations remove, must find
// some), then opens it with the current schema: no row countQuery counts
// is left.
func migratedFrom(t *testing.T, from int, countQuery string) (*SQLite, map[string]*model) {
	t.Helper()
	path := t.TempDir() + "/a2a.db"
	all := func() map[string]*model {
		saved, savedV := migrations, schemaVersion
		migrations, schemaVersion = migrations[:from], from
		defer func() { migrations, schemaVersion = saved, savedV }()
		s, err := OpenSQLite(path, SQLiteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var n int
		m := fillRandom(t, s, 200, 4)
		if err := s.rdb.QueryRowContext(bg, countQuery).Scan(&n); err != nil || n == 0 {
			t.Fatalf("version %d: %d rows to migrate away, %v", from, n, err)
		}
		return m
	}()

	s := openTest(t, path, SQLiteOptions{})
	var n int
	if err := s.rdb.QueryRowContext(bg, countQuery).Scan(&n); err != nil || n != 0 {
		t.Fatalf("after migration: %d rows left, %v", n, err)
	}
	return s, all
}

// checkCountsThroughChanges checks every total, then again after state
// changes, context moves and deletes of the tasks in all.
func checkCountsThroughChanges(t *testing.T, s *SQLite, all map[string]*model) {
	t.Helper()
	checkTotals(t, s, all)

	// State changes (the state-only trigger) and context moves (the general
	// one), including to and from the empty context.
	r := rand.New(rand.NewPCG(5, 5))
	i := 0
	for _, m := range all {
		if i++; i > 120 {
			break
		}
		m.state = testStates[r.IntN(len(testStates))]
		if i%3 == 0 {
			m.ctx = []string{"c1", "c2", "c9", ""}[r.IntN(4)]
		}
		mustPut(t, s, m.owner, mkTask(m.id, m.ctx, m.state, time.UnixMilli(m.ms)))
	}
	checkTotals(t, s, all)
	if _, err := s.w.conn.ExecContext(bg, `DELETE FROM tasks WHERE rowid IN (SELECT rowid FROM tasks LIMIT 30)`); err != nil {
		t.Fatal(err)
	}
	var left []string
	rows, err := s.rdb.QueryContext(bg, `SELECT id FROM tasks`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		left = append(left, id)
	}
	_ = rows.Close()
	kept := map[string]*model{}
	for _, id := range left {
		kept[id] = all[id]
	}
	if len(kept) != len(all)-30 {
		t.Fatalf("%d tasks left of %d", len(kept), len(all))
	}
	checkTotals(t, s, kept)
}

// checkTotals compares Total for every owner, context and state filter
// (each alone and combined) with a brute-force count.
func checkTotals(t *testing.T, s FullStore, all map[string]*model) {
	t.Helper()
	for _, o := range []string{"", "alice", "bob"} {
		for _, c := range []string{"", "c1", "c2", "c3", "c9"} {
			for _, st := range append([]a2a.TaskState{""}, testStates...) {
				q := ListQuery{Owner: o, ContextID: c, State: st, Limit: 1}
				if got, want := mustList(t, s, q).Total, len(expect(all, q)); got != want {
					t.Errorf("Total(owner %q, context %q, state %q) = %d, brute force %d", o, c, st, got, want)
				}
			}
		}
	}
}

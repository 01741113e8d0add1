package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// List query variants: which optional clauses a query has.
const (
	lvContext   = 1 << iota // AND context_id = ?
	lvState                 // AND state = ?
	lvAfter                 // AND status_ts >= ?
	lvCursor                // AND (status_ts, id) < (?, ?)
	lvArtifacts             // also select artifacts
	listVariants
)

// countVariants are the lvContext|lvState|lvAfter combinations of the
// COUNT(*) fallback, used when StatusAfter is set or both the context and
// the state are filtered (no counter exists for either).
const countVariants = lvAfter << 1

func listSQL(v int) string {
	var b strings.Builder
	b.WriteString("SELECT id, status_ts, body")
	if v&lvArtifacts != 0 {
		b.WriteString(", artifacts")
	}
	b.WriteString(" FROM tasks INDEXED BY ")
	b.WriteString(indexFor(v))
	b.WriteString(" WHERE owner = ?")
	writeFilters(&b, v)
	if v&lvCursor != 0 {
		b.WriteString(" AND (status_ts, id) < (?, ?)")
	}
	b.WriteString(" ORDER BY status_ts DESC, id DESC LIMIT ?")
	return b.String()
}

func countSQL(v int) string {
	var b strings.Builder
	b.WriteString("SELECT COUNT(*) FROM tasks INDEXED BY ")
	b.WriteString(indexFor(v))
	b.WriteString(" WHERE owner = ?")
	writeFilters(&b, v)
	return b.String()
}

// indexFor names the index whose equality prefix matches the filters of
// variant v. The planner has no statistics and, with several range
// constraints, may otherwise walk a shorter index and filter rows.
func indexFor(v int) string {
	switch v & (lvContext | lvState) {
	case lvContext:
		return "tasks_owner_ctx_ts"
	case lvState:
		return "tasks_owner_state_ts"
	case lvContext | lvState:
		// A context's tasks are few: its index range is walked and
		// filtered by state (migration 4 dropped the ctx+state index).
		return "tasks_owner_ctx_ts"
	}
	return "tasks_owner_ts"
}

func writeFilters(b *strings.Builder, v int) {
	if v&lvContext != 0 {
		b.WriteString(" AND context_id = ?")
	}
	if v&lvState != 0 {
		b.WriteString(" AND state = ?")
	}
	if v&lvAfter != 0 {
		b.WriteString(" AND status_ts >= ?")
	}
}

// stmt returns the prepared statement *slot holds, preparing q first.
func (s *SQLite) stmt(ctx context.Context, slot **sql.Stmt, q string) (*sql.Stmt, error) {
	s.listMu.Lock()
	defer s.listMu.Unlock()
	if *slot != nil {
		return *slot, nil
	}
	if s.closed.Load() {
		return nil, ErrClosed
	}
	st, err := s.rdb.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	*slot = st
	return st, nil
}

// ceilMilli is t in Unix milliseconds, rounded up so that a millisecond
// timestamp is at or after t exactly when it is >= the result.
func ceilMilli(t time.Time) int64 {
	ms := t.UnixMilli()
	if time.UnixMilli(ms).Before(t) {
		ms++
	}
	return ms
}

// ListTasks returns one page of the owner's tasks, status time descending
// then id descending, using keyset pagination. Total comes from the
// trigger-maintained task_counts table unless StatusAfter or a context is
// filtered, in which case the matching rows are counted through an index.
func (s *SQLite) ListTasks(ctx context.Context, q ListQuery) (ListResult, error) {
	if s.closed.Load() {
		return ListResult{}, ErrClosed
	}
	if q.Limit < 1 {
		return ListResult{}, fmt.Errorf("listing tasks: limit %d is not positive", q.Limit)
	}
	v, args, nfilter := listVariant(q)

	list, err := s.stmt(ctx, &s.listStmts[v], listSQL(v))
	if err != nil {
		return ListResult{}, s.readErr(fmt.Errorf("listing tasks: %w", err))
	}
	count, countArgs, err := s.countStmt(ctx, q, v, args[:nfilter])
	if err != nil {
		return ListResult{}, s.readErr(fmt.Errorf("listing tasks: %w", err))
	}

	// One read transaction, so that Total and the page see the same snapshot.
	tx, err := s.rdb.BeginTx(ctx, nil)
	if err != nil {
		return ListResult{}, s.readErr(fmt.Errorf("listing tasks: %w", err))
	}
	defer func() { _ = tx.Rollback() }()

	var res ListResult
	var total int64
	err = tx.StmtContext(ctx, count).QueryRowContext(ctx, countArgs...).Scan(&total)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return ListResult{}, s.readErr(fmt.Errorf("counting tasks: %w", err))
	}
	res.Total = int(total)

	res.Tasks, res.Next, err = s.readPage(ctx, tx.StmtContext(ctx, list), args, q)
	if err != nil {
		return ListResult{}, err
	}
	return res, nil
}

// listVariant returns the query variant of q and the arguments of its list
// statement; the first nfilter of them are the filter arguments, which the
// COUNT(*) fallback takes too.
func listVariant(q ListQuery) (v int, args []any, nfilter int) {
	args = make([]any, 1, 8)
	args[0] = q.Owner
	if q.ContextID != "" {
		v |= lvContext
		args = append(args, q.ContextID)
	}
	if q.State != "" {
		v |= lvState
		args = append(args, string(q.State))
	}
	if !q.StatusAfter.IsZero() {
		v |= lvAfter
		args = append(args, ceilMilli(q.StatusAfter))
	}
	nfilter = len(args)
	if q.After != nil {
		v |= lvCursor
		args = append(args, q.After.StatusTime.UnixMilli(), q.After.TaskID)
	}
	if q.IncludeArtifacts {
		v |= lvArtifacts
	}
	args = append(args, q.Limit+1)
	return v, args, nfilter
}

// countStmt returns the statement that counts the tasks of variant v and
// its arguments: the COUNT(*) fallback over filterArgs when StatusAfter or
// a context is filtered, else the task_counts lookup.
func (s *SQLite) countStmt(ctx context.Context, q ListQuery, v int, filterArgs []any) (*sql.Stmt, []any, error) {
	if v&(lvAfter|lvContext) != 0 {
		// No counter exists for StatusAfter nor for a context (migration
		// 6): count the rows (a context's over its index range).
		cv := v & (lvContext | lvState | lvAfter)
		count, err := s.stmt(ctx, &s.cntStmts[cv], countSQL(cv))
		if err != nil {
			return nil, nil, err
		}
		return count, filterArgs, nil
	}
	return s.countTasks, []any{q.Owner, q.ContextID, string(q.State)}, nil
}

// readPage runs the list statement and decodes up to q.Limit tasks; the
// cursor is set when a further row exists.
func (s *SQLite) readPage(ctx context.Context, list *sql.Stmt, args []any, q ListQuery) ([]a2a.Task, *Cursor, error) {
	rows, err := list.QueryContext(ctx, args...)
	if err != nil {
		return nil, nil, s.readErr(fmt.Errorf("listing tasks: %w", err))
	}
	defer rows.Close()
	tasks := make([]a2a.Task, 0, min(q.Limit, 128))
	var next *Cursor
	var (
		id         string
		ts         int64
		body, arts sql.RawBytes
	)
	dst := []any{&id, &ts, &body}
	if q.IncludeArtifacts {
		dst = append(dst, &arts)
	}
	var lastTS int64
	var lastID string
	for rows.Next() {
		if len(tasks) == q.Limit {
			next = &Cursor{StatusTime: time.UnixMilli(lastTS).UTC(), TaskID: lastID}
			break
		}
		if err := rows.Scan(dst...); err != nil {
			return nil, nil, s.readErr(fmt.Errorf("listing tasks: %w", err))
		}
		tasks = append(tasks, a2a.Task{})
		if err := decodeTask(&tasks[len(tasks)-1], body, arts, q.IncludeArtifacts); err != nil {
			return nil, nil, err
		}
		lastTS, lastID = ts, id
	}
	if err := rows.Err(); err != nil {
		return nil, nil, s.readErr(fmt.Errorf("listing tasks: %w", err))
	}
	return tasks, next, nil
}

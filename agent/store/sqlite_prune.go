package store

import (
	"context"
	"database/sql"
	"fmt"
)

// defaultPruneBatch is PruneOptions.Batch's default.
const defaultPruneBatch = 500

// pruneScan finds candidates on a read connection in rowid order, a page at
// a time, resuming after the last rowid: one pass over a table costs O(n)
// however many batches it takes, and never holds the writer. The writer
// re-checks the condition when it deletes, so a record touched meanwhile
// stays.
const (
	pruneScanTasks = `SELECT rowid, id FROM tasks WHERE rowid > ? AND status_ts < ?
		AND state NOT IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING') ORDER BY rowid LIMIT ?`
	pruneScanContexts = `SELECT rowid FROM contexts WHERE rowid > ? AND updated_at < ? ORDER BY rowid LIMIT ?`
	pruneScanDead     = `SELECT id FROM push_dead WHERE dead_ms < ? ORDER BY dead_ms, id LIMIT ?`

	pruneDeleteTask = `DELETE FROM tasks WHERE id = ? AND status_ts < ?
		AND state NOT IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')`
	pruneDeleteTaskConfigs = `DELETE FROM push_configs WHERE task_id = ?`
	pruneDeleteTaskJobs    = `DELETE FROM push_jobs WHERE task_id = ?`
	pruneDeleteContext     = `DELETE FROM contexts WHERE rowid = ? AND updated_at < ?`
	pruneDeleteDead        = `DELETE FROM push_dead WHERE id = ? AND dead_ms < ?`
)

// Prune implements Pruner: tasks, contexts and dead letters past their
// cut-offs, in batches of opts.Batch records per write transaction.
func (s *SQLite) Prune(ctx context.Context, opts PruneOptions) (PruneResult, error) {
	var res PruneResult
	if s.closed.Load() {
		return res, ErrClosed
	}
	batch := opts.Batch
	if batch <= 0 {
		batch = defaultPruneBatch
	}
	if !opts.TasksBefore.IsZero() {
		n, err := s.pruneTasks(ctx, opts, batch)
		res.Tasks = n
		if err != nil {
			return res, err
		}
	}
	if !opts.ContextsBefore.IsZero() {
		n, err := s.pruneRows(ctx, pruneScanContexts, pruneDeleteContext, opts.ContextsBefore.UnixMilli(), batch, opts.DryRun)
		res.Contexts = n
		if err != nil {
			return res, fmt.Errorf("pruning contexts: %w", err)
		}
	}
	if !opts.DeadBefore.IsZero() {
		n, err := s.pruneDead(ctx, opts.DeadBefore.UnixMilli(), batch, opts.DryRun)
		res.DeadLetters = n
		if err != nil {
			return res, fmt.Errorf("pruning dead letters: %w", err)
		}
	}
	return res, nil
}

// pruneTasks removes old tasks with their push configs and jobs.
func (s *SQLite) pruneTasks(ctx context.Context, opts PruneOptions, batch int) (int, error) {
	cut := opts.TasksBefore.UnixMilli()
	total := 0
	var after int64
	for ctx.Err() == nil {
		rows, err := s.rdb.QueryContext(ctx, pruneScanTasks, after, cut, batch)
		if err != nil {
			return total, fmt.Errorf("pruning tasks: %w", err)
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&after, &id); err != nil {
				rows.Close()
				return total, fmt.Errorf("pruning tasks: %w", err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return total, fmt.Errorf("pruning tasks: %w", err)
		}
		if len(ids) == 0 {
			break
		}
		removed := ids
		if !opts.DryRun {
			removed = removed[:0:0]
			_, err := s.do(ctx, func(w *writer, _ int64) (int, error) {
				removed = removed[:0] // the writer may run fn again after a rollback
				for _, id := range ids {
					n, err := w.exec(pruneDeleteTask, id, cut)
					if err != nil {
						return 0, err
					}
					if n == 0 {
						continue // changed since the scan: kept
					}
					if _, err := w.exec(pruneDeleteTaskConfigs, id); err != nil {
						return 0, err
					}
					if _, err := w.exec(pruneDeleteTaskJobs, id); err != nil {
						return 0, err
					}
					removed = append(removed, id)
				}
				return len(removed), nil
			})
			if err != nil {
				return total, fmt.Errorf("pruning tasks: %w", err)
			}
		}
		total += len(removed)
		if opts.OnTasks != nil && len(removed) > 0 {
			opts.OnTasks(removed)
		}
		if len(ids) < batch {
			break
		}
	}
	return total, ctx.Err()
}

// pruneRows removes the rows of a rowid-keyed table that scan finds and
// del still matches (cut is the age condition of both).
func (s *SQLite) pruneRows(ctx context.Context, scan, del string, cut int64, batch int, dryRun bool) (int, error) {
	total := 0
	var after int64
	for ctx.Err() == nil {
		ids, err := scanColumn[int64](s.rdb.QueryContext(ctx, scan, after, cut, batch))
		if err != nil {
			return total, err
		}
		if len(ids) == 0 {
			break
		}
		after = ids[len(ids)-1]
		n := len(ids)
		if !dryRun {
			if n, err = deleteEach(ctx, s, del, ids, cut); err != nil {
				return total, err
			}
		}
		total += n
		if len(ids) < batch {
			break
		}
	}
	return total, ctx.Err()
}

// pruneDead removes dead letters older than cut (ordered by their index).
func (s *SQLite) pruneDead(ctx context.Context, cut int64, batch int, dryRun bool) (int, error) {
	total := 0
	for ctx.Err() == nil {
		ids, err := scanColumn[string](s.rdb.QueryContext(ctx, pruneScanDead+" OFFSET ?", cut, batch, map[bool]int{true: total, false: 0}[dryRun]))
		if err != nil {
			return total, err
		}
		if len(ids) == 0 {
			break
		}
		n := len(ids)
		if !dryRun {
			if n, err = deleteEach(ctx, s, pruneDeleteDead, ids, cut); err != nil {
				return total, err
			}
			if n == 0 {
				break // nothing matched any more: avoid spinning
			}
		}
		total += n
		if len(ids) < batch {
			break
		}
	}
	return total, ctx.Err()
}

// scanColumn reads the one column of every row a query returned (the
// query's own error first) and closes the rows.
func scanColumn[T any](rows *sql.Rows, err error) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// deleteEach runs del (id, cut) for every id in one write transaction and
// returns how many rows went.
func deleteEach[K any](ctx context.Context, s *SQLite, del string, ids []K, cut int64) (int, error) {
	return s.do(ctx, func(w *writer, _ int64) (int, error) {
		removed := 0
		for _, id := range ids {
			k, err := w.exec(del, id, cut)
			if err != nil {
				return 0, err
			}
			removed += int(k)
		}
		return removed, nil
	})
}

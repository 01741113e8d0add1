package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

const jobCols = `id, task_id, config_id, owner, url, token, auth_scheme, credentials, payload, attempts, due_ms, last_error, created_ms, traceparent`

// stmt returns a statement prepared on the write connection, cached for the
// writer's life. Only the writer goroutine calls it.
func (w *writer) stmt(q string) (*sql.Stmt, error) {
	if st, ok := w.cached[q]; ok {
		return st, nil
	}
	st, err := w.conn.PrepareContext(context.Background(), q)
	if err != nil {
		return nil, fmt.Errorf("preparing push statement: %w", err)
	}
	if w.cached == nil {
		w.cached = map[string]*sql.Stmt{}
	}
	w.cached[q] = st
	return st, nil
}

func (w *writer) exec(q string, args ...any) (int64, error) {
	st, err := w.stmt(q)
	if err != nil {
		return 0, err
	}
	res, err := st.Exec(args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// insertJobs queues one job per push config of the task.
// traceparent is the W3C trace context of the turn that queued them.
func (w *writer) insertJobs(taskID string, payload []byte, traceparent string, nowMS int64) (int, error) {
	n, err := w.exec(`INSERT INTO push_jobs (`+jobCols+`, lease_until)
SELECT lower(hex(randomblob(16))), task_id, id, owner, url, token, auth_scheme, credentials, ?, 0, ?, '', ?, ?, 0
FROM push_configs WHERE task_id = ?`, string(payload), nowMS, nowMS, traceparent, taskID)
	if err != nil {
		return 0, fmt.Errorf("queueing push deliveries: %w", err)
	}
	return int(n), nil
}

// notifyFailed queues deliveries for a task failed by FailInterrupted.
func (w *writer) notifyFailed(taskID, contextID string, status []byte, nowMS int64) error {
	var st a2a.TaskStatus
	if err := json.Unmarshal(status, &st); err != nil {
		return fmt.Errorf("encoding push payload: %w", err)
	}
	payload, err := json.Marshal(a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: taskID, ContextID: contextID, Status: st}})
	if err != nil {
		return fmt.Errorf("encoding push payload: %w", err)
	}
	_, err = w.insertJobs(taskID, payload, "", nowMS)
	return err
}

// do runs fn in the writer's transaction (group-committed with other writes).
func (s *SQLite) do(ctx context.Context, fn func(w *writer, nowMS int64) (int, error)) (int, error) {
	if s.closed.Load() {
		return 0, ErrClosed
	}
	r := getReq(ctx, opFunc)
	r.fn = fn
	return s.submit(ctx, r)
}

// ErrPushConfigLimit is returned by PutPushConfigMax when the task already
// has as many configs as allowed.
var ErrPushConfigLimit = errors.New("too many push configs on the task")

// pushLimitReached is the result count of a config write refused by the
// cap. The refusal changes nothing, so it is a result, not a failed write:
// the batch it is committed with goes on (as with ErrNotFound).
const pushLimitReached = -1

// PutPushConfig inserts or replaces a config. It returns ErrNotFound when
// (TaskID, ID) exists with another owner.
func (s *SQLite) PutPushConfig(ctx context.Context, c PushConfig) error {
	return s.PutPushConfigMax(ctx, c, 0)
}

// PutPushConfigMax inserts or replaces a config, refusing a new id beyond
// maxPerTask configs on the task with ErrPushConfigLimit.
func (s *SQLite) PutPushConfigMax(ctx context.Context, c PushConfig, maxPerTask int) error {
	if c.TaskID == "" || c.ID == "" {
		return errors.New("writing push config: empty id")
	}
	created := c.CreatedAt
	if created.IsZero() {
		created = time.Now()
	}
	n, err := s.do(ctx, func(w *writer, nowMS int64) (int, error) {
		if maxPerTask > 0 {
			st, err := w.stmt(`SELECT count(*), coalesce(sum(id = ?), 0) FROM push_configs WHERE task_id = ?`)
			if err != nil {
				return 0, err
			}
			var count, same int
			if err := st.QueryRow(c.ID, c.TaskID).Scan(&count, &same); err != nil {
				return 0, fmt.Errorf("counting push configs: %w", err)
			}
			if same == 0 && count >= maxPerTask {
				return pushLimitReached, nil
			}
		}
		n, err := w.exec(`INSERT INTO push_configs (task_id, id, owner, url, token, auth_scheme, credentials, created_ms, updated_ms)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (task_id, id) DO UPDATE SET url = excluded.url, token = excluded.token,
	auth_scheme = excluded.auth_scheme, credentials = excluded.credentials, updated_ms = excluded.updated_ms
WHERE push_configs.owner = excluded.owner`, c.TaskID, c.ID, c.Owner, c.URL, c.Token, c.Scheme, c.Credentials, created.UnixMilli(), nowMS)
		if err != nil {
			return 0, fmt.Errorf("writing push config: %w", err)
		}
		if n == 0 {
			return 0, ErrNotFound
		}
		return 1, nil
	})
	if err == nil && n == pushLimitReached {
		return ErrPushConfigLimit
	}
	return err
}

// GetPushConfig returns the owner's config, or ErrNotFound.
func (s *SQLite) GetPushConfig(ctx context.Context, owner, taskID, id string) (*PushConfig, error) {
	cs, err := s.queryConfigs(ctx, `SELECT task_id, id, owner, url, token, auth_scheme, credentials, created_ms
FROM push_configs WHERE task_id = ? AND id = ? AND owner = ?`, taskID, id, owner)
	if err != nil {
		return nil, err
	}
	if len(cs) == 0 {
		return nil, ErrNotFound
	}
	return &cs[0], nil
}

// ListPushConfigs returns a page of the owner's configs of a task.
func (s *SQLite) ListPushConfigs(ctx context.Context, owner, taskID, after string, limit int) ([]PushConfig, error) {
	if limit <= 0 {
		limit = 100
	}
	return s.queryConfigs(ctx, `SELECT task_id, id, owner, url, token, auth_scheme, credentials, created_ms
FROM push_configs WHERE task_id = ? AND owner = ? AND id > ? ORDER BY id LIMIT ?`, taskID, owner, after, limit)
}

func (s *SQLite) queryConfigs(ctx context.Context, q string, args ...any) ([]PushConfig, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.readErr(fmt.Errorf("reading push configs: %w", err))
	}
	defer rows.Close()
	var out []PushConfig
	for rows.Next() {
		var c PushConfig
		var ms int64
		if err := rows.Scan(&c.TaskID, &c.ID, &c.Owner, &c.URL, &c.Token, &c.Scheme, &c.Credentials, &ms); err != nil {
			return nil, s.readErr(fmt.Errorf("reading push configs: %w", err))
		}
		c.CreatedAt = time.UnixMilli(ms)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(fmt.Errorf("reading push configs: %w", err))
	}
	return out, nil
}

// DeletePushConfig removes the owner's config and its pending deliveries.
func (s *SQLite) DeletePushConfig(ctx context.Context, owner, taskID, id string) error {
	_, err := s.do(ctx, func(w *writer, _ int64) (int, error) {
		n, err := w.exec(`DELETE FROM push_configs WHERE task_id = ? AND id = ? AND owner = ?`, taskID, id, owner)
		if err != nil {
			return 0, fmt.Errorf("deleting push config: %w", err)
		}
		if n == 0 {
			return 0, nil
		}
		if _, err := w.exec(`DELETE FROM push_jobs WHERE task_id = ? AND config_id = ?`, taskID, id); err != nil {
			return 0, fmt.Errorf("dropping push deliveries: %w", err)
		}
		return 1, nil
	})
	return err
}

// PutTaskWithJobs stores the task and queues its deliveries atomically.
func (s *SQLite) PutTaskWithJobs(ctx context.Context, owner string, t *a2a.Task, payload []byte) (int, error) {
	if payload == nil {
		payload = []byte{}
	}
	n, err := s.putTask(ctx, owner, t, payload)
	if err != nil {
		return 0, err
	}
	return max(n-1, 0), nil
}

// ClaimPushJobs leases due jobs.
func (s *SQLite) ClaimPushJobs(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]PushJob, error) {
	if limit <= 0 {
		limit = 1
	}
	var out []PushJob
	_, err := s.do(ctx, func(w *writer, _ int64) (int, error) {
		out = out[:0]
		st, err := w.stmt(`UPDATE push_jobs SET lease_until = ?
WHERE id IN (SELECT id FROM push_jobs WHERE due_ms <= ? AND lease_until <= ? ORDER BY due_ms LIMIT ?)
RETURNING ` + jobCols)
		if err != nil {
			return 0, err
		}
		nowMS := now.UnixMilli()
		rows, err := st.Query(now.Add(lease).UnixMilli(), nowMS, nowMS, limit)
		if err != nil {
			return 0, fmt.Errorf("claiming push deliveries: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			j, err := scanJob(rows)
			if err != nil {
				return 0, fmt.Errorf("claiming push deliveries: %w", err)
			}
			out = append(out, j)
		}
		if err := rows.Err(); err != nil {
			return 0, fmt.Errorf("claiming push deliveries: %w", err)
		}
		return len(out), nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

type scanner interface{ Scan(...any) error }

func scanJob(r scanner, extra ...any) (PushJob, error) {
	var j PushJob
	var payload string
	var dueMS, createdMS int64
	dst := append([]any{&j.ID, &j.TaskID, &j.ConfigID, &j.Owner, &j.URL, &j.Token, &j.Scheme, &j.Credentials, &payload, &j.Attempts, &dueMS, &j.LastError, &createdMS, &j.TraceParent}, extra...)
	if err := r.Scan(dst...); err != nil {
		return j, err
	}
	j.Payload = []byte(payload)
	j.Due, j.CreatedAt = time.UnixMilli(dueMS), time.UnixMilli(createdMS)
	return j, nil
}

// AckPushJobs deletes jobs.
func (s *SQLite) AckPushJobs(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.do(ctx, func(w *writer, _ int64) (int, error) {
		for _, id := range ids {
			if _, err := w.exec(`DELETE FROM push_jobs WHERE id = ?`, id); err != nil {
				return 0, fmt.Errorf("acknowledging push delivery: %w", err)
			}
		}
		return len(ids), nil
	})
	return err
}

// RetryPushJob schedules the next attempt.
func (s *SQLite) RetryPushJob(ctx context.Context, id string, attempts int, due time.Time, lastErr string) error {
	_, err := s.do(ctx, func(w *writer, _ int64) (int, error) {
		if _, err := w.exec(`UPDATE push_jobs SET attempts = ?, due_ms = ?, lease_until = 0, last_error = ? WHERE id = ?`,
			attempts, due.UnixMilli(), lastErr, id); err != nil {
			return 0, fmt.Errorf("scheduling push retry: %w", err)
		}
		return 1, nil
	})
	return err
}

// DeadPushJob moves a job to the dead letters.
func (s *SQLite) DeadPushJob(ctx context.Context, id string, attempts int, reason string) error {
	_, err := s.do(ctx, func(w *writer, nowMS int64) (int, error) {
		if _, err := w.exec(`INSERT OR REPLACE INTO push_dead (id, task_id, config_id, owner, url, token, auth_scheme, credentials, payload, attempts, reason, created_ms, dead_ms, traceparent)
SELECT id, task_id, config_id, owner, url, token, auth_scheme, credentials, payload, ?, ?, created_ms, ?, traceparent FROM push_jobs WHERE id = ?`,
			attempts, reason, nowMS, id); err != nil {
			return 0, fmt.Errorf("dead-lettering push delivery: %w", err)
		}
		if _, err := w.exec(`DELETE FROM push_jobs WHERE id = ?`, id); err != nil {
			return 0, fmt.Errorf("dead-lettering push delivery: %w", err)
		}
		return 1, nil
	})
	return err
}

// ReleasePushLeases clears every lease.
func (s *SQLite) ReleasePushLeases(ctx context.Context) (int, error) {
	return s.do(ctx, func(w *writer, _ int64) (int, error) {
		n, err := w.exec(`UPDATE push_jobs SET lease_until = 0 WHERE lease_until > 0`)
		if err != nil {
			return 0, fmt.Errorf("releasing push leases: %w", err)
		}
		return int(n), nil
	})
}

// PushQueueDepth counts outbox jobs.
func (s *SQLite) PushQueueDepth(ctx context.Context) (int, error) {
	if s.closed.Load() {
		return 0, ErrClosed
	}
	var n int
	if err := s.rdb.QueryRowContext(ctx, `SELECT count(*) FROM push_jobs`).Scan(&n); err != nil {
		return 0, s.readErr(fmt.Errorf("counting push deliveries: %w", err))
	}
	return n, nil
}

// ListDeadPushJobs lists dead letters, oldest first.
func (s *SQLite) ListDeadPushJobs(ctx context.Context, limit int) ([]DeadPushJob, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT id, task_id, config_id, owner, url, token, auth_scheme, credentials, payload, attempts, dead_ms, '', created_ms, traceparent, reason, dead_ms
FROM push_dead ORDER BY dead_ms, id LIMIT ?`, limit)
	if err != nil {
		return nil, s.readErr(fmt.Errorf("reading dead push deliveries: %w", err))
	}
	defer rows.Close()
	var out []DeadPushJob
	for rows.Next() {
		var d DeadPushJob
		var deadMS int64
		j, err := scanJob(rows, &d.Reason, &deadMS)
		if err != nil {
			return nil, s.readErr(fmt.Errorf("reading dead push deliveries: %w", err))
		}
		d.PushJob, d.DeadAt = j, time.UnixMilli(deadMS)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(fmt.Errorf("reading dead push deliveries: %w", err))
	}
	return out, nil
}

// RequeueDeadPushJobs moves dead letters back to the outbox.
func (s *SQLite) RequeueDeadPushJobs(ctx context.Context, id string) (int, error) {
	return s.do(ctx, func(w *writer, nowMS int64) (int, error) {
		where, args := `WHERE id = ?`, []any{nowMS, id}
		if id == "" {
			where, args = ``, []any{nowMS}
		}
		n, err := w.exec(`INSERT OR IGNORE INTO push_jobs (`+jobCols+`, lease_until)
SELECT id, task_id, config_id, owner, url, token, auth_scheme, credentials, payload, 0, ?, '', created_ms, traceparent, 0 FROM push_dead `+where, args...)
		if err != nil {
			return 0, fmt.Errorf("requeueing dead push deliveries: %w", err)
		}
		if id == "" {
			_, err = w.exec(`DELETE FROM push_dead`)
		} else {
			_, err = w.exec(`DELETE FROM push_dead WHERE id = ?`, id)
		}
		if err != nil {
			return 0, fmt.Errorf("requeueing dead push deliveries: %w", err)
		}
		return int(n), nil
	})
}

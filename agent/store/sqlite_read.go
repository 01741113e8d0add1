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

// GetTask returns the owner's task, or ErrNotFound.
func (s *SQLite) GetTask(ctx context.Context, owner, id string) (*a2a.Task, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	rows, err := s.getTask.QueryContext(ctx, id, owner)
	if err != nil {
		return nil, s.readErr(fmt.Errorf("reading task: %w", err))
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, s.readErr(fmt.Errorf("reading task: %w", err))
		}
		return nil, ErrNotFound
	}
	var body, arts sql.RawBytes
	if err := rows.Scan(&body, &arts); err != nil {
		return nil, s.readErr(fmt.Errorf("reading task: %w", err))
	}
	t := new(a2a.Task)
	if err := decodeTask(t, body, arts, true); err != nil {
		return nil, err
	}
	return t, nil
}

// decodeTask fills t from the stored body and, when withArtifacts, the
// stored artifacts.
func decodeTask(t *a2a.Task, body, arts []byte, withArtifacts bool) error {
	if err := json.Unmarshal(body, t); err != nil {
		return fmt.Errorf("decoding stored task: %w", err)
	}
	t.Artifacts = nil
	if withArtifacts && len(arts) > 0 {
		if err := json.Unmarshal(arts, &t.Artifacts); err != nil {
			return fmt.Errorf("decoding stored artifacts of task %q: %w", t.ID, err)
		}
	}
	return nil
}

// GetContext returns the owner's context record, or ErrNotFound.
func (s *SQLite) GetContext(ctx context.Context, owner, id string) (*ContextRecord, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	c := &ContextRecord{Owner: owner, ID: id}
	var created, updated int64
	err := s.getContext.QueryRowContext(ctx, owner, id).Scan(&c.Cwd, &c.State, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, s.readErr(fmt.Errorf("reading context: %w", err))
	}
	c.CreatedAt = time.UnixMilli(created).UTC()
	c.UpdatedAt = time.UnixMilli(updated).UTC()
	return c, nil
}

package store

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations is the schema history. migrations[i] brings a database from
// version i to version i+1; the version is kept in PRAGMA user_version.
// Entries are append-only: never edit one that has shipped, add a new one.
// SCHEMA.md documents the resulting schema.
var migrations = []string{
	// 1: tasks, their per-filter counts, and contexts.
	`
CREATE TABLE tasks (
	id         TEXT    NOT NULL PRIMARY KEY,
	owner      TEXT    NOT NULL,
	context_id TEXT    NOT NULL,
	state      TEXT    NOT NULL,
	status_ts  INTEGER NOT NULL,
	body       TEXT    NOT NULL,
	artifacts  TEXT,
	created_ms INTEGER NOT NULL,
	updated_ms INTEGER NOT NULL
);
CREATE INDEX tasks_owner_ts ON tasks (owner, status_ts DESC, id DESC);
CREATE INDEX tasks_owner_ctx_ts ON tasks (owner, context_id, status_ts DESC, id DESC);
CREATE INDEX tasks_owner_state_ts ON tasks (owner, state, status_ts DESC, id DESC);
CREATE INDEX tasks_owner_ctx_state_ts ON tasks (owner, context_id, state, status_ts DESC, id DESC);

CREATE TABLE task_counts (
	owner      TEXT    NOT NULL,
	context_id TEXT    NOT NULL,
	state      TEXT    NOT NULL,
	n          INTEGER NOT NULL,
	PRIMARY KEY (owner, context_id, state)
) WITHOUT ROWID;

CREATE TRIGGER tasks_count_insert AFTER INSERT ON tasks
BEGIN
	INSERT INTO task_counts (owner, context_id, state, n)
		SELECT DISTINCT NEW.owner, column1, column2, 1
		FROM (VALUES ('', ''), ('', NEW.state), (NEW.context_id, ''), (NEW.context_id, NEW.state))
		WHERE true
	ON CONFLICT (owner, context_id, state) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER tasks_count_delete AFTER DELETE ON tasks
BEGIN
	UPDATE task_counts SET n = n - 1
	WHERE owner = OLD.owner AND (context_id, state) IN
		(VALUES ('', ''), ('', OLD.state), (OLD.context_id, ''), (OLD.context_id, OLD.state));
END;

CREATE TRIGGER tasks_count_update AFTER UPDATE OF owner, context_id, state ON tasks
WHEN OLD.owner IS NOT NEW.owner OR OLD.context_id IS NOT NEW.context_id OR OLD.state IS NOT NEW.state
BEGIN
	UPDATE task_counts SET n = n - 1
	WHERE owner = OLD.owner AND (context_id, state) IN
		(VALUES ('', ''), ('', OLD.state), (OLD.context_id, ''), (OLD.context_id, OLD.state));
	INSERT INTO task_counts (owner, context_id, state, n)
		SELECT DISTINCT NEW.owner, column1, column2, 1
		FROM (VALUES ('', ''), ('', NEW.state), (NEW.context_id, ''), (NEW.context_id, NEW.state))
		WHERE true
	ON CONFLICT (owner, context_id, state) DO UPDATE SET n = n + 1;
END;

CREATE TABLE contexts (
	owner      TEXT    NOT NULL,
	id         TEXT    NOT NULL,
	cwd        TEXT    NOT NULL,
	state      BLOB,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (owner, id)
);
`,
	// 2: push notification configs, the delivery outbox and dead letters
	// (PUSH-1, PUSH-5). token and credentials hold values sealed by the
	// push key ring, never plain secrets.
	`
CREATE TABLE push_configs (
	task_id     TEXT    NOT NULL,
	id          TEXT    NOT NULL,
	owner       TEXT    NOT NULL,
	url         TEXT    NOT NULL,
	token       TEXT    NOT NULL,
	auth_scheme TEXT    NOT NULL,
	credentials TEXT    NOT NULL,
	created_ms  INTEGER NOT NULL,
	updated_ms  INTEGER NOT NULL,
	PRIMARY KEY (task_id, id)
) WITHOUT ROWID;

CREATE TABLE push_jobs (
	id          TEXT    NOT NULL PRIMARY KEY,
	task_id     TEXT    NOT NULL,
	config_id   TEXT    NOT NULL,
	owner       TEXT    NOT NULL,
	url         TEXT    NOT NULL,
	token       TEXT    NOT NULL,
	auth_scheme TEXT    NOT NULL,
	credentials TEXT    NOT NULL,
	payload     TEXT    NOT NULL,
	attempts    INTEGER NOT NULL,
	due_ms      INTEGER NOT NULL,
	lease_until INTEGER NOT NULL,
	last_error  TEXT    NOT NULL,
	created_ms  INTEGER NOT NULL
);
CREATE INDEX push_jobs_due ON push_jobs (due_ms);
CREATE INDEX push_jobs_config ON push_jobs (task_id, config_id);

CREATE TABLE push_dead (
	id          TEXT    NOT NULL PRIMARY KEY,
	task_id     TEXT    NOT NULL,
	config_id   TEXT    NOT NULL,
	owner       TEXT    NOT NULL,
	url         TEXT    NOT NULL,
	token       TEXT    NOT NULL,
	auth_scheme TEXT    NOT NULL,
	credentials TEXT    NOT NULL,
	payload     TEXT    NOT NULL,
	attempts    INTEGER NOT NULL,
	reason      TEXT    NOT NULL,
	created_ms  INTEGER NOT NULL,
	dead_ms     INTEGER NOT NULL
);
CREATE INDEX push_dead_ts ON push_dead (dead_ms, id);
`,
	// 3: the per-task event log of resumable streams (RPC-17), written in
	// the transaction of the task state the events led to, and the sent
	// message ids of idempotent sends (RPC-18).
	`
CREATE TABLE task_events (
	task_id TEXT    NOT NULL,
	seq     INTEGER NOT NULL,
	body    TEXT    NOT NULL,
	PRIMARY KEY (task_id, seq)
) WITHOUT ROWID;

CREATE TRIGGER tasks_events_delete AFTER DELETE ON tasks
BEGIN
	DELETE FROM task_events WHERE task_id = OLD.id;
END;

CREATE TABLE sent_messages (
	owner      TEXT    NOT NULL,
	message_id TEXT    NOT NULL,
	target     TEXT    NOT NULL,
	task_id    TEXT    NOT NULL,
	start_seq  INTEGER NOT NULL,
	body_hash  TEXT    NOT NULL,
	created_ms INTEGER NOT NULL,
	PRIMARY KEY (owner, message_id, target)
) WITHOUT ROWID;
CREATE INDEX sent_messages_ts ON sent_messages (created_ms);
`,
	// 4: less work per task write (issue 17). The (owner, context, state)
	// index and counts go: a context+state filter walks the context's
	// index, and its total is counted over that range. A state change
	// within a context, the common write, now touches two count rows
	// instead of eight.
	`
DROP INDEX tasks_owner_ctx_state_ts;
DROP TRIGGER tasks_count_insert;
DROP TRIGGER tasks_count_delete;
DROP TRIGGER tasks_count_update;
DELETE FROM task_counts WHERE context_id <> '' AND state <> '';

CREATE TRIGGER tasks_count_insert AFTER INSERT ON tasks
BEGIN
	INSERT INTO task_counts (owner, context_id, state, n)
		SELECT DISTINCT NEW.owner, column1, column2, 1
		FROM (VALUES ('', ''), ('', NEW.state), (NEW.context_id, ''))
		WHERE true
	ON CONFLICT (owner, context_id, state) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER tasks_count_delete AFTER DELETE ON tasks
BEGIN
	UPDATE task_counts SET n = n - 1
	WHERE owner = OLD.owner AND (context_id, state) IN
		(VALUES ('', ''), ('', OLD.state), (OLD.context_id, ''));
END;

CREATE TRIGGER tasks_count_state AFTER UPDATE OF state ON tasks
WHEN OLD.owner IS NEW.owner AND OLD.context_id IS NEW.context_id AND OLD.state IS NOT NEW.state
	AND OLD.state <> '' AND NEW.state <> ''
BEGIN
	UPDATE task_counts SET n = n - 1
	WHERE owner = OLD.owner AND context_id = '' AND state = OLD.state;
	INSERT INTO task_counts (owner, context_id, state, n) VALUES (NEW.owner, '', NEW.state, 1)
	ON CONFLICT (owner, context_id, state) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER tasks_count_move AFTER UPDATE OF owner, context_id, state ON tasks
WHEN OLD.owner IS NOT NEW.owner OR OLD.context_id IS NOT NEW.context_id
	OR (OLD.state IS NOT NEW.state AND (OLD.state = '' OR NEW.state = ''))
BEGIN
	UPDATE task_counts SET n = n - 1
	WHERE owner = OLD.owner AND (context_id, state) IN
		(VALUES ('', ''), ('', OLD.state), (OLD.context_id, ''));
	INSERT INTO task_counts (owner, context_id, state, n)
		SELECT DISTINCT NEW.owner, column1, column2, 1
		FROM (VALUES ('', ''), ('', NEW.state), (NEW.context_id, ''))
		WHERE true
	ON CONFLICT (owner, context_id, state) DO UPDATE SET n = n + 1;
END;
`,
	// 5: the W3C traceparent of the turn that queued a delivery (issue
	// 28), kept by its dead letter; '' for jobs queued before.
	`
ALTER TABLE push_jobs ADD COLUMN traceparent TEXT NOT NULL DEFAULT '';
ALTER TABLE push_dead ADD COLUMN traceparent TEXT NOT NULL DEFAULT '';
`,
	// 6: fewer b-tree writes per new task (issue 29). The per-context
	// count rows go: a new task, usually in a new context, inserted one
	// row of its own into task_counts. A context filter counts its
	// context's index range instead, as a context+state filter already
	// does; the owner total and the per-state counts stay, and so does
	// migration 4's tasks_count_state (a state change within a context).
	`
DROP TRIGGER tasks_count_insert;
DROP TRIGGER tasks_count_delete;
DROP TRIGGER tasks_count_move;
DELETE FROM task_counts WHERE context_id <> '';

CREATE TRIGGER tasks_count_insert AFTER INSERT ON tasks
BEGIN
` + countNewTask + `END;

CREATE TRIGGER tasks_count_delete AFTER DELETE ON tasks
BEGIN
	UPDATE task_counts SET n = n - 1
	WHERE owner = OLD.owner AND context_id = '' AND state IN ('', OLD.state);
END;

CREATE TRIGGER tasks_count_move AFTER UPDATE OF owner, context_id, state ON tasks
WHEN OLD.owner IS NOT NEW.owner OR OLD.context_id IS NOT NEW.context_id
	OR (OLD.state IS NOT NEW.state AND (OLD.state = '' OR NEW.state = ''))
BEGIN
	UPDATE task_counts SET n = n - 1
	WHERE owner = OLD.owner AND context_id = '' AND state IN ('', OLD.state);
` + countNewTask + `END;
`,
}

// countNewTask counts a task in its owner's total and in its state's
// (one row when the state is empty): the body of migration 6's insert and
// move triggers.
const countNewTask = `	INSERT INTO task_counts (owner, context_id, state, n)
		SELECT DISTINCT NEW.owner, '', column1, 1
		FROM (VALUES (''), (NEW.state))
		WHERE true
	ON CONFLICT (owner, context_id, state) DO UPDATE SET n = n + 1;
`

// schemaVersion is the version a fully migrated database has.
var schemaVersion = len(migrations)

// migrate brings the database behind conn to schemaVersion, applying the
// missing migrations in order inside one write transaction. It is a no-op on
// an up-to-date database and refuses one written by a newer binary.
func migrate(ctx context.Context, conn *sql.Conn) (err error) {
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("starting migration: %w", err)
	}
	defer func() {
		if err != nil {
			_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		}
	}()
	var v int
	if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("reading schema version: %w", err)
	}
	if v > schemaVersion {
		return fmt.Errorf("database schema version %d is newer than this build supports (%d)", v, schemaVersion)
	}
	if v < 0 {
		return fmt.Errorf("invalid database schema version %d", v)
	}
	for i := v; i < schemaVersion; i++ {
		if _, err := conn.ExecContext(ctx, migrations[i]); err != nil {
			return fmt.Errorf("applying schema migration %d: %w", i+1, err)
		}
	}
	if v != schemaVersion {
		// PRAGMA takes no bound parameters; the value is our own integer.
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
			return fmt.Errorf("recording schema version: %w", err)
		}
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("committing migration: %w", err)
	}
	return nil
}

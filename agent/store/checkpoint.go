package store

import (
	"context"
	"database/sql"
	"time"
)

// checkpointEvery is how often the background checkpointer runs.
const checkpointEvery = 100 * time.Millisecond

// checkpointer copies committed WAL frames into the database file from its
// own connection, so the writer goroutine never pays for checkpoints on its
// commits (the write connection has wal_autocheckpoint off). A PASSIVE
// checkpoint never blocks the writer or the readers.
type checkpointer struct {
	db      *sql.DB
	stop    chan struct{}
	stopped chan struct{}
}

func startCheckpointer(dsn string) (*checkpointer, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := db.PingContext(context.Background()); err != nil {
		_ = db.Close()
		return nil, err
	}
	c := &checkpointer{db: db, stop: make(chan struct{}), stopped: make(chan struct{})}
	go c.run()
	return c, nil
}

func (c *checkpointer) run() {
	defer close(c.stopped)
	t := time.NewTicker(checkpointEvery)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			// Errors (SQLITE_BUSY while another checkpoint runs) only
			// delay the copy to the next tick.
			_, _ = c.db.Exec("PRAGMA wal_checkpoint(PASSIVE)")
		}
	}
}

// close stops the goroutine and closes its connection.
func (c *checkpointer) close() error {
	if c == nil {
		return nil
	}
	close(c.stop)
	<-c.stopped
	return c.db.Close()
}

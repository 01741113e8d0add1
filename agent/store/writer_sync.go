package store

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

// Pipelined group commit (issue 29, RPC-12). With durability full the
// write connection runs with synchronous=NORMAL, so SQLite's COMMIT writes
// the batch's WAL frames without syncing them, and the writer hands the
// committed batch to walSync. walSync's goroutine fsyncs the WAL file and
// only then answers the batch's callers, while the writer already runs the
// next batch's statements: the sync of one batch overlaps the SQLite work
// of the next, and one fsync covers every batch committed before it began.
//
// Why an answer still means "on disk" (what synchronous=FULL promised):
//   - A commit's frames are written (pwrite) to the WAL before COMMIT
//     returns, and the fsync starts after that, so when it returns every
//     frame of the batch, its commit frame included, is on stable storage
//     (fsync flushes the file's pages whichever descriptor wrote them).
//   - SQLite's WAL recovery replays frames from the start of the log while
//     their salts match the header and their cumulative checksums hold, and
//     keeps every transaction whose commit frame it reached. Frames of a
//     later batch that were not synced can only be torn at the end of the
//     log: recovery stops there and keeps the synced batches before them.
//   - Earlier frames are overwritten only when the log restarts after a
//     checkpoint, and with synchronous=NORMAL SQLite syncs the WAL before a
//     checkpoint, the database file after it, and the WAL header when the
//     log restarts: a restart never drops a committed, synced batch.
//
// What changes: a batch is visible to readers from its COMMIT, up to one
// fsync before it is durable (with synchronous=FULL, from the end of its
// own sync). A reader may thus see a state that a power loss in that window
// takes back; no caller was told it was stored. A failed fsync is sticky:
// the batch and every later write fail with ErrSync (the store's readiness
// check too), as the kernel may have dropped the unsynced pages.

// ErrSync is the error of writes after the write-ahead log could not be
// synced to disk: the data they committed may not be durable.
var ErrSync = errors.New("syncing the task store's write-ahead log failed")

// syncQueue is how many committed batches may wait for their fsync before
// the writer waits for the syncer.
const syncQueue = 64

// syncBatch is a committed batch waiting for the fsync that makes it
// durable: its requests and their results, in order.
type syncBatch struct {
	reqs []*writeReq
	res  []writeResult
}

// walSync is the goroutine that syncs the WAL and answers committed batches.
type walSync struct {
	path string // the database's -wal file
	in   chan *syncBatch
	done chan struct{} // closed when the goroutine returned
	pool sync.Pool     // *syncBatch

	// failed holds the first sync error (sticky); read by the writer
	// before each batch.
	failed atomic.Pointer[error]

	f  *os.File    // the WAL, opened at the first sync
	fi os.FileInfo // f's identity, to notice a WAL file replaced under it

	// pending counts the batches handed and not yet synced; synced gets
	// a token after each sync (the writer's absorb waits on both).
	pending atomic.Int64
	synced  chan struct{}

	nSyncs atomic.Int64 // fsyncs done (tests, benchmarks)

	// beforeSync, when set (tests only, before the store is used), runs
	// before each fsync; an error it returns is taken as the fsync's.
	beforeSync func() error
}

// newWALSync starts the syncer of the WAL of the database at dbPath.
func newWALSync(dbPath string) *walSync {
	s := &walSync{path: dbPath + "-wal", in: make(chan *syncBatch, syncQueue), done: make(chan struct{}),
		synced: make(chan struct{}, 1)}
	go s.run()
	return s
}

// err returns ErrSync once a sync failed, else nil.
func (s *walSync) err() error {
	if p := s.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// hand passes a committed batch (reqs with their results out) to the
// syncer; it copies both, so the writer may reuse its slices.
func (s *walSync) hand(reqs []*writeReq, out []writeResult) {
	b, _ := s.pool.Get().(*syncBatch)
	if b == nil {
		b = &syncBatch{}
	}
	b.reqs = append(b.reqs[:0], reqs...)
	b.res = append(b.res[:0], out...)
	s.pending.Add(1)
	s.in <- b
}

// stop waits for every handed batch to be synced and answered; the writer
// calls it once, after its last batch.
func (s *walSync) stop() {
	close(s.in)
	<-s.done
	if s.f != nil {
		_ = s.f.Close()
	}
}

// run takes the batches committed so far, syncs the WAL once for all of
// them, and answers them in commit order.
func (s *walSync) run() {
	defer close(s.done)
	var ready []*syncBatch
	for b := range s.in {
		ready = append(ready[:0], b)
	drain:
		for {
			select {
			case more, ok := <-s.in:
				if !ok {
					break drain
				}
				ready = append(ready, more)
			default:
				break drain
			}
		}
		err := s.err()
		if err == nil {
			if err = s.sync(); err != nil {
				s.failed.Store(&err)
			}
		}
		s.pending.Add(-int64(len(ready)))
		select {
		case s.synced <- struct{}{}:
		default:
		}
		for _, b := range ready {
			for i, r := range b.reqs {
				res := b.res[i]
				if err != nil && res.err == nil {
					res = writeResult{err: err}
				}
				answer(r, res)
			}
			clear(b.reqs)
			s.pool.Put(b)
		}
		clear(ready)
	}
}

// sync fsyncs the WAL file, reopening it if SQLite replaced it since the
// last sync. Its error names no path (it may reach a caller).
func (s *walSync) sync() error {
	cur, err := os.Stat(s.path)
	if err != nil {
		return syncErr(err)
	}
	if s.f == nil || !os.SameFile(s.fi, cur) {
		if s.f != nil {
			_ = s.f.Close()
			s.f = nil
		}
		f, err := os.OpenFile(s.path, os.O_RDWR, 0)
		if err != nil {
			return syncErr(err)
		}
		fi, err := f.Stat()
		if err != nil {
			_ = f.Close()
			return syncErr(err)
		}
		s.f, s.fi = f, fi
	}
	s.nSyncs.Add(1)
	if s.beforeSync != nil {
		if err := s.beforeSync(); err != nil {
			return syncErr(err)
		}
	}
	if err := s.f.Sync(); err != nil {
		return syncErr(err)
	}
	return nil
}

// syncErr wraps the OS reason of a failed sync in ErrSync, without the
// file's path.
func syncErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%w: %v", ErrSync, err)
}

// answer sends r its result, then runs its after hook.
func answer(r *writeReq, res writeResult) {
	after := r.after
	r.done <- res
	if after != nil {
		after(res.err)
	}
}

package store

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// Pipelined group commit (issue 29, RPC-12): with durability full a write
// returns only after an fsync of the WAL that began after its commit; a
// write that arrives during a sync is applied then and committed after it.
func TestPipelinedCommitAnswersAfterSync(t *testing.T) {
	s, _ := newTestStore(t)
	if s.w.sync == nil {
		t.Fatal("durability full has no WAL syncer")
	}
	entered := make(chan struct{}, 16)
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	defer unblock() // a failed test must not leave the writer waiting
	s.w.sync.beforeSync = func() error {
		entered <- struct{}{}
		<-release
		return nil
	}
	put := func(id string) <-chan error {
		done := make(chan error, 1)
		go func() { done <- s.PutTask(bg, "o", mkTask(id, "c", a2a.TaskStateWorking, time.Now())) }()
		return done
	}
	first := put("t1")
	select {
	case <-entered: // t1 is committed; its sync is held
	case err := <-first:
		t.Fatalf("t1 returned (%v) with no WAL sync", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no WAL sync after t1's commit")
	}
	second := put("t2")
	// sleep: give the writer time to take t2 and apply it while t1's sync
	// is held (a writer that has not taken it yet fails nothing below).
	time.Sleep(100 * time.Millisecond)
	// t2 joined a transaction that commits after t1's sync (one commit per
	// sync), so it is not visible yet; neither write has returned.
	if _, err := s.GetTask(bg, "o", "t2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("t2 committed while t1's sync was held: GetTask = %v", err)
	}
	select {
	case err := <-first:
		t.Fatalf("t1 returned (%v) before the WAL sync after its commit ended", err)
	case err := <-second:
		t.Fatalf("t2 returned (%v) before any WAL sync after its commit", err)
	default:
	}
	unblock()
	for name, ch := range map[string]<-chan error{"t1": first, "t2": second} {
		if err := <-ch; err != nil {
			t.Errorf("PutTask %s: %v", name, err)
		}
	}
	if n := s.w.sync.nSyncs.Load(); n < 2 {
		t.Errorf("%d WAL syncs for two batches, the second committed after the first sync began", n)
	}
}

// A failed fsync is sticky: the write that waited for it and every later
// one fail with ErrSync, naming no path; so does the readiness check.
func TestPipelinedCommitSyncFailureIsSticky(t *testing.T) {
	s, path := newTestStore(t)
	fail := errors.New("input/output error")
	s.w.sync.beforeSync = func() error { return fail }
	err := s.PutTask(bg, "o", mkTask("t1", "c", a2a.TaskStateWorking, time.Now()))
	if !errors.Is(err, ErrSync) || !strings.Contains(err.Error(), "input/output error") {
		t.Fatalf("PutTask after a failed sync: %v, want ErrSync with the reason", err)
	}
	if strings.Contains(err.Error(), filepath.Dir(path)) {
		t.Errorf("the error names the local path: %v", err)
	}
	s.w.sync.beforeSync = nil // the disk "recovers": the store must not trust it
	if err := s.PutTask(bg, "o", mkTask("t2", "c", a2a.TaskStateWorking, time.Now())); !errors.Is(err, ErrSync) {
		t.Errorf("a later write: %v, want ErrSync", err)
	}
	if err := s.Check(bg); !errors.Is(err, ErrSync) {
		t.Errorf("Check after a failed sync: %v, want ErrSync", err)
	}
	if _, err := s.GetTask(bg, "o", "t2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a write after the failure was committed: GetTask = %v", err)
	}
}

// killLoopEnv names the directory the re-executed test binary writes in.
const killLoopEnv = "A2A_STORE_KILL_LOOP_DIR"

// TestPipelinedCommitKillLoop: kill -9 a process that writes tasks from 16
// goroutines and prints each id once its PutTask returned; the reopened
// store must hold every printed id, round after round on one database.
// (kill -9 keeps the page cache, so this checks recovery and ordering, not
// the fsync: TestDurabilityAcknowledgedIsSynced traces that.)
func TestPipelinedCommitKillLoop(t *testing.T) {
	if dir := os.Getenv(killLoopEnv); dir != "" {
		killLoopChild(dir)
		return
	}
	if testing.Short() {
		t.Skip("kill loop in -short mode")
	}
	dir := t.TempDir()
	acked := map[string]bool{}
	for round := range 4 {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestPipelinedCommitKillLoop$", "-test.v=false")
		cmd.Env = append(os.Environ(), killLoopEnv+"="+dir, fmt.Sprintf("A2A_STORE_KILL_ROUND=%d", round))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		n := 0
		for sc.Scan() && n < 100+50*round {
			if id, ok := strings.CutPrefix(sc.Text(), "acked "); ok {
				acked[id] = true
				n++
			}
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		// What was printed before the kill and read after it is acked too.
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "acked "); ok {
				acked[id] = true
			}
		}
		_ = cmd.Wait()
		if n == 0 {
			t.Fatalf("round %d: the writer process acknowledged nothing", round)
		}
		s := openTest(t, filepath.Join(dir, "a2a.db"), SQLiteOptions{})
		lost := 0
		for id := range acked {
			if _, err := s.GetTask(bg, "o", id); err != nil {
				lost++
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if lost > 0 {
			t.Fatalf("round %d: %d of %d acknowledged tasks lost after kill -9", round, lost, len(acked))
		}
	}
	t.Logf("%d acknowledged tasks over 4 kill -9 rounds, none lost", len(acked))
}

// killLoopChild writes tasks until it is killed, printing each id after
// its write returned.
func killLoopChild(dir string) {
	s, err := OpenSQLite(filepath.Join(dir, "a2a.db"), SQLiteOptions{})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	round := os.Getenv("A2A_STORE_KILL_ROUND")
	var mu sync.Mutex
	w := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				id := fmt.Sprintf("r%s-g%d-%d", round, g, i)
				if err := s.PutTask(bg, "o", mkTask(id, "c", a2a.TaskStateCompleted, time.Now())); err != nil {
					return
				}
				mu.Lock()
				fmt.Fprintf(w, "acked %s\n", id)
				_ = w.Flush()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	os.Exit(1)
}

package tests

// A checker for "acknowledged = synced" over an strace log of the gateway
// (issue 33.4), for requests made one at a time: every JSON-RPC answer the
// gateway writes to a TCP socket must come after a completed
// fsync/fdatasync of the SQLite WAL that covers a WAL write made since the
// previous answer (the commit of this request). WAL writes of background
// work (the push worker claiming and acknowledging jobs) may be in flight
// at the answer: they are counted (inFlight) but are not this request's.

import (
	"bufio"
	"io"
	"regexp"
	"strings"
	"testing"
)

// fsyncTraceArgs are the strace flags the checker reads: follow threads,
// fd paths and socket addresses (-yy), enough of each buffer to see a
// JSON-RPC answer.
var fsyncTraceArgs = []string{"-f", "-yy", "-qq", "-s", "4096",
	"-e", "trace=write,writev,pwrite64,pwritev,pwritev2,sendto,sendmsg,fsync,fdatasync"}

// fsyncReport is what checkFsyncTrace found.
type fsyncReport struct {
	walWrites, walSyncs int
	// acks counts JSON-RPC answers written to a socket.
	acks int
	// unsynced counts answers with no completed sync of a WAL write made
	// since the previous answer; firstUnsynced describes the first.
	unsynced      int
	firstUnsynced string
	// inFlight counts answers written while some WAL write (of any
	// writer) was not yet covered by a sync.
	inFlight int
	// noWrite counts answers with no WAL write since the previous answer.
	noWrite int
}

var (
	// 1234 name(fd<path>... ; the socket path holds "->" inside [...].
	traceCall    = regexp.MustCompile(`^(\d+)\s+(\w+)\((\d+)<(TCP[v6]*:\[[^\]]*\]|[^>]*)>`)
	traceResumed = regexp.MustCompile(`^(\d+)\s+<\.\.\. (\w+) resumed>.*= (-?\d+)`)
	traceRet     = regexp.MustCompile(`\) += (-?\d+)`)
)

// checkFsyncTrace reads an strace -f -yy log and applies the rule.
func checkFsyncTrace(r io.Reader) fsyncReport {
	var (
		rep       fsyncReport
		syncedTo  int                // WAL writes covered by a completed sync
		pending   = map[string]int{} // pid → WAL writes when its sync began
		lastWrite int                // WAL writes at the previous answer
		uncovered []string           // the WAL writes after syncedTo, for the report
	)
	cover := func(n int) {
		if n > syncedTo {
			uncovered = uncovered[min(len(uncovered), n-syncedTo):]
			syncedTo = n
		}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := traceResumed.FindStringSubmatch(line); m != nil {
			if snap, ok := pending[m[1]]; ok && (m[2] == "fsync" || m[2] == "fdatasync") {
				delete(pending, m[1])
				if m[3] == "0" {
					cover(snap)
				}
			}
			continue
		}
		m := traceCall.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		pid, name, path := m[1], m[2], m[4]
		wal := strings.HasSuffix(path, "-wal")
		switch {
		case wal && (name == "fsync" || name == "fdatasync"):
			rep.walSyncs++
			if ret := traceRet.FindStringSubmatch(line); ret != nil {
				if ret[1] == "0" {
					cover(rep.walWrites)
				}
			} else {
				pending[pid] = rep.walWrites // <unfinished ...>
			}
		case wal && strings.HasPrefix(name, "pwrite") || wal && strings.HasPrefix(name, "write"):
			rep.walWrites++
			uncovered = append(uncovered, line[:min(len(line), 160)])
		case strings.HasPrefix(path, "TCP") && strings.Contains(line, `\"jsonrpc\"`) && strings.Contains(line, `\"result\"`):
			rep.acks++
			if rep.walWrites > syncedTo {
				rep.inFlight++
			}
			if syncedTo <= lastWrite {
				rep.unsynced++
				if rep.firstUnsynced == "" {
					rep.firstUnsynced = line[:min(len(line), 300)] + "\nafter these WAL writes not yet synced:\n" + strings.Join(uncovered, "\n")
				}
			}
			if rep.walWrites == lastWrite {
				rep.noWrite++
			}
			lastWrite = rep.walWrites
		}
	}
	return rep
}

// TestCheckFsyncTrace: the checker on hand-written traces, with a sync
// that another thread's WAL write overlaps (issue 33.4).
func TestCheckFsyncTrace(t *testing.T) {
	t.Parallel()
	const ack = `10 write(9<TCP:[127.0.0.1:80->127.0.0.1:5000]>, "HTTP/1.1 200 OK\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", 60) = 60`
	for _, tc := range []struct {
		name                     string
		trace                    string
		acks, bad, empty, flight int
	}{
		{"synced", `11 pwrite64(7</d/a2a.db-wal>, "x", 1, 0) = 1
11 fdatasync(7</d/a2a.db-wal>) = 0
` + ack, 1, 0, 0, 0},
		{"no sync", `11 pwrite64(7</d/a2a.db-wal>, "x", 1, 0) = 1
` + ack, 1, 1, 0, 1},
		{"a write during the sync is in flight, not unsynced", `11 pwrite64(7</d/a2a.db-wal>, "x", 1, 0) = 1
11 fdatasync(7</d/a2a.db-wal> <unfinished ...>
12 pwrite64(7</d/a2a.db-wal>, "y", 1, 1) = 1
11 <... fdatasync resumed>) = 0
` + ack, 1, 0, 0, 1},
		{"a sync that began before the write does not cover it", `11 fdatasync(7</d/a2a.db-wal> <unfinished ...>
12 pwrite64(7</d/a2a.db-wal>, "y", 1, 1) = 1
11 <... fdatasync resumed>) = 0
` + ack, 1, 1, 0, 1},
		{"the second answer needs a sync of its own", `11 pwrite64(7</d/a2a.db-wal>, "x", 1, 0) = 1
11 fdatasync(7</d/a2a.db-wal> <unfinished ...>
11 <... fdatasync resumed>) = 0
` + ack + "\n" + `11 pwrite64(7</d/a2a.db-wal>, "x", 1, 0) = 1
` + ack, 2, 1, 0, 1},
		{"resumed sync covers what came before it", `11 pwrite64(7</d/a2a.db-wal>, "x", 1, 0) = 1
11 fdatasync(7</d/a2a.db-wal> <unfinished ...>
11 <... fdatasync resumed>) = 0
` + ack + "\n" + ack, 2, 1, 1, 0},
		{"a sync of another file does not count", `11 pwrite64(7</d/a2a.db-wal>, "x", 1, 0) = 1
11 fdatasync(8</d/a2a.db>) = 0
` + ack, 1, 1, 0, 1},
	} {
		rep := checkFsyncTrace(strings.NewReader(tc.trace))
		if rep.acks != tc.acks || rep.unsynced != tc.bad || rep.noWrite != tc.empty || rep.inFlight != tc.flight {
			t.Errorf("%s: %+v, want %d acks, %d unsynced, %d without a write, %d in flight", tc.name, rep, tc.acks, tc.bad, tc.empty, tc.flight)
		}
	}
}

package a2a

import (
	"math/rand/v2"
	"testing"
	"time"
)

// Timestamp writes what time.Format writes with the A2A layout, for any
// instant, offset and year (issue 17 replaced the layout interpretation).
func TestTimestampMatchesFormat(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	zone := time.FixedZone("x", -7*3600-30*60)
	times := []time.Time{
		time.Unix(0, 0), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-5, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Now(), time.Now().In(zone),
	}
	for range 10000 {
		times = append(times, time.Unix(r.Int64N(1<<36)-1<<35, r.Int64N(1e9)).In(zone))
	}
	for _, tm := range times {
		if got, want := Timestamp(tm), tm.UTC().Format("2006-01-02T15:04:05.000Z"); got != want {
			t.Fatalf("Timestamp(%v) = %q, want %q", tm, got, want)
		}
	}
}

// TestTimestampCache: instants in one millisecond, its neighbours and
// far-off times interleaved get what time.Format writes; a repeat of the
// last millisecond allocates nothing.
func TestTimestampCache(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		base := time.Unix(r.Int64N(1<<34), r.Int64N(1e9))
		for _, tm := range []time.Time{base, base.Add(time.Nanosecond), base.Truncate(time.Millisecond), base.Truncate(time.Millisecond).Add(-time.Nanosecond),
			base.Add(time.Millisecond), base, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), base} {
			if got, want := Timestamp(tm), tm.UTC().Format("2006-01-02T15:04:05.000Z"); got != want {
				t.Fatalf("Timestamp(%v) = %q, want %q", tm, got, want)
			}
		}
	}
	now := time.Now()
	_ = Timestamp(now)
	if n := testing.AllocsPerRun(100, func() { _ = Timestamp(now) }); n != 0 {
		t.Errorf("Timestamp of the last millisecond again: %v allocations, want 0", n)
	}
}

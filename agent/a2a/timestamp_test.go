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

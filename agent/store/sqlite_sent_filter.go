package store

import (
	"hash/maphash"
	"sync"
	"time"
)

// sentFilter lets a claim of a message id skip its database read (RPC-18,
// issue 17): the store is the only writer of sent_messages (one store per
// data directory, which LockDir keeps to one process), so a key it never
// recorded since it opened, and that no record made before it opened can
// match, is not in the database. The filter is a Bloom filter per
// generation of sentGenSpan: "absent" is certain, "present" may be a false
// positive, and then the database is read as before.
type sentFilter struct {
	mu   sync.Mutex
	seed maphash.Seed
	gens [sentGens]sentGen // gens[cur] is the newest generation
	cur  int
	// floorMS: records created before it may be in the database without
	// being in a kept generation (written before the store opened, or in
	// a dropped generation). A claim whose window starts before it reads
	// the database.
	floorMS   int64
	lastAddMS int64 // when the newest key was added
}

// sentGen is one generation of the filter: the keys recorded from startMS
// until the next generation starts.
type sentGen struct {
	startMS int64
	n       int      // keys added
	bits    []uint64 // nil until the first key
}

const (
	sentGens     = 3               // kept generations: they cover at least 2 spans back
	sentGenSpan  = 5 * time.Minute // with sentGens, covers the default 10-minute window
	sentGenBits  = 1 << 23         // bits per generation (1 MiB)
	sentGenCap   = sentGenBits / 8 // keys per generation before it saturates (8 bits a key)
	sentFilterK  = 4               // bits per key
	sentGenWords = sentGenBits / 64
)

// newSentFilter returns a filter for a store whose newest record before
// opening was created at lastMS (0: none).
func newSentFilter(lastMS int64, now time.Time) *sentFilter {
	f := &sentFilter{seed: maphash.MakeSeed(), floorMS: lastMS + 1}
	f.gens[0].startMS = now.UnixMilli()
	return f
}

// advance starts new generations as time passes, dropping the oldest.
// Caller holds mu.
func (f *sentFilter) advance(nowMS int64) {
	span := sentGenSpan.Milliseconds()
	if nowMS-f.gens[f.cur].startMS >= span*sentGens {
		// Idle for longer than every generation: drop them all.
		if f.lastAddMS > 0 {
			f.floorMS = max(f.floorMS, f.lastAddMS+1)
		}
		for i := range f.gens {
			clear(f.gens[i].bits)
			f.gens[i] = sentGen{startMS: nowMS, bits: f.gens[i].bits}
		}
		return
	}
	for nowMS-f.gens[f.cur].startMS >= span {
		next := (f.cur + 1) % sentGens
		if f.gens[next].n > 0 {
			// Its keys were all added before the generation after it began.
			f.floorMS = max(f.floorMS, f.gens[(next+1)%sentGens].startMS)
		}
		bits := f.gens[next].bits
		clear(bits)
		f.gens[next] = sentGen{startMS: f.gens[f.cur].startMS + span, bits: bits}
		f.cur = next
	}
}

// add records key in the current generation.
func (f *sentFilter) add(key string, now time.Time) {
	h := maphash.String(f.seed, key)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.advance(now.UnixMilli())
	g := &f.gens[f.cur]
	if len(g.bits) == 0 {
		g.bits = make([]uint64, sentGenWords)
	}
	g.n++
	f.lastAddMS = now.UnixMilli()
	h1, h2 := uint32(h), uint32(h>>32)|1
	for i := range uint32(sentFilterK) {
		b := (h1 + i*h2) % sentGenBits
		g.bits[b/64] |= 1 << (b % 64)
	}
}

// mayHold reports whether a record of key created at or after sinceMS may
// be in the database: false only when it certainly is not.
func (f *sentFilter) mayHold(key string, since, now time.Time) bool {
	h := maphash.String(f.seed, key)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.advance(now.UnixMilli())
	if since.UnixMilli() < f.floorMS {
		return true
	}
	h1, h2 := uint32(h), uint32(h>>32)|1
	for gi := range f.gens {
		g := &f.gens[gi]
		if g.n == 0 {
			continue
		}
		if g.n > sentGenCap {
			return true // saturated: it would say "maybe" to most keys anyway
		}
		hit := true
		for i := range uint32(sentFilterK) {
			b := (h1 + i*h2) % sentGenBits
			if g.bits[b/64]&(1<<(b%64)) == 0 {
				hit = false
				break
			}
		}
		if hit {
			return true
		}
	}
	return false
}

package card

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// ModTimes remembers when each distinct card body (by hash) was first seen,
// so Last-Modified stays stable for unchanged content. It is bounded and
// safe for concurrent use; an optional Persist hook saves new entries.
type ModTimes struct {
	mu      sync.Mutex
	m       map[string]time.Time
	max     int
	loaded  bool
	load    func() map[string]time.Time
	persist func(map[string]time.Time)
	now     func() time.Time
}

// NewModTimes returns a ModTimes holding at most max entries. load (may be
// nil) is called once, lazily, to restore saved entries; persist (may be
// nil) is called with a snapshot after each new entry.
func NewModTimes(max int, load func() map[string]time.Time, persist func(map[string]time.Time)) *ModTimes {
	if max <= 0 {
		max = 1024
	}
	return &ModTimes{m: map[string]time.Time{}, max: max, load: load, persist: persist, now: time.Now}
}

// FirstSeen returns the time hash was first seen, recording now (to the
// second) if it is new.
func (mt *ModTimes) FirstSeen(hash string) time.Time {
	mt.mu.Lock()
	if !mt.loaded {
		mt.loaded = true
		if mt.load != nil {
			for k, v := range mt.load() {
				if len(mt.m) < mt.max {
					mt.m[k] = v
				}
			}
		}
	}
	if t, ok := mt.m[hash]; ok {
		mt.mu.Unlock()
		return t
	}
	if len(mt.m) >= mt.max {
		// evict the oldest entry
		var oldK string
		var oldT time.Time
		for k, v := range mt.m {
			if oldK == "" || v.Before(oldT) {
				oldK, oldT = k, v
			}
		}
		delete(mt.m, oldK)
	}
	t := mt.now().UTC().Truncate(time.Second)
	mt.m[hash] = t
	var snap map[string]time.Time
	if mt.persist != nil {
		snap = make(map[string]time.Time, len(mt.m))
		for k, v := range mt.m {
			snap[k] = v
		}
	}
	mt.mu.Unlock()
	if snap != nil {
		mt.persist(snap)
	}
	return t
}

// NewFileModTimes returns a ModTimes holding at most max entries, persisted
// as JSON in the file at path (created 0600, its directory 0700; replaced
// atomically) so that restarts keep Last-Modified too. A missing or broken
// file starts empty; a failed save is ignored (the times are then only
// remembered by this process).
func NewFileModTimes(max int, path string) *ModTimes {
	var mu sync.Mutex
	load := func() map[string]time.Time {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		var m map[string]time.Time
		if json.Unmarshal(b, &m) != nil {
			return nil
		}
		return m
	}
	save := func(m map[string]time.Time) {
		mu.Lock()
		defer mu.Unlock()
		b, err := json.Marshal(m)
		if err != nil {
			return
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return
		}
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, b, 0o600); err != nil {
			return
		}
		_ = os.Rename(tmp, path)
	}
	return NewModTimes(max, load, save)
}

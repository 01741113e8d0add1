package store

import (
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// A turn's end in one round trip (issue 32): the context lease of a turn
// is given up by the script that writes the turn's final state, not by a
// script of its own after it. The agent hands the lease over just before
// its final write (ReleaseWithFinalWrite); the next write of the task by
// this handle in a state that ends a turn takes it (standalone and
// Sentinel: in a Cluster the lease is in another slot, and Release does
// its round trip as before). Once the write succeeded the lease's Release
// sends nothing.

var _ FinalReleaser = (*Redis)(nil)

// finalLeaseLua defines releaseLease(k, token): the DEL of lease k if it
// is still token's (releaseScript's body); nothing without k.
const finalLeaseLua = `
local function releaseLease(k, token)
  if k and token ~= '' and redis.call('GET', k) == token then redis.call('DEL', k) end
end
`

// ReleaseWithFinalWrite implements FinalReleaser.
func (s *Redis) ReleaseWithFinalWrite(l ContextLease, taskID string) {
	rl, ok := l.(*redisLease)
	if !ok || rl.s != s || s.cluster {
		return
	}
	s.finalMu.Lock()
	defer s.finalMu.Unlock()
	if s.finalLeases == nil {
		s.finalLeases = map[string]*redisLease{}
	}
	s.finalLeases[taskID] = rl
	rl.handedTo = taskID
}

// dropFinalLease forgets l's hand-over (its Release).
func (s *Redis) dropFinalLease(l *redisLease) {
	s.finalMu.Lock()
	defer s.finalMu.Unlock()
	if l.handedTo != "" && s.finalLeases[l.handedTo] == l {
		delete(s.finalLeases, l.handedTo)
	}
	l.handedTo = ""
}

// finalLease is a lease a write gives up (nil: none).
type finalLease struct{ l *redisLease }

// takeFinalLease takes the lease handed over for t when t's state ends a
// turn.
func (s *Redis) takeFinalLease(t *a2a.Task) finalLease {
	if !t.Status.State.Terminal() && !t.Status.State.Interrupted() {
		return finalLease{}
	}
	s.finalMu.Lock()
	defer s.finalMu.Unlock()
	l := s.finalLeases[t.ID]
	if l == nil {
		return finalLease{}
	}
	delete(s.finalLeases, t.ID)
	l.handedTo = ""
	return finalLease{l: l}
}

// keys appends the lease's key to a write's keys.
func (f finalLease) keys(k []string) []string {
	if f.l == nil {
		return k
	}
	return append(k, f.l.key)
}

// tokenArg is the lease's token argument ("" without a lease).
func (f finalLease) tokenArg() string {
	if f.l == nil {
		return ""
	}
	return f.l.token
}

// done records the write's outcome: a write that ran (a refused one
// included: the script releases first) released the lease.
func (f finalLease) done(err error) {
	if f.l != nil && (err == nil || errors.Is(err, redis.Nil)) {
		f.l.released.Store(true)
	}
}

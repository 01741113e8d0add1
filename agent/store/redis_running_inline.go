package store

import (
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// The running set in the task's write (issue 32). Without Cluster slots
// the script that writes a task also records it in, or removes it from,
// this instance's running set (redis_liveness.go): no round trip of its
// own, and the task is in the set exactly when its record says it runs
// here (a crash between a write and a separate SADD could leave a running
// task unknown to the reapers). In a Cluster the set is in another slot
// and trackRunning sends its own command, as before.

// runOp is the running-set change a write's script makes: op "a" adds
// the task, "r" removes it, "h" keeps it (recorded already), "" leaves
// the set alone (not recorded, not running); key is the set ("" without
// an instance lease).
type runOp struct{ key, op string }

// runOpFor is the change a write of task id in state st makes.
func (s *Redis) runOpFor(id string, st a2a.TaskState) runOp {
	if s.inst == nil {
		return runOp{}
	}
	_, had := s.inst.tracked.Load(id)
	running := st == a2a.TaskStateSubmitted || st == a2a.TaskStateWorking
	r := runOp{key: s.runKeyFor(s.inst.id, id)}
	switch {
	case running && !had:
		r.op = "a"
	case !running && had:
		r.op = "r"
	case had:
		r.op = "h"
	}
	return r
}

// done records what the script did: the write landed, or the task was
// reaped (its script removed it from the set).
func (s *Redis) runOpDone(id string, r runOp, reaped bool) {
	switch {
	case r.key == "":
	case reaped && (r.op == "r" || r.op == "h"):
		s.inst.tracked.Delete(id)
	case reaped:
	case r.op == "a":
		s.inst.tracked.Store(id, struct{}{})
	case r.op == "r":
		s.inst.tracked.Delete(id)
	}
}

// runLua defines trackRun(k, op, id, reaped): runOp's change of running
// set k for task id, after a write that landed or found the task reaped.
const runLua = `
local function trackRun(k, op, id, reaped)
  if k == '' or op == '' then return end
  if reaped then
    if op == 'r' or op == 'h' then redis.call('SREM', k, id) end
  elseif op == 'a' then redis.call('SADD', k, id)
  elseif op == 'r' then redis.call('SREM', k, id) end
end
`

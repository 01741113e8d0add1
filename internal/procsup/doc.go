// Package procsup is the process supervisor of `exec` agents (OPS-7): the
// gateway starts each agent program under a re-exec of its own binary
// that holds the program's process tree and kills all of it when the
// program exits or when the gateway dies, even on kill -9 or the OOM
// killer, which the parent-death signal alone does not cover (it reaches
// the direct child only).
//
// The supervisor leads the process group the gateway signals: the agent
// program and everything it forks stay in that group, so SIGTERM reaches
// all of them (the supervisor itself catches it and stays to clean up). It
// learns of the gateway's death from a lifeline pipe, one per supervisor,
// whose only write end the gateway holds: the kernel closes it when the
// gateway dies, however it dies, and the gateway closes it (Tree.Kill) to
// have the whole tree killed at once, e.g. after a grace period. When the
// program exits, the supervisor kills what it left and exits with the
// program's status (128+N for signal N).
// On Linux it is also a child subreaper (PR_SET_CHILD_SUBREAPER), so
// processes that leave the group (setsid, double fork) are re-parented to
// it instead of init and are killed with the rest.
//
// Platforms: Linux gets all of the above. Other Unix systems (macOS, the
// BSDs) get the supervisor and the process-group kill, but no subreaper,
// so a process that leaves the group survives there. Windows builds run
// the program directly and stop only the program itself (a Job Object
// would be the equivalent; not implemented).
//
// The supervisor runs from this package's init when the environment names
// it (EnvVar), before the host program's main, so every binary that links
// the exec backend (caddy, `xcaddy` builds, test binaries) can serve as
// its own supervisor.
package procsup

// EnvVar, when set in a process's environment, makes this package's init
// run the supervisor instead of the program (its value is the lifeline's
// file descriptor). It is removed from the agent program's environment.
const EnvVar = "CADDY_A2A_EXEC_SUPERVISOR"

// Name is argv[0] of a supervisor process, as ps shows it.
const Name = "caddy-a2a-supervisor"

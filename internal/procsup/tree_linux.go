//go:build linux

package procsup

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER (linux/prctl.h).
const prSetChildSubreaper = 36

// becomeSubreaper makes orphaned descendants re-parent to this process.
func becomeSubreaper() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}

// programAttr keeps the program in the supervisor's group and kills it
// if the supervisor itself dies (the gateway then kills the group).
func programAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// killDescendants SIGKILLs every live process of this process's group and
// every descendant of this process (as a subreaper, escaped grandchildren
// are re-parented here), reaping the zombies, until none is left; it
// gives up after about two seconds of processes forking faster than it
// kills.
func killDescendants() {
	self := os.Getpid()
	pgrp := syscall.Getpgrp()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		victims := treeOf(self, pgrp)
		if len(victims) == 0 {
			return
		}
		for _, pid := range victims {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		reap()
		time.Sleep(time.Millisecond)
	}
}

// reap collects exited children without blocking.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

type procStat struct{ pid, ppid, pgrp int }

// treeOf lists the live (not zombie) processes other than self that are
// in group pgrp or descend from self.
func treeOf(self, pgrp int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	var all []procStat
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		st, ok := readStat(pid)
		if !ok {
			continue
		}
		all = append(all, st)
		children[st.ppid] = append(children[st.ppid], pid)
	}
	seen := map[int]bool{}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
				walk(c)
			}
		}
	}
	walk(self)
	for _, st := range all {
		if st.pgrp == pgrp && !seen[st.pid] {
			seen[st.pid] = true
			out = append(out, st.pid)
		}
	}
	return out
}

// readStat parses /proc/PID/stat; zombies and unreadable entries are
// reported as not ok.
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(s[i+1:])
	// state ppid pgrp ...
	if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pg, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil {
		return procStat{}, false
	}
	return procStat{pid: pid, ppid: ppid, pgrp: pg}, true
}

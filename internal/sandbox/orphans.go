// orphans.go — sandboxes that outlive their trainer. A trainer killed with
// -9 takes its sandboxes with it (Pdeathsig on bwrap, --die-with-parent
// inside) except in one window: when bwrap's launcher dies after creating
// the sandbox's first process but before releasing it from its set-up
// wait, that process sleeps forever (an eventfd nobody will write). It
// uses no CPU, but holds a namespace and the program's files. Every
// sandbox carries its trainer's identity as its hostname; New kills those
// whose trainer is gone. This is the only thing a crashed run can leave:
// nothing of a run is ever written on the host's disks.
package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

const ownerPrefix = "troupe-sandbox-"

// owner names this process as the sandboxes' owner: its pid and start
// time (so that a reused pid is not mistaken for it).
var owner = sync.OnceValue(func() string {
	return fmt.Sprintf("%s%d-%s", ownerPrefix, os.Getpid(), startTime(os.Getpid()))
})

// startTime is a process's start time in clock ticks after boot ("" when
// it does not exist).
func startTime(pid int) string {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// the fields after the command name, which is in parentheses and may
	// hold spaces; the start time is the 22nd field in all
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// ownerAlive says whether a sandbox's hostname names a running trainer.
func ownerAlive(hostname string) bool {
	rest, ok := strings.CutPrefix(hostname, ownerPrefix)
	if !ok {
		return true // not one of troupe's
	}
	pid, start, ok := strings.Cut(rest, "-")
	n, err := strconv.Atoi(pid)
	if !ok || err != nil {
		return true
	}
	return startTime(n) == start
}

// reapOrphans kills the sandboxes (bwrap processes) whose trainer is gone,
// and returns how many.
func reapOrphans() int {
	entries, _ := os.ReadDir("/proc")
	killed := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if filepath.Base(args[0]) != "bwrap" {
			continue
		}
		for i := 0; i+1 < len(args); i++ {
			if args[i] == "--" {
				break
			}
			if args[i] == "--hostname" && !ownerAlive(args[i+1]) {
				if syscall.Kill(pid, syscall.SIGKILL) == nil {
					killed++
				}
				break
			}
		}
	}
	return killed
}

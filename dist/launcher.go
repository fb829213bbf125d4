package dist

// launcher.go — a rank started by `train --nproc` stops when its launcher
// is gone. The launcher names itself in TROUPE_LAUNCHER_PID; the rank
// refuses to start under another parent (the launcher died before the rank
// began), and watches its parent while it runs: on Linux the kernel's
// parent-death signal (SIGHUP, set by the launcher) tells it at once,
// elsewhere a poll of the parent's process id within a second. Either way
// the rank finishes its step, checkpoints and exits, as on Ctrl-C.
//
// SIGHUP rather than SIGTERM: the kernel sends the parent-death signal
// again each time the child is handed to another thread of the dying
// launcher, and a second SIGTERM means "quit now"; repeated SIGHUPs are
// one event here.
//
// What it is not: ranks started by hand or by torchrun (no
// TROUPE_LAUNCHER_PID) are left to their own launcher.

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// LauncherEnv holds the process id of the `train --nproc` launcher of a rank.
const LauncherEnv = "TROUPE_LAUNCHER_PID"

// LauncherDeathSignal is the signal the launcher asks the kernel to send its
// ranks when it dies.
const LauncherDeathSignal = syscall.SIGHUP

// WatchLauncher checks that this process's parent is the launcher named in
// LauncherEnv and returns a channel closed once the launcher is gone, and a
// function that ends the watch. Without LauncherEnv the channel is nil.
func WatchLauncher() (<-chan struct{}, func(), error) {
	v := os.Getenv(LauncherEnv)
	if v == "" {
		return nil, func() {}, nil
	}
	pid, err := strconv.Atoi(v)
	if err != nil || pid <= 0 {
		return nil, nil, fmt.Errorf("data parallel: %s=%q is not a process id; it is set by train --nproc for its ranks, unset it to start a rank by hand", LauncherEnv, v)
	}
	hup := make(chan os.Signal, 4)
	signal.Notify(hup, LauncherDeathSignal)
	if p := os.Getppid(); p != pid {
		signal.Stop(hup)
		return nil, nil, fmt.Errorf("data parallel: this rank's launcher (process %d) is gone (the parent is now process %d); not starting a rank nobody can stop", pid, p)
	}
	gone, done := make(chan struct{}), make(chan struct{})
	var once sync.Once
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-hup:
			case <-tick.C:
				if os.Getppid() == pid {
					continue
				}
			}
			once.Do(func() { close(gone) }) // later SIGHUPs are drained and ignored
		}
	}()
	return gone, func() { signal.Stop(hup); close(done) }, nil
}

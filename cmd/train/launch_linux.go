package main

// launch_linux.go — the ranks' process attributes on Linux: their own
// process group (a terminal's Ctrl-C reaches them once, through the
// launcher) and a parent-death signal (SIGHUP, see dist/launcher.go), so a
// launcher that dies — killed, or its terminal closed — takes its ranks
// with it: each finishes its step, checkpoints and stops.

import (
	"syscall"

	"troupe/dist"
)

func rankProcAttr() *syscall.SysProcAttr {
	// Pdeathsig follows the thread that starts the child: launch runs on the
	// command's goroutine, locked to the main OS thread (main.go), which
	// lives as long as the process.
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: dist.LauncherDeathSignal}
}

//go:build !linux

package main

// launch_other.go — the ranks' process attributes where there is no
// parent-death signal: their own process group only; each rank notices a
// dead launcher by its parent changing (dist/launcher.go).

import "syscall"

func rankProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

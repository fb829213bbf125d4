package main

// strict.go — what every command checks of its surroundings before it
// runs, and how its one-line error is written: the environment variables
// troupe reads (TROUPE_THREADS, and --nproc's bound beside it) are
// validated rather than ignored when malformed, and an error is printed
// with its control characters escaped, so that a key, path or command name
// typed with an escape sequence is shown, never acted on by the terminal.
//
// What it is not: the config's own checks (config/), or the variables of a
// data-parallel launch (RANK, WORLD_SIZE, MASTER_*: run/'s rendezvous).

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxThreadsPerCPU bounds TROUPE_THREADS and --nproc: past a few per CPU,
// threads and ranks only wait for each other.
const maxThreadsPerCPU = 4

// checkEnv validates the environment variables every command reads.
func checkEnv() error {
	limit := maxThreadsPerCPU * runtime.NumCPU()
	if s, set := os.LookupEnv("TROUPE_THREADS"); set {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > limit {
			return fmt.Errorf("TROUPE_THREADS=%s: must be a whole number of threads from 1 to %d (%d per CPU on this machine's %d); unset it for the default, %d", escapeControl(s), limit, maxThreadsPerCPU, runtime.NumCPU(), max(1, runtime.NumCPU()/2))
		}
	}
	return nil
}

// checkNproc bounds --nproc: at least one rank, at most maxThreadsPerCPU
// per CPU (each rank computes on at least one thread).
func checkNproc(n int) error {
	if limit := maxThreadsPerCPU * runtime.NumCPU(); n < 1 || n > limit {
		return fmt.Errorf("--nproc: must be from 1 to %d (%d ranks per CPU on this machine's %d; one per GPU on a GPU machine), got %d", limit, maxThreadsPerCPU, runtime.NumCPU(), n)
	}
	return nil
}

// escapeControl writes s with every control character but the newline
// (and every invalid UTF-8 byte) escaped as Go does (\x1b, \r, \t).
func escapeControl(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r != '\n' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

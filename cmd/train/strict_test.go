package main

import (
	"bytes"
	"strings"
	"testing"
)

// Malformed TROUPE_THREADS is refused with one line (before, it was
// ignored for the default), and an error never carries a raw control
// character to the terminal: a command name, --set key or value typed with
// an escape sequence is shown escaped.
func TestStrictEnvAndEscapedErrors(t *testing.T) {
	for _, v := range []string{"abc", "0", "-2", "1.5", "100000", ""} {
		t.Run("TROUPE_THREADS="+v, func(t *testing.T) {
			t.Setenv("TROUPE_THREADS", v)
			msg := failing(t, "version")
			if !strings.Contains(msg, "TROUPE_THREADS="+v+": must be a whole number of threads from 1 to") {
				t.Errorf("TROUPE_THREADS=%q: %q", v, msg)
			}
		})
	}
	t.Setenv("TROUPE_THREADS", "1")
	for _, args := range [][]string{
		{"frob\x1b[2Jnicate"},
		{"check", "-c", "/nonexistent\x1b]0;title\x07.yaml"},
		{"--resume", "run\rs\x1b[8m"},
	} {
		var out, errb bytes.Buffer
		if code := execute(args, &out, &errb); code != 1 {
			t.Fatalf("%q: exit %d", args, code)
		}
		msg := errb.String()
		if strings.ContainsAny(strings.TrimSuffix(msg, "\n"), "\x1b\x07\r\n") || !strings.Contains(msg, `\x1b`) {
			t.Errorf("%q: the error carries raw control characters or lost them: %q", args, msg)
		}
	}
}

// Package cmdline writes the command lines troupe's messages tell the user
// to run next — the resume after Ctrl-C, the run that continues an output
// directory, the model to make first — so that each can be copied and run
// as printed: the program as it was invoked (bin/train, ./train, train),
// and every argument quoted the way a POSIX shell reads it back.
//
// What it is not: a parser; nothing here reads a command line.
package cmdline

import "strings"

// Program is how the program was invoked (main sets it from os.Args[0]);
// "train" when it was not set, as in tests.
var Program = "train"

// Train is the command line `Program args...`, quoted for a shell.
func Train(args ...string) string {
	words := make([]string, 0, len(args)+1)
	words = append(words, Quote(Program))
	for _, a := range args {
		words = append(words, Quote(a))
	}
	return strings.Join(words, " ")
}

// Resume is the command that continues the run in dir from its newest
// checkpoint with the config it saved.
func Resume(dir string) string { return Train("--resume=" + dir) }

// Quote returns s as one shell word: unchanged when it holds only
// characters a shell leaves alone, else in single quotes.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

package main

// docs_commands_test.go — every `bin/train …` command line written in the
// README and docs/usage.md names a real subcommand and only flags that
// subcommand has. It parses each line with the real command tree (cobra's Find
// and ParseFlags) without running it: the README's quick start names a 4B
// model and datasets this machine does not have. What the commands do is
// tested elsewhere; this test catches the docs drifting from the CLI (a
// renamed flag, a removed subcommand).

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docCommands returns the `bin/train` command lines inside fenced code
// blocks of a Markdown file, with backslash continuations joined and
// trailing `# comments` removed, keyed by "file:line".
func docCommands(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	inCode, n, pending, where := false, 0, "", ""
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inCode = !inCode
			continue
		}
		if !inCode {
			continue
		}
		if pending == "" {
			trimmed := strings.TrimSpace(line)
			if !strings.HasPrefix(trimmed, "bin/train") {
				continue
			}
			where = filepath.Base(path) + ":" + itoa(n)
			line = trimmed
		}
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if strings.HasSuffix(line, `\`) {
			pending += strings.TrimSuffix(line, `\`) + " "
			continue
		}
		out[where] = pending + line
		pending = ""
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func itoa(n int) string {
	s := ""
	for {
		s = string(rune('0'+n%10)) + s
		n /= 10
		if n == 0 {
			return s
		}
	}
}

// shellWords splits a command line as a POSIX shell would for the simple
// lines the docs hold: words separated by blanks, single quotes grouping.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted = !quoted
			inWord = true
		case (r == ' ' || r == '\t') && !quoted:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

func TestDocumentedCommandsParse(t *testing.T) {
	total := 0
	for _, doc := range []string{"../../README.md", "../../docs/usage.md"} {
		cmds := docCommands(t, doc)
		if len(cmds) == 0 {
			t.Fatalf("%s: no bin/train command lines found (the test reads fenced code blocks)", doc)
		}
		for where, line := range cmds {
			total++
			args := shellWords(line)[1:] // drop bin/train
			root := newRoot()
			cmd, rest, err := root.Find(args)
			if err != nil {
				t.Errorf("%s: %q: %v", where, line, err)
				continue
			}
			// Find stops at the first word that is not a subcommand; a word
			// that looks like one but is not (a typo) would be taken as a
			// positional argument of the root, which accepts none.
			if cmd == root && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
				t.Errorf("%s: %q: %q is not a subcommand of train", where, line, rest[0])
				continue
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Errorf("%s: %q: %v", where, line, err)
				continue
			}
			if cmd.Args != nil {
				if err := cmd.Args(cmd, cmd.Flags().Args()); err != nil {
					t.Errorf("%s: %q: arguments: %v", where, line, err)
				}
			}
		}
	}
	t.Logf("%d documented command lines parse", total)
}

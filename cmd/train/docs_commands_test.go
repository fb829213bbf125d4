package main

// docs_commands_test.go — every `bin/train …` command line written in the
// README and the pages of docs/ names a real subcommand and only flags that
// subcommand has. It parses each line with the real command tree (cobra's Find
// and ParseFlags) without running it: the README's quick start names a 4B
// model and datasets this machine does not have. docs_run_test.go runs the
// ones that can run here; this test catches the docs drifting from the CLI
// (a renamed flag, a removed subcommand) everywhere.

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docLine is one `bin/train` command line of a Markdown file.
type docLine struct {
	where string // file:line
	line  string
}

// docCommands returns the `bin/train` command lines inside fenced code
// blocks of a Markdown file, in order, with backslash continuations joined
// and trailing `# comments` removed.
func docCommands(t *testing.T, path string) []docLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []docLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
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
		out = append(out, docLine{where, strings.TrimSuffix(pending+line, " &")}) // `… &`: the shell's, not train's
		pending = ""
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// docPages are the pages whose commands are checked: the README and the
// pages of docs/ (the experiment reports below docs/ record the command
// lines of their runs, with placeholders, and are not).
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"../../README.md"}, pages...)
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
// lines the docs hold: words separated by blanks, single or double quotes
// grouping (no escapes or expansions inside them).
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune // the open quote, 0 outside quotes
	for _, r := range s {
		switch {
		case quote == 0 && (r == '\'' || r == '"'):
			quote = r
			inWord = true
		case quote != 0 && r == quote:
			quote = 0
		case (r == ' ' || r == '\t') && quote == 0:
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
	for _, doc := range docPages(t) {
		cmds := docCommands(t, doc)
		if len(cmds) == 0 && (strings.HasSuffix(doc, "README.md") || strings.HasSuffix(doc, "usage.md")) {
			t.Fatalf("%s: no bin/train command lines found (the test reads fenced code blocks)", doc)
		}
		for _, c := range cmds {
			where, line := c.where, c.line
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

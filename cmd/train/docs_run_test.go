package main

// docs_run_test.go — the documented commands run as written, in order,
// right after `make demo`. The demo's files are made here by the Makefile's
// own demo recipe (its bin/train lines, read from the Makefile) in a
// scratch directory holding a copy of configs/ and of the shipped warm-up
// (demo/); then, for every page of the README and docs/, on a fresh copy of
// that directory, each of the page's `bin/train` lines runs in order and
// must succeed. One thing differs from a real demo, to keep the test short:
// the demo config's generations are 4 tokens, its steps 1 prompt and its
// evaluations 2 tasks; paths, step numbers and run lengths are the demo's,
// so a line that writes into the demo's finished run, resumes a checkpoint
// the demo pruned or exports over its export fails here as it would for a
// reader.
//
// A line that cannot run here is skipped, with its reason, when it names a
// real-size config or a model or dataset path this machine lacks, holds a
// placeholder (DIR, N, …), serves until stopped, downloads datasets
// (`train data NAME`), or is a benchmark;
// docs_commands_test.go still parses it.

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// demoConfig is the config `make demo` runs.
const demoConfig = "drmas-math-demo-tiny.yaml"

// cheapDemo are the edits that make configs/<demoConfig> quick: each must
// apply (the test says so when the config changes).
var cheapDemo = [][2]string{
	{"\nmax_new_tokens: 48\n", "\nmax_new_tokens: 4\n"},
	{"tasks: 200,", "tasks: 2,"},
	{"prompts_per_step: 8,", "prompts_per_step: 1,"},
}

// configsDir is the repository's configs/, absolute (the test changes
// directory); set by the test before it is read.
var configsDir string

// skipReason says why a documented line cannot run on this machine, or "".
func skipReason(words []string) string {
	line := strings.Join(words, " ")
	switch {
	case len(words) > 1 && words[1] == "serve":
		return "it serves until stopped"
	case len(words) > 1 && words[1] == "bench":
		return "a benchmark: minutes of timing"
	case len(words) > 2 && words[1] == "data" && words[2] != "list":
		return "it downloads from the Hugging Face Hub"
	case regexp.MustCompile(`configs/[^ ]*\.yaml`).MatchString(line) && !regexp.MustCompile(`configs/[^ ]*-tiny\.yaml`).MatchString(line):
		return "a real-size config: it needs the model's files"
	case strings.Contains(line, "/models/") || strings.Contains(line, "path/to") || regexp.MustCompile(`(^| |=)data/`).MatchString(line):
		return "it names a model or dataset this machine does not have"
	}
	for _, m := range regexp.MustCompile(`runs/([A-Za-z0-9._-]+)`).FindAllStringSubmatch(line, -1) {
		if _, err := os.Stat(filepath.Join(configsDir, m[1]+".yaml")); err == nil && !strings.HasSuffix(m[1], "-tiny") {
			return "it continues the run of a real-size config (" + m[0] + ")"
		}
	}
	for _, w := range words[1:] {
		if regexp.MustCompile(`^[A-Z][A-Z_]*$|(^|[=/])[A-Z][A-Z_]+($|[/.\]])`).MatchString(w) || strings.Contains(w, "…") || w == "run.yaml" {
			return "a template with placeholders (" + w + ")"
		}
	}
	return ""
}

// makeDemo runs the Makefile demo recipe's bin/train lines in dir, which
// holds a cheap copy of configs/ and the shipped warm-up.
func makeDemo(t *testing.T, dir string) {
	t.Helper()
	for _, d := range []string{"configs", "demo"} {
		if err := os.CopyFS(filepath.Join(dir, d), os.DirFS(filepath.Join("../..", d))); err != nil {
			t.Fatal(err)
		}
	}
	demoCfg := filepath.Join(dir, "configs", demoConfig)
	yaml := readFileString(t, demoCfg)
	for _, e := range cheapDemo {
		if !strings.Contains(yaml, e[0]) {
			t.Fatalf("configs/%s no longer holds %q: update cheapDemo in docs_run_test.go", demoConfig, e[0])
		}
		yaml = strings.Replace(yaml, e[0], e[1], 1)
	}
	writeTestFile(t, demoCfg, []byte(yaml))

	var recipe []string
	in := false
	for _, l := range strings.Split(readFileString(t, "../../Makefile"), "\n") {
		switch {
		case strings.HasPrefix(l, "demo:"):
			in = true
		case in && !strings.HasPrefix(l, "\t"):
			in = false
		case in && strings.HasPrefix(strings.TrimSpace(l), "bin/train "):
			// make's default seed, as a plain `make demo` runs it
			recipe = append(recipe, strings.ReplaceAll(strings.TrimSpace(l), "$(SEED)", "1"))
		}
	}
	if len(recipe) != 1 || !strings.Contains(recipe[0], "configs/"+demoConfig) {
		t.Fatalf("the Makefile's demo recipe has %d bin/train lines, want one, the run of configs/%s: %q", len(recipe), demoConfig, recipe)
	}
	t.Chdir(dir)
	for _, l := range recipe {
		args := shellWords(l)[1:]
		var out, errb bytes.Buffer
		if code := execute(args, &out, &errb); code != 0 {
			t.Fatalf("make demo: %s: exit %d\n%s", l, code, tail(errb.String()+out.String(), 2000))
		}
	}
}

func TestDocumentedCommandsRunAfterDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the documented commands (a minute)")
	}
	pages := docPages(t)
	for i, p := range pages {
		abs, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		pages[i] = abs
	}
	var err error
	if configsDir, err = filepath.Abs("../../configs"); err != nil {
		t.Fatal(err)
	}
	demo := t.TempDir()
	makeDemo(t, demo)
	ran, skipped := 0, 0
	for _, page := range pages {
		cmds := docCommands(t, page)
		var runnable []docLine
		for _, c := range cmds {
			if why := skipReason(shellWords(c.line)); why != "" {
				skipped++
				t.Logf("%s: not run: %s", c.where, why)
				continue
			}
			runnable = append(runnable, c)
		}
		if len(runnable) == 0 {
			continue
		}
		// each page starts from what make demo left
		dir := t.TempDir()
		if err := os.CopyFS(dir, os.DirFS(demo)); err != nil {
			t.Fatal(err)
		}
		t.Chdir(dir)
		for _, c := range runnable {
			var out, errb bytes.Buffer
			began := time.Now()
			code := execute(shellWords(c.line)[1:], &out, &errb)
			if code != 0 {
				t.Errorf("%s: %s\nexit %d: %s", c.where, c.line, code, strings.TrimSpace(tail(errb.String(), 1500)))
				continue
			}
			ran++
			if testing.Verbose() {
				t.Logf("%s: ran (%.1f s)", c.where, time.Since(began).Seconds())
			}
		}
	}
	t.Logf("%d documented command lines ran after the demo, %d skipped", ran, skipped)
	if ran < 15 {
		t.Errorf("only %d documented lines ran", ran)
	}
}

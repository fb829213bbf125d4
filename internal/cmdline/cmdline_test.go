package cmdline

import (
	"os/exec"
	"strings"
	"testing"
)

// The printed line, read back by a real shell, gives the same words.
func TestQuoteRoundTrip(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	words := []string{"--resume=runs/x", "runs/my run", "it's", "", "a$b", "agents[1].optim.lr=2e-4", "*", "~/x", "tab\there"}
	line := Train(words...)
	// the line starts with the program; the shell prints each later word
	script := `f() { for w in "$@"; do printf '[%s]\n' "$w"; done; }; f ` + strings.TrimPrefix(line, Program+" ")
	got, err := exec.Command(sh, "-c", script).Output()
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, w := range words {
		want.WriteString("[" + w + "]\n")
	}
	if string(got) != want.String() {
		t.Fatalf("%s\nthe shell read back:\n%s\nwant:\n%s", line, got, want.String())
	}
}

func TestResume(t *testing.T) {
	old := Program
	defer func() { Program = old }()
	Program = "bin/train"
	if got := Resume("runs/x"); got != "bin/train --resume=runs/x" {
		t.Fatal(got)
	}
	if got := Resume("runs/my run"); got != "bin/train '--resume=runs/my run'" {
		t.Fatal(got)
	}
}

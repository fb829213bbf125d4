package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An output is refused when it is an input, lies inside one or holds one,
// through symbolic links and paths that do not exist yet; a sibling is
// not.
func TestRefuseInputAsOutput(t *testing.T) {
	d := t.TempDir()
	in := filepath.Join(d, "run", "checkpoints", "step-000002")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(d, "link")
	if err := os.Symlink(filepath.Join(d, "run"), link); err != nil {
		t.Fatal(err)
	}
	for out, want := range map[string]string{
		in: "is the command's own input",
		filepath.Join(link, "checkpoints", "step-000002"):             "is the command's own input",
		filepath.Join(link, "checkpoints", "step-000002", "new", "x"): "lies inside",
		filepath.Join(d, "run"):                                       "holds",
		filepath.Join(d, "run", "export"):                             "",
		filepath.Join(d, "runs"):                                      "",
	} {
		err := RefuseInputAsOutput("export", out, "--out", "", in)
		switch {
		case err == nil && want != "":
			t.Errorf("%s: accepted, want %q", out, want)
		case err != nil && (want == "" || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want %q", out, err, want)
		}
	}
}

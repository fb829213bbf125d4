package doccheck

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// indexLine matches a file-index entry of a package comment: Go file names
// (one, or several joined by commas) at the start of the line, after an
// optional "- " bullet, followed by white space or a colon, e.g.
// "\tsampler.go   the batched sampler", "  - weights.go: SaveWeights" or
// "\twriter.go, trainmerges.go  tiny tokenizers".
var indexLine = regexp.MustCompile(`^\s*(?:-\s+)?([A-Za-z0-9_]+\.go(?:,\s*[A-Za-z0-9_]+\.go)*)(?:\s|:|$)`)

// moduleRoot is the directory holding go.mod above the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

// listed is the file index of a doc.go: the file names its package comment
// names at the start of a line.
func listed(t *testing.T, path string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil {
		return nil
	}
	var names []string
	for _, line := range strings.Split(f.Doc.Text(), "\n") {
		m := indexLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, n := range strings.Split(m[1], ",") {
			if n = strings.TrimSpace(n); !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	return names
}

// sources are the non-test Go files of a directory.
func sources(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if !e.IsDir() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			names = append(names, n)
		}
	}
	return names
}

// Every doc.go lists exactly its package's files: none missing, none that
// no longer exists.
func TestDocFileIndexes(t *testing.T) {
	root := moduleRoot(t)
	checked := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "build" || n == "bin" || n == "node_modules" || n == "runs") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() != "doc.go" {
			return nil
		}
		dir := filepath.Dir(path)
		rel, _ := filepath.Rel(root, dir)
		index := listed(t, path)
		if len(index) == 0 {
			t.Errorf("%s/doc.go has no file index: list every file of the package, one a line (\"//\tname.go  what it holds\")", rel)
			return nil
		}
		checked++
		files := sources(t, dir)
		for _, f := range files {
			if f != "doc.go" && !slices.Contains(index, f) {
				t.Errorf("%s/doc.go does not list %s: add a line for it to the file index", rel, f)
			}
		}
		for _, f := range index {
			if !slices.Contains(files, f) {
				t.Errorf("%s/doc.go lists %s, which is not a file of the package (a test file, or gone): remove or rename the line", rel, f)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no doc.go with a file index found: the walk is broken")
	}
}

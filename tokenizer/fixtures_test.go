// Test fixtures: the repository root, the committed reference data in
// testdata/tokenizer/ and the real Qwen and Llama 3 tokenizer files that
// scripts/tokenizer/fetch-fixtures.sh puts in .cache/tokenizer/.

package tokenizer

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// repoRoot walks up from the package directory to the folder holding go.mod.
func repoRoot(t testing.TB) string {
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

func testdataPath(t testing.TB, name string) string {
	return filepath.Join(repoRoot(t), "testdata", "tokenizer", name)
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

var (
	loadedMu sync.Mutex
	loaded   = map[string]*Tokenizer{}
)

// fixtureTokenizer loads .cache/tokenizer/<name> (qwen3, qwen2_5, llama3) once per
// test binary. A missing fixture fails the test with the command that
// fetches it, unless TROUPE_OFFLINE=1, which skips instead.
func fixtureTokenizer(t testing.TB, name string) *Tokenizer {
	t.Helper()
	loadedMu.Lock()
	defer loadedMu.Unlock()
	if tok, ok := loaded[name]; ok {
		return tok
	}
	dir := filepath.Join(repoRoot(t), ".cache", "tokenizer", name)
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err != nil {
		msg := "missing fixture " + filepath.Join(dir, "tokenizer.json") + ": run scripts/tokenizer/fetch-fixtures.sh (make test does it during setup)"
		if os.Getenv("TROUPE_OFFLINE") == "1" {
			t.Skip("TROUPE_OFFLINE=1: " + msg)
		}
		t.Fatal(msg)
	}
	tok, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	loaded[name] = tok
	return tok
}

type corpusDoc struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

func testCorpus(t testing.TB) []corpusDoc {
	var c struct {
		Docs []corpusDoc `json:"docs"`
	}
	readJSON(t, testdataPath(t, "corpus.json"), &c)
	if len(c.Docs) < 500 {
		t.Fatalf("corpus.json has %d documents, want the full corpus (>= 500)", len(c.Docs))
	}
	return c.Docs
}

type modcacheFile struct {
	Path      string `json:"path"`
	Bytes     int    `json:"bytes"`
	SHA256    string `json:"sha256"`
	Tokens    int    `json:"tokens"`
	IDsSHA256 string `json:"ids_sha256"`
}

// modcacheFiles returns the golang.org/x/text files listed in
// modcache_reference.json with their content. The module is a dependency of
// this package, so the Go module cache holds it whenever the package builds.
func modcacheFiles(t testing.TB) ([]modcacheFile, [][]byte) {
	var ref struct {
		Module string         `json:"module"`
		Files  []modcacheFile `json:"files"`
	}
	readJSON(t, testdataPath(t, "modcache_reference.json"), &ref)
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), ref.Module)
	contents := make([][]byte, len(ref.Files))
	for i, f := range ref.Files {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatalf("%v (the module %s is a dependency of troupe/tokenizer; run go mod download)", err, ref.Module)
		}
		contents[i] = data
	}
	return ref.Files, contents
}

package datasets_test

// fakehub_test.go — a stand-in for the Hugging Face Hub over HTTP, serving
// the fixtures under testdata/datasets/OWNER/NAME as dataset repositories:
// the API's revision JSON (commit, siblings with sizes, LFS sha256 for
// Parquet and gzip files, git blob ids for the rest, a README.md and a
// .gitattributes beside the data), and the files at
// /datasets/REPO/resolve/COMMIT/PATH, LFS files through a redirect as the
// Hub sends them to its CDN.

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const fixtures = "../testdata/datasets"

type fakeHub struct {
	*httptest.Server
	root  string
	token string // when set, every request must carry it

	mu       sync.Mutex
	requests []string          // paths asked for, in order
	wrong    map[string]string // "REPO/PATH" → the checksum published instead of the true one
}

func newFakeHub(t *testing.T) *fakeHub {
	h := &fakeHub{root: fixtures, wrong: map[string]string{}}
	h.Server = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.Close)
	return h
}

// commitOf is a repository's (made-up) commit.
func commitOf(repo string) string {
	s := sha1.Sum([]byte("commit of " + repo))
	return hex.EncodeToString(s[:])
}

func (h *fakeHub) asked() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.requests...)
}

// repoFiles are a repository's files: the fixtures and a dataset card.
func (h *fakeHub) repoFiles(repo string) (map[string][]byte, error) {
	dir := filepath.Join(h.root, filepath.FromSlash(repo))
	files := map[string][]byte{
		"README.md":      []byte("---\nlicense: test\n---\n# " + repo + "\n"),
		".gitattributes": []byte("*.parquet filter=lfs diff=lfs merge=lfs -text\n"),
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	return files, err
}

func lfs(path string) bool {
	return strings.HasSuffix(path, ".parquet") || strings.HasSuffix(path, ".gz")
}

func (h *fakeHub) serve(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.requests = append(h.requests, r.URL.Path)
	h.mu.Unlock()
	if h.token != "" && r.Header.Get("Authorization") != "Bearer "+h.token {
		http.Error(w, `{"error":"Invalid credentials"}`, http.StatusUnauthorized)
		return
	}
	if rest, ok := strings.CutPrefix(r.URL.Path, "/api/datasets/"); ok {
		h.revision(w, r, rest)
		return
	}
	if rest, ok := strings.CutPrefix(r.URL.Path, "/cdn/"); ok {
		h.file(w, rest, false)
		return
	}
	if rest, ok := strings.CutPrefix(r.URL.Path, "/datasets/"); ok {
		h.file(w, rest, true)
		return
	}
	http.NotFound(w, r)
}

// revision answers /api/datasets/OWNER/NAME/revision/REV?blobs=True (as
// huggingface_hub asks it).
func (h *fakeHub) revision(w http.ResponseWriter, r *http.Request, rest string) {
	parts := strings.SplitN(rest, "/", 4)
	if len(parts) != 4 || parts[2] != "revision" || r.URL.Query().Get("blobs") != "True" {
		http.NotFound(w, r)
		return
	}
	repo, rev := parts[0]+"/"+parts[1], parts[3]
	files, err := h.repoFiles(repo)
	if err != nil || len(files) == 2 || (rev != "main" && rev != commitOf(repo)) {
		http.Error(w, `{"error":"Repository not found"}`, http.StatusNotFound)
		return
	}
	type lfsInfo struct {
		SHA256      string `json:"sha256"`
		Size        int    `json:"size"`
		PointerSize int    `json:"pointerSize"`
	}
	type sibling struct {
		RFilename string   `json:"rfilename"`
		Size      int      `json:"size"`
		BlobID    string   `json:"blobId"`
		LFS       *lfsInfo `json:"lfs,omitempty"`
	}
	var sibs []sibling
	for p, b := range files {
		key := repo + "/" + p
		s := sibling{RFilename: p, Size: len(b)}
		if lfs(p) {
			sum := sha256.Sum256(b)
			s.LFS = &lfsInfo{SHA256: hex.EncodeToString(sum[:]), Size: len(b), PointerSize: 134}
			if wrong, ok := h.wrong[key]; ok {
				s.LFS.SHA256 = wrong
			}
			s.BlobID = strings.Repeat("ab", 20) // the pointer's blob: not the content's
		} else {
			blob := sha1.New()
			fmt.Fprintf(blob, "blob %d\x00", len(b))
			blob.Write(b)
			s.BlobID = hex.EncodeToString(blob.Sum(nil))
			if wrong, ok := h.wrong[key]; ok {
				s.BlobID = wrong
			}
		}
		sibs = append(sibs, s)
	}
	json.NewEncoder(w).Encode(map[string]any{"id": repo, "sha": commitOf(repo), "siblings": sibs})
}

// file serves REPO/resolve/COMMIT/PATH, or (from the CDN) REPO/PATH.
func (h *fakeHub) file(w http.ResponseWriter, rest string, resolve bool) {
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) != 3 {
		http.NotFound(w, nil)
		return
	}
	repo, path := parts[0]+"/"+parts[1], parts[2]
	if resolve {
		p := strings.SplitN(path, "/", 3)
		if len(p) != 3 || p[0] != "resolve" || p[1] != commitOf(repo) {
			http.Error(w, "Entry not found", http.StatusNotFound)
			return
		}
		path = p[2]
		if lfs(path) {
			w.Header().Set("Location", "/cdn/"+repo+"/"+path)
			w.WriteHeader(http.StatusFound)
			return
		}
	}
	files, err := h.repoFiles(repo)
	b, ok := files[path]
	if err != nil || !ok {
		http.Error(w, "Entry not found", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	w.Write(b)
}

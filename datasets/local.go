package datasets

// local.go — dataset repositories downloaded by hand (`train data NAME
// --from DIR`): DIR/OWNER/NAME holds a repository's files as the Hub
// serves them, e.g. after `git clone https://huggingface.co/datasets/OWNER/NAME`
// with Git LFS installed. For a machine that cannot reach the Hub.
//
// What it is not: checked. Nothing publishes checksums beside a local
// copy; the manifest records each file's sha256 as read, and a Git LFS
// pointer file (a clone without LFS) is refused by name.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type localDir struct {
	root     string
	progress *progress
}

func (l *localDir) snapshot(_ context.Context, repo, revision string) (*snapshot, error) {
	dir := filepath.Join(l.root, filepath.FromSlash(repo))
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return nil, fmt.Errorf("dataset %s: no directory %s; put the repository's files there (git clone https://huggingface.co/datasets/%s %s, with Git LFS installed)", repo, dir, repo, dir)
	}
	s := &snapshot{Repo: repo, Revision: revision, Where: dir}
	if head, err := os.ReadFile(filepath.Join(dir, ".git", "HEAD")); err == nil {
		s.Commit = gitHead(dir, strings.TrimSpace(string(head)))
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			s.Files = append(s.Files, repoFile{Path: filepath.ToSlash(rel), Size: info.Size()})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %v", repo, err)
	}
	sort.Slice(s.Files, func(i, j int) bool { return s.Files[i].Path < s.Files[j].Path })
	return s, nil
}

// gitHead resolves a clone's HEAD ("ref: refs/heads/main" or a commit) to
// a commit where the ref is a plain file; "" when it cannot.
func gitHead(dir, head string) string {
	ref, ok := strings.CutPrefix(head, "ref: ")
	if !ok {
		return head
	}
	b, err := os.ReadFile(filepath.Join(dir, ".git", filepath.FromSlash(ref)))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// lfsPointer starts a Git LFS pointer file.
const lfsPointer = "version https://git-lfs.github.com/spec/v1"

func (l *localDir) open(_ context.Context, s *snapshot, f repoFile) (*checkedReader, error) {
	p := filepath.Join(s.Where, filepath.FromSlash(f.Path))
	file, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %v", s.Repo, err)
	}
	if f.Size < 1024 {
		head := make([]byte, len(lfsPointer))
		n, _ := io.ReadFull(file, head)
		if bytes.Equal(head[:n], []byte(lfsPointer)) {
			file.Close()
			return nil, fmt.Errorf("%s is a Git LFS pointer, not the file: install Git LFS and run git lfs pull in %s", p, s.Where)
		}
		if _, err := file.Seek(0, io.SeekStart); err != nil {
			file.Close()
			return nil, err
		}
	}
	want := repoFile{Path: f.Path, Size: f.Size}
	r := newCheckedReader(file, s.Repo+"/"+f.Path, want, l.progress)
	r.unchecked = "none (a local copy)"
	return r, nil
}

func (l *localDir) unreachable(error) bool { return false }

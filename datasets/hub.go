package datasets

// hub.go — dataset repositories on the Hugging Face Hub: the revision's
// commit and file list from the Hub's API, and each file's download,
// checked against the checksum the API publishes for it (an LFS file's
// sha256, else the git blob id of a file stored in git).
//
// The API: GET {endpoint}/api/datasets/{repo}/revision/{revision}?blobs=True
// answers {"sha": commit, "siblings": [{"rfilename", "size", "blobId",
// "lfs": {"sha256", "size"}}]}; a file is
// {endpoint}/datasets/{repo}/resolve/{commit}/{path}. HF_ENDPOINT and
// HF_TOKEN are honoured as Hugging Face's own clients honour them.
//
// What it is not: a cache. Each run downloads what it converts and keeps
// only the converted files.

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultEndpoint is the Hub's address when HF_ENDPOINT is not set.
const DefaultEndpoint = "https://huggingface.co"

// repoFile is one file of a snapshot, with what the source publishes to
// check it by.
type repoFile struct {
	Path   string
	Size   int64  // -1: not published
	SHA256 string // an LFS file's content sha256, "" when not LFS
	BlobID string // git's blob sha1 of a file stored in git ("" for LFS files)
}

// snapshot is one dataset repository at one commit.
type snapshot struct {
	Repo     string
	Revision string // as asked: main, a branch, a tag or a commit
	Commit   string // as resolved ("" from a local directory without one)
	Where    string // the URL or directory it came from
	Files    []repoFile
}

// source is where repositories come from: the Hub, or a local directory.
type source interface {
	snapshot(ctx context.Context, repo, revision string) (*snapshot, error)
	// open returns the file's content; reading it to the end checks it
	// against its published checksum (a mismatch is an error in place of
	// io.EOF).
	open(ctx context.Context, s *snapshot, f repoFile) (*checkedReader, error)
	// unreachable reports whether err means the source cannot be reached
	// at all (no network, no such host), as opposed to a refusal.
	unreachable(err error) bool
}

// hub is the Hugging Face Hub over HTTPS.
type hub struct {
	endpoint string
	token    string
	client   *http.Client
	progress *progress
}

func newHub(endpoint, token string, client *http.Client, p *progress) *hub {
	if client == nil {
		client = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   30 * time.Second,
			ResponseHeaderTimeout: 2 * time.Minute,
		}}
	}
	return &hub{endpoint: strings.TrimRight(endpoint, "/"), token: token, client: client, progress: p}
}

func (h *hub) get(ctx context.Context, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if h.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	req.Header.Set("User-Agent", "troupe-data")
	return h.client.Do(req)
}

// refusal turns a non-200 answer into an error naming the fix.
func (h *hub) refusal(resp *http.Response, what, repo, revision string) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	msg := strings.Join(strings.Fields(string(body)), " ")
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		fix := "set HF_TOKEN to a Hugging Face token"
		if h.token != "" {
			fix = "check HF_TOKEN, and accept the dataset's terms on its page if it is gated"
		}
		return fmt.Errorf("%s %s: the Hub refused (%s) for %s; %s (%s/datasets/%s)", what, repo, resp.Status, msg, fix, h.endpoint, repo)
	case http.StatusNotFound:
		return fmt.Errorf("%s %s: not found at revision %q (%s); check the repository and --revision", what, repo, revision, msg)
	}
	return fmt.Errorf("%s %s at revision %q: %s (%s)", what, repo, revision, resp.Status, msg)
}

func (h *hub) snapshot(ctx context.Context, repo, revision string) (*snapshot, error) {
	u := fmt.Sprintf("%s/api/datasets/%s/revision/%s?blobs=True", h.endpoint, repo, url.PathEscape(revision))
	resp, err := h.get(ctx, u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, h.refusal(resp, "dataset", repo, revision)
	}
	var info struct {
		SHA      string `json:"sha"`
		Siblings []struct {
			RFilename string `json:"rfilename"`
			Size      *int64 `json:"size"`
			BlobID    string `json:"blobId"`
			LFS       *struct {
				SHA256 string `json:"sha256"`
				Size   int64  `json:"size"`
			} `json:"lfs"`
		} `json:"siblings"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&info); err != nil {
		return nil, fmt.Errorf("dataset %s: the Hub's answer at %s is not the API's JSON: %v", repo, u, err)
	}
	if info.SHA == "" {
		return nil, fmt.Errorf("dataset %s: the Hub's answer at %s names no commit (sha)", repo, u)
	}
	s := &snapshot{Repo: repo, Revision: revision, Commit: info.SHA, Where: h.endpoint + "/datasets/" + repo}
	for _, sib := range info.Siblings {
		f := repoFile{Path: sib.RFilename, Size: -1}
		if sib.Size != nil {
			f.Size = *sib.Size
		}
		if sib.LFS != nil {
			f.SHA256, f.Size = strings.ToLower(sib.LFS.SHA256), sib.LFS.Size
		} else {
			f.BlobID = strings.ToLower(sib.BlobID)
		}
		s.Files = append(s.Files, f)
	}
	return s, nil
}

func (h *hub) open(ctx context.Context, s *snapshot, f repoFile) (*checkedReader, error) {
	segs := strings.Split(f.Path, "/")
	for i := range segs {
		segs[i] = url.PathEscape(segs[i])
	}
	u := fmt.Sprintf("%s/datasets/%s/resolve/%s/%s", h.endpoint, s.Repo, url.PathEscape(s.Commit), strings.Join(segs, "/"))
	ctx, cancel := context.WithCancelCause(ctx)
	timer := time.AfterFunc(stallTimeout, func() { cancel(errStalled) })
	resp, err := h.get(ctx, u)
	if err != nil {
		timer.Stop()
		cancel(nil)
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		timer.Stop()
		cancel(nil)
		return nil, h.refusal(resp, "file "+f.Path+" of dataset", s.Repo, s.Revision)
	}
	body := &stallGuard{body: resp.Body, timer: timer, cancel: cancel}
	return newCheckedReader(body, s.Repo+"/"+f.Path, f, h.progress), nil
}

// unreachable: the request itself failed (no route, no such host, refused,
// TLS), not a download cut short or a refusal.
func (h *hub) unreachable(err error) bool {
	var ue *url.Error
	return errors.As(err, &ue) && !errors.Is(err, context.Canceled) && !errors.Is(err, errStalled)
}

// stallTimeout is how long a download may go without a byte before it is
// abandoned (a variable for the tests).
var stallTimeout = 2 * time.Minute

var errStalled = errors.New("the download stalled (no data for 2 minutes); run the command again")

// stallGuard cancels a request, with errStalled as the cause its reads
// return, when its body goes stallTimeout without a byte.
type stallGuard struct {
	body   io.ReadCloser
	timer  *time.Timer
	cancel context.CancelCauseFunc
}

func (g *stallGuard) Read(b []byte) (int, error) {
	n, err := g.body.Read(b)
	g.timer.Reset(stallTimeout)
	return n, err
}

func (g *stallGuard) Close() error {
	g.timer.Stop()
	g.cancel(nil)
	return g.body.Close()
}

// checkedReader reads a file while hashing it; at the end it compares the
// size and the published checksum, and returns an error instead of io.EOF
// on a mismatch. SHA256 is the content's sha256 either way (the manifest's).
type checkedReader struct {
	body      io.ReadCloser
	name      string
	want      repoFile
	sha256    hash.Hash
	blob      hash.Hash // git's blob sha1 ("blob <size>\0" + content), when that is the published id
	n         int64
	done      bool
	err       error
	progress  *progress
	report    *transfer
	unchecked string // why nothing is checked, when nothing is
}

func newCheckedReader(body io.ReadCloser, name string, want repoFile, p *progress) *checkedReader {
	r := &checkedReader{body: body, name: name, want: want, sha256: sha256.New(), progress: p}
	if want.SHA256 == "" && want.BlobID != "" && want.Size >= 0 {
		r.blob = sha1.New()
		fmt.Fprintf(r.blob, "blob %d\x00", want.Size)
	}
	r.report = p.start(name, want.Size)
	return r
}

func (r *checkedReader) Read(b []byte) (int, error) {
	if r.done {
		return 0, r.err
	}
	n, err := r.body.Read(b)
	if n > 0 {
		r.sha256.Write(b[:n])
		if r.blob != nil {
			r.blob.Write(b[:n])
		}
		r.n += int64(n)
		r.report.add(int64(n))
	}
	if err == io.EOF {
		r.done, r.err = true, r.check()
		if r.err == io.EOF {
			r.report.finish(r.Verified())
		}
		return n, r.err
	}
	return n, err
}

// check compares what was read with what the source published.
func (r *checkedReader) check() error {
	got := hex.EncodeToString(r.sha256.Sum(nil))
	switch {
	case r.want.Size >= 0 && r.n != r.want.Size:
		return fmt.Errorf("%s: downloaded %d bytes, the source lists %d: the download was cut short or the file changed; run the command again", r.name, r.n, r.want.Size)
	case r.want.SHA256 != "" && got != r.want.SHA256:
		return fmt.Errorf("%s: sha256 %s does not match the %s the source publishes: refused; run the command again, and report it if it persists", r.name, got, r.want.SHA256)
	case r.blob != nil && hex.EncodeToString(r.blob.Sum(nil)) != r.want.BlobID:
		return fmt.Errorf("%s: git blob id %s does not match the %s the source publishes: refused; run the command again, and report it if it persists", r.name, hex.EncodeToString(r.blob.Sum(nil)), r.want.BlobID)
	}
	return io.EOF
}

// Verified names the checksum the content was checked against.
func (r *checkedReader) Verified() string {
	switch {
	case r.want.SHA256 != "":
		return "sha256 matches the source's"
	case r.blob != nil:
		return "git blob id matches the source's"
	case r.unchecked != "":
		return r.unchecked
	}
	return "none published by the source"
}

// SHA256 is the content's sha256, once read to the end.
func (r *checkedReader) SHA256() string { return hex.EncodeToString(r.sha256.Sum(nil)) }

func (r *checkedReader) Close() error { return r.body.Close() }

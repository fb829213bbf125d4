package datasets

// write.go — one `train data NAME` run: for each of the set's outputs that
// is not already there (an existing file is kept unless Force), fetch the
// sources it is made from into a scratch directory beside the outputs,
// convert, and write the output atomically (a temporary file renamed into
// place: an interrupted run leaves the old file or none, never a partial
// one); then record in data/NAME.manifest.json, per output, the
// repositories and commits it came from, each source file's sha256 and the
// checksum it was checked against, and the output's rows and sha256.
//
// What it is not: resumable inside a file. An interrupted download starts
// again; outputs already written are kept by the next run. A process killed
// outright (SIGKILL) can leave its scratch directory,
// data/.train-data-NAME-*, behind; nothing reads it, and it can be removed.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"troupe/internal/atomicfile"
)

// Options are a run's settings.
type Options struct {
	Out    string // the directory the configs' data/... paths are relative to ("" = ".")
	Force  bool   // replace outputs that exist
	Corpus bool   // also the optional outputs (drmas-search: the wiki-18 corpus)
	// From reads repositories from FROM/OWNER/NAME (downloaded by hand)
	// instead of the Hub.
	From      string
	Endpoint  string            // the Hub ("" = $HF_ENDPOINT, else DefaultEndpoint)
	Token     string            // ("" = $HF_TOKEN)
	Revisions map[string]string // repository → revision; key "" for every repository; default main
	Log       io.Writer         // progress lines; nil for none
	// ProgressEvery is the time between a download's progress lines
	// (0: 5 s).
	ProgressEvery time.Duration
	Client        *http.Client // nil: timeouts, proxy from the environment
}

// Manifest is data/NAME.manifest.json: where each output came from.
type Manifest struct {
	Set       string         `json:"set"`
	Reproduce string         `json:"reproduce"` // the command with every repository pinned to its commit
	Outputs   []OutputRecord `json:"outputs"`
}

// OutputRecord is one written file.
type OutputRecord struct {
	Path    string         `json:"path"`
	Rows    int64          `json:"rows"`
	Bytes   int64          `json:"bytes"`
	SHA256  string         `json:"sha256"`
	Written string         `json:"written"` // UTC, RFC 3339
	Sources []SourceRecord `json:"sources"`
}

// SourceRecord is one repository an output was made from.
type SourceRecord struct {
	Repo     string       `json:"repo"`
	Revision string       `json:"revision"`
	Commit   string       `json:"commit"`
	From     string       `json:"from"`
	Files    []FileRecord `json:"files"`
}

// FileRecord is one source file as read.
type FileRecord struct {
	Path     string `json:"path"`
	Bytes    int64  `json:"bytes"`
	SHA256   string `json:"sha256"`
	Checksum string `json:"checksum"` // what it was checked against
}

// job is one run's state.
type job struct {
	ctx     context.Context
	set     *Set
	o       Options
	src     source
	scratch string
	snaps   map[string]*snapshot
	fetched map[string]fetched // repo/path → the scratch copy
	cur     *OutputRecord      // the output being made
}

type fetched struct {
	path string
	rec  FileRecord
}

// Write writes the named set's files under o.Out and returns the paths it
// wrote (slash-separated, relative to o.Out). Outputs that exist are kept
// unless o.Force.
func Write(ctx context.Context, name string, o Options) ([]string, error) {
	set, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	if o.Out == "" {
		o.Out = "."
	}
	if o.ProgressEvery == 0 {
		o.ProgressEvery = 5 * time.Second
	}
	p := &progress{out: o.Log, every: o.ProgressEvery, now: time.Now}
	j := &job{ctx: ctx, set: set, o: o, snaps: map[string]*snapshot{}, fetched: map[string]fetched{}}
	if o.From != "" {
		j.src = &localDir{root: o.From, progress: p}
	} else {
		endpoint, token := o.Endpoint, o.Token
		if endpoint == "" {
			endpoint = os.Getenv("HF_ENDPOINT")
		}
		if endpoint == "" {
			endpoint = DefaultEndpoint
		}
		if token == "" {
			token = os.Getenv("HF_TOKEN")
		}
		j.src = newHub(endpoint, token, o.Client, p)
	}
	if err := set.checkOptions(o); err != nil {
		return nil, err
	}
	if len(set.Outputs) == 0 {
		p.line("%s: nothing to download: %s", set.Name, set.Note)
		return nil, nil
	}
	var todo []Output
	for _, out := range set.Outputs {
		if out.Optional && !o.Corpus {
			continue
		}
		final := filepath.Join(o.Out, filepath.FromSlash(out.Path))
		switch st, err := os.Stat(final); {
		case err == nil && st.IsDir():
			return nil, fmt.Errorf("data %s: %s is a directory; move it away or pass another --out", set.Name, final)
		case err == nil && !o.Force:
			p.line("%s exists: kept (--force replaces it)", final)
			continue
		case err != nil && !errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("data %s: %v", set.Name, err)
		}
		todo = append(todo, out)
	}
	if len(todo) == 0 {
		return nil, nil
	}
	manifestPath := filepath.Join(o.Out, "data", set.Name+".manifest.json")
	man, err := readManifest(manifestPath, set.Name)
	if err != nil && !o.Force {
		return nil, err
	}
	dataDir := filepath.Join(o.Out, "data")
	if _, err := os.Stat(dataDir); errors.Is(err, os.ErrNotExist) {
		defer os.Remove(dataDir) // removes it only if nothing was written there
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, fmt.Errorf("data %s: --out %s: %v", set.Name, o.Out, err)
	}
	if j.scratch, err = os.MkdirTemp(dataDir, ".train-data-"+set.Name+"-"); err != nil {
		return nil, fmt.Errorf("data %s: %v", set.Name, err)
	}
	defer os.RemoveAll(j.scratch)
	var written []string
	for _, out := range todo {
		rec, err := j.write(out)
		if err != nil {
			return written, j.explain(err)
		}
		p.line("wrote %s (%d rows, %s)", filepath.Join(o.Out, filepath.FromSlash(out.Path)), rec.Rows, bytesText(rec.Bytes))
		written = append(written, out.Path)
		man.put(rec)
		if err := man.write(manifestPath); err != nil {
			return written, fmt.Errorf("data %s: manifest %s: %v", set.Name, manifestPath, err)
		}
	}
	return written, nil
}

// checkOptions refuses options that do not apply to the set: --corpus
// where it has no optional output, a --revision of a repository it does
// not read.
func (s *Set) checkOptions(o Options) error {
	var repos []string
	corpus := false
	for _, out := range s.Outputs {
		corpus = corpus || out.Optional
		for _, r := range out.Sources {
			if !slices.Contains(repos, r) {
				repos = append(repos, r)
			}
		}
	}
	if o.Corpus && !corpus {
		return fmt.Errorf("data %s: --corpus: %s has no corpus (drmas-search has: bin/train data drmas-search --corpus)", s.Name, s.Name)
	}
	for _, repo := range slices.Sorted(maps.Keys(o.Revisions)) {
		if repo != "" && !slices.Contains(repos, repo) {
			return fmt.Errorf("data %s: --revision %s=%s: %s does not read %s; its repositories are %s", s.Name, repo, o.Revisions[repo], s.Name, repo, strings.Join(repos, ", "))
		}
	}
	return nil
}

// write makes one output.
func (j *job) write(out Output) (OutputRecord, error) {
	final := filepath.Join(j.o.Out, filepath.FromSlash(out.Path))
	if _, err := os.Stat(filepath.Dir(final)); errors.Is(err, os.ErrNotExist) {
		defer os.Remove(filepath.Dir(final)) // only if the output failed: it is empty then
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return OutputRecord{}, err
	}
	rec := OutputRecord{Path: out.Path}
	j.cur = &rec
	defer func() { j.cur = nil }()
	h := sha256.New()
	err := atomicfile.Write(final, func(w io.Writer) error {
		cw := &countWriter{w: io.MultiWriter(w, h)}
		rows, err := out.make(j, cw)
		rec.Rows, rec.Bytes = rows, cw.n
		return err
	})
	if err != nil {
		return OutputRecord{}, fmt.Errorf("%s: %w", out.Path, err)
	}
	rec.SHA256 = hex.EncodeToString(h.Sum(nil))
	rec.Written = time.Now().UTC().Format(time.RFC3339)
	return rec, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// explain names the way out when the source cannot be reached at all.
func (j *job) explain(err error) error {
	if !j.src.unreachable(err) {
		return fmt.Errorf("data %s: %w", j.set.Name, err)
	}
	var repos []string
	for _, out := range j.set.Outputs {
		for _, r := range out.Sources {
			if !slices.Contains(repos, r) {
				repos = append(repos, r)
			}
		}
	}
	where := j.o.Endpoint
	if h, ok := j.src.(*hub); ok {
		where = h.endpoint
	}
	return fmt.Errorf("data %s: cannot reach %s (%v); on a machine that can, run `bin/train data %s --out DIR` and copy DIR/data here, or download the dataset repositories %s by hand into DIR/OWNER/NAME (git clone %s/datasets/OWNER/NAME, with Git LFS) and run `bin/train data %s --from DIR`; HF_ENDPOINT names a mirror",
		j.set.Name, where, err, j.set.Name, strings.Join(repos, ", "), where, j.set.Name)
}

// snapshot resolves a repository's revision once per run.
func (j *job) snapshot(repo string) (*snapshot, error) {
	if s, ok := j.snaps[repo]; ok {
		return s, nil
	}
	rev := j.o.Revisions[repo]
	if rev == "" {
		rev = j.o.Revisions[""]
	}
	if rev == "" {
		rev = "main"
	}
	s, err := j.src.snapshot(j.ctx, repo, rev)
	if err != nil {
		return nil, err
	}
	j.snaps[repo] = s
	return s, nil
}

// fetch downloads a file of a repository into the scratch directory once
// per run (checked as it comes), records it as a source of the current
// output, and returns the local copy's path.
func (j *job) fetch(s *snapshot, f repoFile) (string, error) {
	key := s.Repo + "/" + f.Path
	if got, ok := j.fetched[key]; ok {
		j.used(s, got.rec)
		return got.path, nil
	}
	r, err := j.src.open(j.ctx, s, f)
	if err != nil {
		return "", err
	}
	defer r.Close()
	local := filepath.Join(j.scratch, fmt.Sprintf("%d-%s", len(j.fetched), filepath.Base(f.Path)))
	file, err := os.Create(local)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(file, r); err != nil {
		file.Close()
		return "", err
	}
	if err := file.Close(); err != nil {
		return "", err
	}
	rec := FileRecord{Path: f.Path, Bytes: r.n, SHA256: r.SHA256(), Checksum: r.Verified()}
	j.fetched[key] = fetched{path: local, rec: rec}
	j.used(s, rec)
	return local, nil
}

// stream opens a file of a repository to read once, without a scratch
// copy (the corpus); the caller reads it to the end, which checks it.
func (j *job) stream(s *snapshot, f repoFile) (*checkedReader, error) {
	return j.src.open(j.ctx, s, f)
}

// used records a source file of the current output.
func (j *job) used(s *snapshot, f FileRecord) {
	if j.cur == nil {
		return
	}
	i := slices.IndexFunc(j.cur.Sources, func(r SourceRecord) bool { return r.Repo == s.Repo })
	if i < 0 {
		j.cur.Sources = append(j.cur.Sources, SourceRecord{Repo: s.Repo, Revision: s.Revision, Commit: s.Commit, From: s.Where})
		i = len(j.cur.Sources) - 1
	}
	if !slices.ContainsFunc(j.cur.Sources[i].Files, func(g FileRecord) bool { return g.Path == f.Path }) {
		j.cur.Sources[i].Files = append(j.cur.Sources[i].Files, f)
	}
}

// splitRecords reads every record of a repository's split (files under
// dir, "" for all), in file order.
func (j *job) splitRecords(repo, dir, split string) ([]record, error) {
	s, err := j.snapshot(repo)
	if err != nil {
		return nil, err
	}
	files, err := splitFiles(s, dir, split)
	if err != nil {
		return nil, err
	}
	var recs []record
	for _, f := range files {
		local, err := j.fetch(s, f)
		if err != nil {
			return nil, err
		}
		rs, err := readRecords(local, repo+"/"+f.Path)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rs...)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("dataset %s%s: split %q has no rows", repo, atCommit(s), split)
	}
	return recs, nil
}

// file fetches one named file of a repository.
func (j *job) file(repo, path string) (string, error) {
	s, err := j.snapshot(repo)
	if err != nil {
		return "", err
	}
	f, err := findFile(s, path)
	if err != nil {
		return "", err
	}
	return j.fetch(s, f)
}

// readManifest reads an earlier run's manifest, or starts one.
func readManifest(path, set string) (*Manifest, error) {
	m := &Manifest{Set: set}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, fmt.Errorf("data %s: manifest %s: %v", set, path, err)
	}
	if err := json.Unmarshal(data, m); err != nil || m.Set != set {
		return &Manifest{Set: set}, fmt.Errorf("data %s: %s is not this command's manifest of %s; move it away, or pass --force to replace it", set, path, set)
	}
	return m, nil
}

// put adds or replaces an output's record.
func (m *Manifest) put(rec OutputRecord) {
	if i := slices.IndexFunc(m.Outputs, func(o OutputRecord) bool { return o.Path == rec.Path }); i >= 0 {
		m.Outputs[i] = rec
	} else {
		m.Outputs = append(m.Outputs, rec)
	}
}

// write saves the manifest atomically, with the command that fetches the
// same commits.
func (m *Manifest) write(path string) error {
	cmd := "bin/train data " + m.Set
	seen := map[string]bool{}
	corpus := false
	for _, o := range m.Outputs {
		if set, err := Lookup(m.Set); err == nil {
			for _, out := range set.Outputs {
				corpus = corpus || out.Optional && out.Path == o.Path
			}
		}
		for _, s := range o.Sources {
			if s.Commit != "" && !seen[s.Repo] {
				seen[s.Repo] = true
				cmd += " --revision " + s.Repo + "=" + s.Commit
			}
		}
	}
	if corpus {
		cmd += " --corpus"
	}
	m.Reproduce = cmd
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, append(data, '\n'))
}

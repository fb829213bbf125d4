package datasets_test

// write_test.go — `train data` against the stand-in Hub (fakehub_test.go)
// and against a local directory: what each output holds, the checks of
// the published checksums, the refusal to replace, the manifest, the
// revision pin, the token, and the error when the Hub cannot be reached.

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"troupe/datasets"
)

func write(t *testing.T, h *fakeHub, name string, o datasets.Options) []string {
	t.Helper()
	if o.Out == "" {
		o.Out = t.TempDir()
	}
	if o.Endpoint == "" && o.From == "" {
		o.Endpoint = h.URL
	}
	got, err := datasets.Write(context.Background(), name, o)
	if err != nil {
		t.Fatalf("data %s: %v", name, err)
	}
	return got
}

// readParquet reads a file's rows as generic records.
func readParquet(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := parquet.NewGenericReader[any](f)
	var out []map[string]any
	rows := make([]any, 64)
	for {
		n, err := r.Read(rows)
		for _, row := range rows[:n] {
			out = append(out, row.(map[string]any))
		}
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func readJSONL(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, m)
	}
	return out
}

func column(rows []map[string]any, path ...string) []any {
	var out []any
	for _, r := range rows {
		var v any = r
		for _, p := range path {
			switch x := v.(type) {
			case map[string]any:
				v = x[p]
			case []any:
				v = x[0]
				if p == "-1" {
					v = x[len(x)-1]
				}
			}
		}
		out = append(out, v)
	}
	return out
}

func anyStrings(xs ...string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// drmas-math's three files hold what drmas_math.py writes from the
// fixtures: the instruction suffix gone from each of its spellings, the
// data sources and their order, MATH-500 cut at 50, str() of integer and
// float answers.
func TestDrMASMath(t *testing.T) {
	h := newFakeHub(t)
	out := t.TempDir()
	var log bytes.Buffer
	got := write(t, h, "drmas-math", datasets.Options{Out: out, Log: &log, ProgressEvery: time.Nanosecond})
	if want := []string{"data/drmas_math/train.parquet", "data/drmas_math/test_sampled.parquet", "data/drmas_math/test.parquet"}; !slices.Equal(got, want) {
		t.Fatalf("wrote %v, want %v", got, want)
	}
	train := readParquet(t, filepath.Join(out, "data/drmas_math/train.parquet"))
	wantQ := anyStrings("What is the remainder when $2^{10}$ is divided by $7$?", "How many positive divisors does $36$ have?",
		"Find $x$ if $3x - 4 = 11$.", "A square has perimeter $20$. What is its area?")
	if q := column(train, "prompt", "-1", "content"); !slices.Equal(q, wantQ) {
		t.Errorf("train questions %q, want %q", q, wantQ)
	}
	if q := column(train, "extra_info", "question"); !slices.Equal(q, wantQ) {
		t.Errorf("train extra_info.question %q", q)
	}
	if gt := column(train, "reward_model", "ground_truth"); !slices.Equal(gt, anyStrings("2", "9", "5", "25")) {
		t.Errorf("train ground truths %q", gt)
	}
	if s := column(train, "reward_model", "style"); s[0] != "rule-lighteval/MATH_v2" {
		t.Errorf("train reward_model.style %q, want the source's", s[0])
	}
	if ds := column(train, "data_source"); ds[0] != "dapo_filter" || column(train, "env_kwargs", "data_source")[3] != "dapo_filter" {
		t.Errorf("train data_source %q", ds)
	}
	if idx := column(train, "extra_info", "index"); idx[3] != int64(3) {
		t.Errorf("train extra_info.index %v", idx)
	}

	sampled := readParquet(t, filepath.Join(out, "data/drmas_math/test_sampled.parquet"))
	if len(sampled) != 56 {
		t.Fatalf("test_sampled has %d rows, want 50 + 3 + 3", len(sampled))
	}
	src := column(sampled, "data_source")
	if src[0] != "math500_first50" || src[49] != "math500_first50" || src[50] != "aime24" || src[53] != "aime25" {
		t.Errorf("test_sampled data sources %v", src)
	}
	if q := column(sampled, "prompt", "-1", "content"); q[49] != "What is $49 + 3$?" || q[50] != "Find the number of ordered pairs $(a, b)$ of digits with $a + b = 9$." {
		t.Errorf("test_sampled questions %q, %q", q[49], q[50])
	}
	if gt := column(sampled, "reward_model", "ground_truth"); gt[50] != "010" || gt[53] != "702" {
		t.Errorf("ground truths %q (AIME 2024's as written) and %q (str() of AIME 2025's integer)", gt[50], gt[53])
	}
	if idx := column(sampled, "extra_info", "index"); idx[50] != int64(0) || idx[55] != int64(2) {
		t.Errorf("extra_info.index counts within each source: %v", idx[48:])
	}

	full := readParquet(t, filepath.Join(out, "data/drmas_math/test.parquet"))
	if len(full) != 55+3+3+2+2+2 {
		t.Fatalf("test has %d rows, want every row of the six sources (67)", len(full))
	}
	var order []any
	for _, s := range column(full, "data_source") {
		if !slices.Contains(order, s) {
			order = append(order, s)
		}
	}
	if want := anyStrings("math500", "aime24", "aime25", "olympiadbench", "amc23", "minerva"); !slices.Equal(order, want) {
		t.Errorf("test's sources in order %v, want %v", order, want)
	}
	if gt := column(full, "reward_model", "ground_truth"); gt[63] != "27.0" || gt[64] != "0.25" {
		t.Errorf("AMC 2023's float answers as str() writes them: %q %q, want 27.0 0.25", gt[63], gt[64])
	}
	if !strings.Contains(log.String(), "checksum: sha256 matches the source's") || !strings.Contains(log.String(), "checksum: git blob id matches the source's") {
		t.Errorf("progress lines name no checksum:\n%s", log.String())
	}
}

// atgrpo-math: load_math.py's question and solution columns, the answer
// taken by extract_solution from each kind of answer text, and AIME 2024's
// integer Answer column before its Solution.
func TestPettingLLMsMath(t *testing.T) {
	h := newFakeHub(t)
	out := t.TempDir()
	write(t, h, "atgrpo-math", datasets.Options{Out: out})
	polaris := readParquet(t, filepath.Join(out, "data/pettingllms/polaris.parquet"))
	if q := column(polaris, "question"); q[0] != "What is $6 \\times 7$?" {
		t.Errorf("question %q, want it stripped", q[0])
	}
	if s := column(polaris, "solution"); !slices.Equal(s, anyStrings("42", `\frac{3}{4}`, "1000", "12", "7")) {
		t.Errorf("solutions %q", s)
	}
	aime := readParquet(t, filepath.Join(out, "data/pettingllms/AIME24.parquet"))
	if s := column(aime, "solution"); !slices.Equal(s, anyStrings("204", "75", "81")) {
		t.Errorf("AIME 2024 solutions %q, want the Answer column", s)
	}
	if len(aime[0]) != 2 {
		t.Errorf("columns %v, want question and solution only", aime[0])
	}
}

// drmas-search: the two files as published, byte for byte; the sample the
// first 30 rows of each data source in the order each first appears,
// whole rows in the source's schema; the corpus decompressed.
func TestSearchR1(t *testing.T) {
	h := newFakeHub(t)
	out := t.TempDir()
	got := write(t, h, "drmas-search", datasets.Options{Out: out})
	if len(got) != 3 {
		t.Fatalf("wrote %v; the corpus is only for --corpus", got)
	}
	for _, f := range []string{"train", "test"} {
		a, _ := os.ReadFile(filepath.Join(fixtures, "PeterJinGo/nq_hotpotqa_train", f+".parquet"))
		b, _ := os.ReadFile(filepath.Join(out, "data/search-r1/nq_hotpotqa_"+f+".parquet"))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s.parquet is not the published file", f)
		}
	}
	test := readParquet(t, filepath.Join(out, "data/search-r1/nq_hotpotqa_test.parquet"))
	sampled := readParquet(t, filepath.Join(out, "data/search-r1/nq_hotpotqa_test_sampled.parquet"))
	if len(sampled) != 30+30+3 {
		t.Fatalf("sampled %d rows, want 30 nq, 30 hotpotqa, 3 bamboogle", len(sampled))
	}
	var want []map[string]any
	for _, src := range []string{"nq", "hotpotqa", "bamboogle"} {
		n := 0
		for _, r := range test {
			if r["data_source"] == src && n < 30 {
				want = append(want, r)
				n++
			}
		}
	}
	for i := range want {
		a, _ := json.Marshal(want[i])
		b, _ := json.Marshal(sampled[i])
		if !bytes.Equal(a, b) {
			t.Fatalf("sampled row %d:\n %s\nwant\n %s", i, b, a)
		}
	}

	write(t, h, "drmas-search", datasets.Options{Out: out, Corpus: true})
	gz, _ := os.ReadFile(filepath.Join(fixtures, "PeterJinGo/wiki-18-corpus/wiki-18.jsonl.gz"))
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	corpus, _ := os.ReadFile(filepath.Join(out, "data/search-r1/wiki-18.jsonl"))
	if len(plain) == 0 || !bytes.Equal(plain, corpus) {
		t.Errorf("wiki-18.jsonl is not the decompressed corpus:\n%s", corpus)
	}
}

// The JSONL sets: MBPP's full train and test (not the sanitized config
// beside them), TLDR's first 1100 of train and test, HumanEval cut at
// [33:163] and [:32]; each record's columns in the source's order.
func TestJSONLSets(t *testing.T) {
	h := newFakeHub(t)
	out := t.TempDir()
	write(t, h, "atgrpo-code", datasets.Options{Out: out})
	write(t, h, "magrpo-writing", datasets.Options{Out: out})
	write(t, h, "magrpo-coding", datasets.Options{Out: out})
	mtrain := readJSONL(t, filepath.Join(out, "data/mbpp-train.jsonl"))
	mtest := readJSONL(t, filepath.Join(out, "data/mbpp-test.jsonl"))
	if ids := column(mtrain, "task_id"); len(ids) != 3 || ids[0] != 601.0 {
		t.Errorf("mbpp train task ids %v", ids)
	}
	if ids := column(mtest, "task_id"); len(ids) != 4 || ids[0] != 11.0 || mtest[0]["text"] == nil {
		t.Errorf("mbpp test %v (want the full config's text column)", mtest[0])
	}
	line, _ := os.ReadFile(filepath.Join(out, "data/mbpp-train.jsonl"))
	if !bytes.HasPrefix(line, []byte(`{"task_id":601,"text":"Write a function`)) {
		t.Errorf("mbpp columns not in the source's order: %.80s", line)
	}
	if p := column(readJSONL(t, filepath.Join(out, "data/tldr-test.jsonl")), "prompt"); len(p) != 3 || !strings.Contains(p[0].(string), "TITLE: test post 0") {
		t.Errorf("tldr test prompts %q", p)
	}
	if p := column(readJSONL(t, filepath.Join(out, "data/tldr-train.jsonl")), "prompt"); len(p) != 3 || !strings.Contains(p[2].(string), "TITLE: train post 2") {
		t.Errorf("tldr train prompts %q", p)
	}
	htrain := column(readJSONL(t, filepath.Join(out, "data/humaneval-train.jsonl")), "task_id")
	htest := column(readJSONL(t, filepath.Join(out, "data/humaneval-test.jsonl")), "task_id")
	if len(htrain) != 7 || htrain[0] != "HumanEval/33" || htrain[6] != "HumanEval/39" {
		t.Errorf("humaneval train %v, want HumanEval/33 to the end (39 in the fixture)", htrain)
	}
	if len(htest) != 32 || htest[0] != "HumanEval/0" || htest[31] != "HumanEval/31" {
		t.Errorf("humaneval test %v, want HumanEval/0 to 31", htest)
	}
}

// A download whose sha256 (LFS) or git blob id is not the one the Hub
// publishes is refused, and leaves no output, no manifest and no scratch
// directory behind.
func TestChecksumMismatchRefused(t *testing.T) {
	for _, c := range []struct {
		name, file string
		absent     []string // the outputs made from it
	}{
		{"drmas-math", "aaabiao/dapo_filter/data/train-00000-of-00001.parquet", []string{"data/drmas_math/train.parquet"}},
		{"drmas-math", "HuggingFaceH4/MATH-500/test.jsonl", []string{"data/drmas_math/test_sampled.parquet", "data/drmas_math/test.parquet"}},
		{"drmas-search", "PeterJinGo/wiki-18-corpus/wiki-18.jsonl.gz", []string{"data/search-r1/wiki-18.jsonl"}},
	} {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			h := newFakeHub(t)
			h.wrong[c.file] = strings.Repeat("0", 40)
			if strings.HasSuffix(c.file, ".parquet") || strings.HasSuffix(c.file, ".gz") {
				h.wrong[c.file] = strings.Repeat("0", 64)
			}
			out := t.TempDir()
			_, err := datasets.Write(context.Background(), c.name, datasets.Options{Out: out, Endpoint: h.URL, Corpus: c.name == "drmas-search"})
			if err == nil || !strings.Contains(err.Error(), "does not match") || !strings.Contains(err.Error(), filepath.Base(c.file)) {
				t.Fatalf("err = %v, want the mismatch named", err)
			}
			for _, p := range c.absent {
				if _, err := os.Stat(filepath.Join(out, p)); err == nil {
					t.Errorf("%s written from a refused download", p)
				}
			}
			var left []string
			filepath.WalkDir(out, func(p string, d os.DirEntry, _ error) error {
				if strings.HasPrefix(d.Name(), ".") {
					left = append(left, p)
				}
				return nil
			})
			if len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

// An output that exists is kept, and its sources not even asked for,
// unless Force; the manifest keeps each output's record.
func TestExistingKeptUnlessForce(t *testing.T) {
	h := newFakeHub(t)
	out := t.TempDir()
	mine := filepath.Join(out, "data/humaneval-test.jsonl")
	os.MkdirAll(filepath.Dir(mine), 0o755)
	os.WriteFile(mine, []byte("mine\n"), 0o644)
	var log bytes.Buffer
	got := write(t, h, "magrpo-coding", datasets.Options{Out: out, Log: &log})
	if b, _ := os.ReadFile(mine); string(b) != "mine\n" || !slices.Equal(got, []string{"data/humaneval-train.jsonl"}) {
		t.Fatalf("wrote %v; the existing file holds %q", got, b)
	}
	if !strings.Contains(log.String(), "exists: kept (--force replaces it)") {
		t.Errorf("no line says the file was kept:\n%s", log.String())
	}
	n := len(h.asked())
	if got := write(t, h, "magrpo-coding", datasets.Options{Out: out}); len(got) != 0 || len(h.asked()) != n {
		t.Fatalf("a second run wrote %v and asked the Hub %v", got, h.asked()[n:])
	}
	got = write(t, h, "magrpo-coding", datasets.Options{Out: out, Force: true})
	if b, _ := os.ReadFile(mine); len(got) != 2 || string(b) == "mine\n" {
		t.Fatalf("--force wrote %v and left %q", got, b)
	}
	var man datasets.Manifest
	data, _ := os.ReadFile(filepath.Join(out, "data/magrpo-coding.manifest.json"))
	if err := json.Unmarshal(data, &man); err != nil || len(man.Outputs) != 2 {
		t.Fatalf("manifest %s: %v", data, err)
	}
}

// The manifest names each output's repositories, the revision asked and
// the commit resolved, each source file's sha256 and what it was checked
// against; --revision pins a repository and its command reproduces it.
func TestManifestAndRevision(t *testing.T) {
	h := newFakeHub(t)
	out := t.TempDir()
	commit := commitOf("openai/openai_humaneval")
	write(t, h, "magrpo-coding", datasets.Options{Out: out, Revisions: map[string]string{"openai/openai_humaneval": commit}})
	if !slices.Contains(h.asked(), "/api/datasets/openai/openai_humaneval/revision/"+commit) {
		t.Errorf("the pinned revision was not asked for: %v", h.asked())
	}
	var man datasets.Manifest
	data, _ := os.ReadFile(filepath.Join(out, "data/magrpo-coding.manifest.json"))
	if err := json.Unmarshal(data, &man); err != nil {
		t.Fatal(err)
	}
	o := man.Outputs[0]
	src := o.Sources[0]
	if o.Path != "data/humaneval-train.jsonl" || o.Rows != 7 || len(o.SHA256) != 64 || src.Repo != "openai/openai_humaneval" ||
		src.Revision != commit || src.Commit != commit || src.Files[0].Checksum != "sha256 matches the source's" {
		t.Errorf("manifest %s", data)
	}
	if want := "bin/train data magrpo-coding --revision openai/openai_humaneval=" + commit; man.Reproduce != want {
		t.Errorf("reproduce %q, want %q", man.Reproduce, want)
	}
	_, err := datasets.Write(context.Background(), "magrpo-coding", datasets.Options{Out: t.TempDir(), Endpoint: h.URL, Revisions: map[string]string{"": "v9"}})
	if err == nil || !strings.Contains(err.Error(), `not found at revision "v9"`) {
		t.Errorf("an unknown revision: %v", err)
	}
}

// HF_TOKEN goes to the Hub as a bearer token; without it a gated dataset's
// refusal names the fix.
func TestToken(t *testing.T) {
	h := newFakeHub(t)
	h.token = "hf_test"
	t.Setenv("HF_TOKEN", "")
	_, err := datasets.Write(context.Background(), "magrpo-writing", datasets.Options{Out: t.TempDir(), Endpoint: h.URL})
	if err == nil || !strings.Contains(err.Error(), "set HF_TOKEN") {
		t.Fatalf("without a token: %v", err)
	}
	t.Setenv("HF_TOKEN", "hf_test")
	write(t, h, "magrpo-writing", datasets.Options{})
}

// HF_ENDPOINT names the Hub when --endpoint is not given.
func TestEndpointFromEnvironment(t *testing.T) {
	h := newFakeHub(t)
	t.Setenv("HF_ENDPOINT", h.URL)
	if got, err := datasets.Write(context.Background(), "magrpo-writing", datasets.Options{Out: t.TempDir()}); err != nil || len(got) != 2 {
		t.Fatalf("wrote %v: %v", got, err)
	}
}

// A Hub that cannot be reached: one line naming the address, the
// repositories to fetch by hand, where they go and the command then.
func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + l.Addr().String()
	l.Close() // nothing listens there now
	out := t.TempDir()
	_, err = datasets.Write(context.Background(), "drmas-math", datasets.Options{Out: out, Endpoint: addr})
	if err == nil {
		t.Fatal("no error")
	}
	if left, _ := os.ReadDir(out); len(left) != 0 {
		t.Errorf("--out holds %v after a run that wrote nothing", left)
	}
	msg := err.Error()
	for _, want := range []string{"cannot reach " + addr, "aaabiao/dapo_filter", "MathArena/aime_2025", "DIR/OWNER/NAME", "bin/train data drmas-math --from DIR"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("not one line: %q", msg)
	}
}

// --from reads the same repositories from a directory (as downloaded by
// hand) and writes the same files; a Git LFS pointer is refused by name.
func TestFromLocalDirectory(t *testing.T) {
	h := newFakeHub(t)
	hubOut, localOut := t.TempDir(), t.TempDir()
	write(t, h, "drmas-math", datasets.Options{Out: hubOut})
	write(t, h, "drmas-math", datasets.Options{Out: localOut, From: fixtures})
	for _, f := range []string{"train", "test_sampled", "test"} {
		a, _ := os.ReadFile(filepath.Join(hubOut, "data/drmas_math", f+".parquet"))
		b, _ := os.ReadFile(filepath.Join(localOut, "data/drmas_math", f+".parquet"))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s.parquet differs between the Hub and --from", f)
		}
	}

	dir := t.TempDir()
	repo := filepath.Join(dir, "trl-lib/tldr/data")
	os.MkdirAll(repo, 0o755)
	os.WriteFile(filepath.Join(repo, "train-00000-of-00001.parquet"), []byte("version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 10\n"), 0o644)
	_, err := datasets.Write(context.Background(), "magrpo-writing", datasets.Options{Out: t.TempDir(), From: dir})
	if err == nil || !strings.Contains(err.Error(), "Git LFS pointer") {
		t.Errorf("a pointer file: %v", err)
	}
	_, err = datasets.Write(context.Background(), "atgrpo-code", datasets.Options{Out: t.TempDir(), From: dir})
	if err == nil || !strings.Contains(err.Error(), "git clone https://huggingface.co/datasets/google-research-datasets/mbpp") {
		t.Errorf("a repository missing from --from: %v", err)
	}
}

// A source whose rows break the reference script's assertions is refused
// with the row named.
func TestDAPOPromptOfTwoMessagesRefused(t *testing.T) {
	dir := t.TempDir()
	type msg struct {
		Content string `parquet:"content"`
		Role    string `parquet:"role"`
	}
	type row struct {
		Prompt []msg `parquet:"prompt,list"`
	}
	p := filepath.Join(dir, "aaabiao/dapo_filter/train.parquet")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := parquet.WriteFile(p, []row{{Prompt: []msg{{"sys", "system"}, {"q", "user"}}}}); err != nil {
		t.Fatal(err)
	}
	_, err := datasets.Write(context.Background(), "drmas-math", datasets.Options{Out: t.TempDir(), From: dir})
	if err == nil || !strings.Contains(err.Error(), "row 0: prompt holds 2 messages") {
		t.Errorf("err = %v", err)
	}
}

// Options that do not apply to the set are refused before anything is
// fetched: --corpus without a corpus, a --revision of another repository.
func TestOptionsThatDoNotApply(t *testing.T) {
	h := newFakeHub(t)
	_, err := datasets.Write(context.Background(), "drmas-math", datasets.Options{Out: t.TempDir(), Endpoint: h.URL, Corpus: true})
	if err == nil || !strings.Contains(err.Error(), "--corpus: drmas-math has no corpus") {
		t.Errorf("--corpus: %v", err)
	}
	_, err = datasets.Write(context.Background(), "magrpo-coding", datasets.Options{Out: t.TempDir(), Endpoint: h.URL,
		Revisions: map[string]string{"openai/openai_humaneva": "main"}})
	if err == nil || !strings.Contains(err.Error(), "magrpo-coding does not read openai/openai_humaneva; its repositories are openai/openai_humaneval") {
		t.Errorf("--revision of another repository: %v", err)
	}
	if len(h.asked()) != 0 {
		t.Errorf("the Hub was asked %v", h.asked())
	}
}

func TestUnknownName(t *testing.T) {
	_, err := datasets.Write(context.Background(), "drmas-maths", datasets.Options{Out: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), `no dataset "drmas-maths"`) || !strings.Contains(err.Error(), "drmas-math, ") {
		t.Errorf("err = %v", err)
	}
	got, err := datasets.Write(context.Background(), "planpath", datasets.Options{Out: t.TempDir()})
	if err != nil || len(got) != 0 {
		t.Errorf("planpath wrote %v: %v", got, err)
	}
}

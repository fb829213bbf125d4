package datasets

// searchr1.go — drmas-search: Search-R1's NQ + HotpotQA files and Dr.
// MAS's validation sample of them, and (with --corpus) the 2018 Wikipedia
// corpus.
//
//   - nq_hotpotqa_train.parquet, nq_hotpotqa_test.parquet: the train.parquet
//     and test.parquet of PeterJinGo/nq_hotpotqa_train, byte for byte:
//     what Search-R1's scripts/nq_hotpotqa/data_process.sh writes
//     (qa_search_train_merge.py over NQ and HotpotQA, qa_search_test_merge.py
//     over the seven test sets) and what Dr. MAS's drmas_search.py
//     downloads. Their question and golden_answers columns are what the
//     configs' search reader takes by default.
//   - nq_hotpotqa_test_sampled.parquet: drmas_search.py's sample_by_data_source
//     over test.parquet: for each data_source in the order it first
//     appears, its first 30 rows. The rows are copied whole, in the source's
//     schema.
//   - wiki-18.jsonl: PeterJinGo/wiki-18-corpus's wiki-18.jsonl.gz (Search-R1's
//     scripts/download.py), decompressed as it downloads: one {"id",
//     "contents"} passage a line, what `train serve --corpus` indexes.
//
// Departure: drmas_search.py writes its files in its own verl layout
// (the question only inside prompt and extra_info, a system message
// added); the configs read Search-R1's columns, so the sample keeps them.

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"
)

// The dataset repositories drmas-search reads.
const (
	repoNQHotpot = "PeterJinGo/nq_hotpotqa_train"
	repoWiki18   = "PeterJinGo/wiki-18-corpus"
)

// sampledPerSource is drmas_search.py's samples_per_source.
const sampledPerSource = 30

// searchCopy copies a file of the repository as it is.
func searchCopy(name string) func(j *job, w io.Writer) (int64, error) {
	return func(j *job, w io.Writer) (int64, error) {
		local, err := j.file(repoNQHotpot, name)
		if err != nil {
			return 0, err
		}
		f, err := os.Open(local)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return 0, err
		}
		pf, err := parquet.OpenFile(f, st.Size())
		if err != nil {
			return 0, fmt.Errorf("%s/%s: not a readable Parquet file (%v)", repoNQHotpot, name, err)
		}
		if _, err := io.Copy(w, io.NewSectionReader(f, 0, st.Size())); err != nil {
			return 0, err
		}
		return pf.NumRows(), nil
	}
}

func searchSampled(j *job, w io.Writer) (rows int64, err error) {
	local, err := j.file(repoNQHotpot, "test.parquet")
	if err != nil {
		return 0, err
	}
	defer func() { // the reader panics on some malformed files
		if r := recover(); r != nil {
			rows, err = 0, fmt.Errorf("%s/test.parquet: not a readable Parquet file (%v)", repoNQHotpot, r)
		}
	}()
	f, err := os.Open(local)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return 0, fmt.Errorf("%s/test.parquet: not a readable Parquet file (%v)", repoNQHotpot, err)
	}
	sampled, err := firstPerSource(pf, sampledPerSource)
	if err != nil {
		return 0, fmt.Errorf("%s/test.parquet: %w", repoNQHotpot, err)
	}
	var opts []parquet.WriterOption
	for _, kv := range pf.Metadata().KeyValueMetadata {
		if kv.Key != "pandas" { // its index description is the source's
			opts = append(opts, parquet.KeyValueMetadata(kv.Key, kv.Value))
		}
	}
	pw := parquet.NewWriter(w, append(opts, pf.Schema(), parquet.Compression(&parquet.Snappy))...)
	if _, err := pw.WriteRows(sampled); err != nil {
		return 0, err
	}
	if err := pw.Close(); err != nil {
		return 0, err
	}
	return int64(len(sampled)), nil
}

// firstPerSource returns the first n rows of each data_source, grouped by
// data_source in the order each first appears.
func firstPerSource(pf *parquet.File, n int) ([]parquet.Row, error) {
	leaf, ok := pf.Schema().Lookup("data_source")
	if !ok {
		return nil, fmt.Errorf("no data_source column")
	}
	var order []string
	groups := map[string][]parquet.Row{}
	r := parquet.NewReader(pf)
	defer r.Close()
	buf := make([]parquet.Row, 256)
	for {
		k, err := r.ReadRows(buf)
		for _, row := range buf[:k] {
			src := ""
			for _, v := range row {
				if v.Column() == leaf.ColumnIndex && !v.IsNull() {
					src = string(v.ByteArray())
					break
				}
			}
			if _, seen := groups[src]; !seen {
				order = append(order, src)
				groups[src] = nil
			}
			if len(groups[src]) < n {
				groups[src] = append(groups[src], row.Clone())
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	var out []parquet.Row
	for _, src := range order {
		out = append(out, groups[src]...)
	}
	return out, nil
}

// searchCorpus decompresses the corpus as it downloads; its sha256 is
// checked when the download ends, and a mismatch discards the output.
func searchCorpus(j *job, w io.Writer) (int64, error) {
	s, err := j.snapshot(repoWiki18)
	if err != nil {
		return 0, err
	}
	f, err := findFile(s, "wiki-18.jsonl.gz")
	if err != nil {
		return 0, err
	}
	r, err := j.stream(s, f)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	zr, err := gzip.NewReader(r)
	if err != nil {
		return 0, fmt.Errorf("%s/%s: %v", repoWiki18, f.Path, err)
	}
	lines := &lineCounter{w: w}
	if _, err := io.Copy(lines, zr); err != nil {
		return 0, fmt.Errorf("%s/%s: %v", repoWiki18, f.Path, err)
	}
	// gzip stops at its own end: read to the download's, which checks it
	if _, err := io.Copy(io.Discard, r); err != nil {
		return 0, err
	}
	j.used(s, FileRecord{Path: f.Path, Bytes: r.n, SHA256: r.SHA256(), Checksum: r.Verified()})
	return lines.n, nil
}

// lineCounter counts the newlines written through it.
type lineCounter struct {
	w io.Writer
	n int64
}

func (c *lineCounter) Write(b []byte) (int, error) {
	c.n += int64(bytes.Count(b, []byte{'\n'}))
	return c.w.Write(b)
}

package datasets

// splits.go — which files of a dataset repository hold a split, by the
// Hub's file-name conventions (those Hugging Face's datasets library
// applies when a repository's card declares no configs): a path component
// that holds the split's keyword between delimiters (start, end, or one of
// "-._ " and digits) names the split — data/train-00000-of-00001.parquet,
// test.jsonl, train/part-1.json; "training" is train, "testing", "eval"
// and "evaluation" are test, "valid", "dev" and "val" are validation. A
// repository none of whose files names a split is all train. The files of
// a split are read in path order; Parquet is preferred to JSONL to JSON
// when a split has more than one format.
//
// What it is not: the datasets library's resolver. It reads no README
// `configs:` metadata and no loading script; a repository that lays its
// splits out otherwise is refused with its file list.

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// splitKeywords are the names of each split in file names.
var splitKeywords = map[string][]string{
	"train":      {"train", "training"},
	"test":       {"test", "testing", "eval", "evaluation"},
	"validation": {"validation", "valid", "dev", "val"},
}

var splitPatterns = map[string]*regexp.Regexp{}

func init() {
	for split, kws := range splitKeywords {
		splitPatterns[split] = regexp.MustCompile(`(^|[-._ 0-9])(` + strings.Join(kws, "|") + `)([-._ 0-9]|$)`)
	}
}

// dataFormats are the file kinds read, in order of preference.
var dataFormats = []string{".parquet", ".jsonl", ".json"}

func formatOf(path string) string {
	for _, f := range dataFormats {
		if strings.HasSuffix(strings.ToLower(path), f) {
			return f
		}
	}
	return ""
}

// namesSplit reports whether a path names the split in one of its
// components.
func namesSplit(path, split string) bool {
	for _, c := range strings.Split(path, "/") {
		if splitPatterns[split].MatchString(c) {
			return true
		}
	}
	return false
}

// splitFiles returns the files of s under dir ("" for the whole
// repository) that hold split.
func splitFiles(s *snapshot, dir, split string) ([]repoFile, error) {
	if _, ok := splitKeywords[split]; !ok {
		return nil, fmt.Errorf("datasets: unknown split %q", split)
	}
	prefix := ""
	if dir != "" {
		prefix = strings.TrimSuffix(dir, "/") + "/"
	}
	var data []repoFile
	for _, f := range s.Files {
		if strings.HasPrefix(f.Path, prefix) && formatOf(f.Path) != "" && !hidden(f.Path) {
			data = append(data, f)
		}
	}
	named := false
	for _, f := range data {
		for sp := range splitKeywords {
			named = named || namesSplit(strings.TrimPrefix(f.Path, prefix), sp)
		}
	}
	byFormat := map[string][]repoFile{}
	for _, f := range data {
		if !named && split == "train" || named && namesSplit(strings.TrimPrefix(f.Path, prefix), split) {
			byFormat[formatOf(f.Path)] = append(byFormat[formatOf(f.Path)], f)
		}
	}
	for _, format := range dataFormats {
		if fs := byFormat[format]; len(fs) > 0 {
			sort.Slice(fs, func(i, j int) bool { return fs[i].Path < fs[j].Path })
			return fs, nil
		}
	}
	var all []string
	for _, f := range s.Files {
		all = append(all, f.Path)
	}
	where := ""
	if dir != "" {
		where = " under " + dir + "/"
	}
	return nil, fmt.Errorf("dataset %s%s: no Parquet, JSONL or JSON file of split %q%s (its files: %s); not a layout this command reads; an earlier revision may be (--revision %s=COMMIT)",
		s.Repo, atCommit(s), split, where, strings.Join(all, ", "), s.Repo)
}

// hidden reports a path with a component starting with "." (.gitattributes).
func hidden(path string) bool {
	for _, c := range strings.Split(path, "/") {
		if strings.HasPrefix(c, ".") {
			return true
		}
	}
	return false
}

// atCommit is " at COMMIT" where the snapshot has one.
func atCommit(s *snapshot) string {
	if s.Commit == "" {
		return ""
	}
	return " at " + s.Commit
}

// findFile returns the file at path in s.
func findFile(s *snapshot, path string) (repoFile, error) {
	for _, f := range s.Files {
		if f.Path == path {
			return f, nil
		}
	}
	return repoFile{}, fmt.Errorf("dataset %s%s: no file %s: not a layout this command reads; an earlier revision may be (--revision %s=COMMIT)", s.Repo, atCommit(s), path, s.Repo)
}

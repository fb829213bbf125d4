// dataset.go — math tasks from files: JSONL, a JSON array, or Parquet
// (parquet.go), with configurable field names.
//
// What it is: a loader that reads every record into a generic value
// (objects → map[string]any, lists → []any) and picks the question, the
// gold answer and an optional id by path. Paths are dotted; a numeric
// segment indexes a list (negative from the end), so the common layouts
// all work:
//
//	MATH-500, AIME:        question: problem    answer: answer
//	DAPO / verl parquet:   question: prompt.-1.content   answer: reward_model.ground_truth
//	GSM8K:                 question: question   answer: answer   (the "#### n" line is used)
//	Search-R1 style:       answer: golden_answers  (a list: the first is Answer, the rest Answers)
//
// What it deliberately is not: a streaming reader. Math datasets are small
// (MATH-500 is 500 rows, DAPO-17k 17k); everything is loaded at once.
package math

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"troupe/rollout"
	"troupe/rollout/env/internal/jsonl"
)

// Fields names the paths of a record's parts. Empty Question and Answer try
// the usual names in order.
type Fields struct {
	Question string `yaml:"question"` // default: question, then problem
	Answer   string `yaml:"answer"`   // default: answer, then golden_answers, then solution
	ID       string `yaml:"id"`       // optional; default: file name and row number
}

var (
	defaultQuestionPaths = []string{"question", "problem"}
	defaultAnswerPaths   = []string{"answer", "golden_answers", "solution"}
)

// Load reads a dataset file, choosing the format by extension: .jsonl,
// .json (an array of objects) or .parquet.
func Load(path string, f Fields) (rollout.SliceSource, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl":
		return loadJSONL(path, f)
	case ".json":
		return loadJSONArray(path, f)
	case ".parquet":
		return loadParquet(path, f)
	}
	return nil, fmt.Errorf("math: dataset %s: unknown format %q; use a .jsonl, .json or .parquet file", path, filepath.Ext(path))
}

func loadJSONL(path string, f Fields) (rollout.SliceSource, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("math: dataset: %w", err)
	}
	defer file.Close()
	var tasks rollout.SliceSource
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte(jsonl.BOM))
		}
		if b = bytes.TrimSpace(b); len(b) == 0 {
			continue
		}
		if err := jsonl.ObjectLine(string(b), recordExample); err != nil {
			return nil, fmt.Errorf("math: dataset %s:%d: %w", path, line, err)
		}
		rec, err := decodeJSON(b)
		if err != nil {
			return nil, fmt.Errorf("math: dataset %s:%d: not a JSON object: %w", path, line, err)
		}
		t, err := taskOf(rec, f, fmt.Sprintf("%s:%d", filepath.Base(path), line))
		if err != nil {
			return nil, fmt.Errorf("math: dataset %s:%d: %w", path, line, err)
		}
		tasks = append(tasks, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("math: dataset %s: line %d: %w", path, line+1, err)
	}
	return nonEmpty(path, tasks)
}

func loadJSONArray(path string, f Fields) (rollout.SliceSource, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("math: dataset: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte(jsonl.BOM))))
	dec.UseNumber()
	var recs []any
	if err := dec.Decode(&recs); err != nil {
		return nil, fmt.Errorf("math: dataset %s: want a JSON array of objects (or use .jsonl): %w", path, err)
	}
	var tasks rollout.SliceSource
	for i, rec := range recs {
		t, err := taskOf(rec, f, fmt.Sprintf("%s:%d", filepath.Base(path), i))
		if err != nil {
			return nil, fmt.Errorf("math: dataset %s: record %d: %w", path, i, err)
		}
		tasks = append(tasks, t)
	}
	return nonEmpty(path, tasks)
}

func nonEmpty(path string, tasks rollout.SliceSource) (rollout.SliceSource, error) {
	if len(tasks) == 0 {
		return nil, fmt.Errorf("math: dataset %s: no records (the file is empty or holds only blank lines)", path)
	}
	return tasks, nil
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the object")
	}
	return v, nil
}

// taskOf builds a task from one generic record.
func taskOf(rec any, f Fields, fallbackID string) (rollout.Task, error) {
	if _, ok := rec.(map[string]any); !ok {
		return rollout.Task{}, fmt.Errorf("the record is %s, not an object; a record looks like %s", jsonKind(rec), recordExample)
	}
	qv, qpath, err := firstPath(rec, f.Question, defaultQuestionPaths, "question")
	if err != nil {
		return rollout.Task{}, err
	}
	q, err := scalarText(qv)
	if err != nil {
		return rollout.Task{}, fmt.Errorf("question %q: %w", qpath, err)
	}
	av, apath, err := firstPath(rec, f.Answer, defaultAnswerPaths, "answer")
	if err != nil {
		return rollout.Task{}, err
	}
	t := rollout.Task{ID: fallbackID, Question: q}
	if list, ok := av.([]any); ok {
		for _, x := range list {
			s, err := scalarText(x)
			if err != nil {
				return rollout.Task{}, fmt.Errorf("answer %q: %w", apath, err)
			}
			t.Answers = append(t.Answers, s)
		}
		if len(t.Answers) == 0 {
			return rollout.Task{}, fmt.Errorf("answer %q: the list is empty", apath)
		}
		t.Answer, t.Answers = t.Answers[0], t.Answers[1:]
	} else if t.Answer, err = scalarText(av); err != nil {
		return rollout.Task{}, fmt.Errorf("answer %q: %w", apath, err)
	}
	if f.ID != "" {
		iv, ok := lookup(rec, f.ID)
		if !ok {
			return rollout.Task{}, fmt.Errorf("id %q: missing; fix env.math.fields.id (keys here: %s)", f.ID, keysOf(rec))
		}
		if t.ID, err = scalarText(iv); err != nil {
			return rollout.Task{}, fmt.Errorf("id %q: %w", f.ID, err)
		}
	}
	if strings.TrimSpace(t.Question) == "" {
		return rollout.Task{}, fmt.Errorf("question %q is empty", qpath)
	}
	for _, a := range append([]string{t.Answer}, t.Answers...) {
		if strings.TrimSpace(GoldAnswer(a)) == "" { // no response could match it: every sample would score 0
			return rollout.Task{}, fmt.Errorf("answer %q is empty; every task needs a gold answer to score responses against: fill it in or drop the record", apath)
		}
	}
	// Search-R1 and verl files name their origin (nq, hotpotqa, …)
	if v, ok := lookup(rec, "data_source"); ok {
		if src, err := scalarText(v); err == nil && src != "" {
			t.Meta = map[string]string{"data_source": src}
		}
	}
	return t, nil
}

// firstPath resolves the configured path, or the first default that exists.
func firstPath(rec any, configured string, defaults []string, key string) (any, string, error) {
	paths := defaults
	if configured != "" {
		paths = []string{configured}
	}
	for _, p := range paths {
		if v, ok := lookup(rec, p); ok {
			return v, p, nil
		}
	}
	return nil, "", fmt.Errorf("%s: none of the fields %s is present; set env.math.fields.%s to the right path (keys here: %s)",
		key, strings.Join(paths, ", "), key, keysOf(rec))
}

// lookup follows a dotted path through objects and lists.
func lookup(v any, path string) (any, bool) {
	for _, seg := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[seg]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil {
				return nil, false
			}
			if i < 0 {
				i += len(x)
			}
			if i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, v != nil
}

// scalarText renders a string, number or boolean as text.
func scalarText(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case []byte:
		return string(x), nil
	case json.Number:
		return x.String(), nil
	case bool:
		return strconv.FormatBool(x), nil
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return fmt.Sprint(x), nil
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	}
	return "", fmt.Errorf("is %s, want text or a number", jsonKind(v))
}

// recordExample is what a dataset record looks like, for error messages.
const recordExample = `{"question": "What is 2 + 3?", "answer": "5"}`

// jsonKind names a decoded JSON value's kind as the file spells it.
func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a JSON array"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("a %T", v)
}

func keysOf(rec any) string {
	m, _ := rec.(map[string]any)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

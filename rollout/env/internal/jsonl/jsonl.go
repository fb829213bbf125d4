// Package jsonl reads the JSON Lines dataset files of the cooperative
// environments (writing, coding): one record per non-blank line.
//
// Files: jsonl.go (all of it).
//
// What it is not: a record decoder. Each environment decodes its own
// records; this package only walks the lines, accepts a UTF-8 byte-order
// mark before the first, and names the file and line in the errors it
// makes. ObjectLine is the check a decoder of JSON objects runs first, so
// that a line holding something else is described in the file's terms
// rather than Go's ("cannot unmarshal array into map[string]interface {}").
package jsonl

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"troupe/rollout"
)

// Tasks reads path and returns the task task makes of each non-blank line
// (trimmed; line counts from 1), stopping at the first error it returns.
// env names the environment in the errors; a file without tasks is one.
func Tasks(env, path string, task func(line int, record string) (rollout.Task, error)) (rollout.SliceSource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: dataset: %w", env, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var tasks rollout.SliceSource
	line := 0
	for sc.Scan() {
		line++
		b := sc.Text()
		if line == 1 {
			b = strings.TrimPrefix(b, BOM)
		}
		if b = strings.TrimSpace(b); b == "" {
			continue
		}
		t, err := task(line, b)
		if err != nil {
			return nil, err
		}
		tasks = append(tasks, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: dataset %s: %w", env, path, err)
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("%s: dataset %s has no tasks", env, path)
	}
	return tasks, nil
}

// BOM is the UTF-8 byte-order mark some editors write at the start of a
// text file; a dataset may begin with it.
const BOM = "\ufeff"

// ObjectLine checks that a trimmed line holds a JSON object, by its first
// character; otherwise the error says what the line holds and what a record
// looks like (example).
func ObjectLine(b, example string) error {
	if strings.HasPrefix(b, "{") {
		return nil
	}
	var what string
	switch {
	case strings.HasPrefix(b, "["):
		what = "a JSON array"
	case strings.HasPrefix(b, `"`):
		what = "a JSON string"
	case strings.HasPrefix(b, "true") || strings.HasPrefix(b, "false"):
		what = "a JSON boolean"
	case strings.HasPrefix(b, "null"):
		what = "null"
	case strings.IndexAny(b[:1], "-0123456789") == 0:
		what = "a number"
	default:
		r := []rune(b)
		what = fmt.Sprintf("not JSON (it starts with %q)", string(r[:min(len(r), 12)]))
	}
	return fmt.Errorf("the line is %s, not a JSON object; each line must be one record, an object such as %s", what, example)
}
